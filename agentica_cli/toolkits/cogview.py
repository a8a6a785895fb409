"""CogViewTool: generate an image with ZhipuAI's CogView, save it, return its path."""

from __future__ import annotations

import os
from typing import Any

from agentica_cli.toolkits._image_gen import ImageGenerationTool, api_error, images_data, save_images

ZHIPUAI_BASE_URL = "https://open.bigmodel.cn/api/paas/v4"


class CogViewTool(ImageGenerationTool):
    """`create_image(prompt)` -> the saved file's path, on ZhipuAI's images endpoint.

    Key: `api_key` or ZHIPUAI_API_KEY; endpoint: `base_url` or ZHIPUAI_BASE_URL (default
    ZhipuAI's v4 API). CogView answers with a URL, which is downloaded.
    """

    key_env = "ZHIPUAI_API_KEY"
    key_name = "a ZhipuAI API key"

    def __init__(self, model: str = "cogview-3-flash", size: str = "1024x1024",
                 output_dir: str | os.PathLike[str] = "outputs", *, api_key: str | None = None,
                 base_url: str | None = None, timeout: float = 120.0):
        super().__init__("cogview", model=model, size=size, output_dir=output_dir, api_key=api_key,
                         base_url=base_url, timeout=timeout)

    async def create_image(self, prompt: str) -> str:
        """Generate an image from a text description (Chinese or English) and save it; returns the file path.

        Args:
            prompt: What the image shows, in detail.
        """
        return await self._create(prompt)

    async def _generate(self, body: dict[str, Any]) -> list[str]:
        import httpx

        key = self._key()
        base = (self.base_url or os.environ.get("ZHIPUAI_BASE_URL") or ZHIPUAI_BASE_URL).rstrip("/")
        async with httpx.AsyncClient(timeout=self.timeout) as client:
            response = await client.post(f"{base}/images/generations", headers={"Authorization": f"Bearer {key}"},
                                         json=body)
            if response.status_code != 200:
                raise api_error(response.status_code, response.text, "CogView")
            items = images_data(response.json(), "the CogView")
            return await save_images(items, self.output_dir, "cogview", self.timeout, client)
