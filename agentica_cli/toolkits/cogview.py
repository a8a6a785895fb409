"""CogViewTool: generate an image with ZhipuAI's CogView, save it, return its path."""

from __future__ import annotations

import os

from agentica_cli.tools.base import Tool

ZHIPUAI_BASE_URL = "https://open.bigmodel.cn/api/paas/v4"


class CogViewTool(Tool):
    """`create_image(prompt)` -> the saved file's path, on ZhipuAI's images endpoint.

    Key: `api_key` or ZHIPUAI_API_KEY; endpoint: `base_url` or ZHIPUAI_BASE_URL (default
    ZhipuAI's v4 API). CogView answers with a URL, which is downloaded.
    """

    key_env = "ZHIPUAI_API_KEY"  # for the CLI's /tools state (toolkits.catalog)

    def __init__(self, model: str = "cogview-3-flash", size: str = "1024x1024",
                 output_dir: str | os.PathLike[str] = "outputs", *, api_key: str | None = None,
                 base_url: str | None = None, timeout: float = 120.0):
        super().__init__(name="cogview")
        self.model = model
        self.size = size
        self.output_dir = output_dir
        self.api_key = api_key
        self.base_url = base_url
        self.timeout = timeout
        self.register(self.create_image)

    async def create_image(self, prompt: str) -> str:
        """Generate an image from a text description (Chinese or English) and save it; returns the file path.

        Args:
            prompt: What the image shows, in detail.
        """
        import httpx

        from agentica_cli.toolkits._image_gen import api_error, save_images

        if not prompt.strip():
            raise ValueError("prompt is empty.")
        key = self.api_key or os.environ.get("ZHIPUAI_API_KEY")
        if not key:
            raise RuntimeError("CogViewTool needs a ZhipuAI API key: set ZHIPUAI_API_KEY or pass api_key=")
        base = (self.base_url or os.environ.get("ZHIPUAI_BASE_URL") or ZHIPUAI_BASE_URL).rstrip("/")
        async with httpx.AsyncClient(timeout=self.timeout) as client:
            response = await client.post(f"{base}/images/generations", headers={"Authorization": f"Bearer {key}"},
                                         json={"model": self.model, "prompt": prompt, "size": self.size})
            if response.status_code != 200:
                raise api_error(response.status_code, response.text, "CogView")
            items = response.json().get("data")
            if not isinstance(items, list):
                raise RuntimeError("the CogView answer has no data list")
            return "\n".join(await save_images(items, self.output_dir, "cogview", self.timeout, client))
