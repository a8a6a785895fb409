"""DalleTool: generate an image with OpenAI's images API (DALL-E, gpt-image-1), save it, return its path."""

from __future__ import annotations

import os
from typing import Any

from agentica_cli.tools.base import Tool


class DalleTool(Tool):
    """`create_image(prompt)` -> the saved file's path.

    Key and endpoint: `api_key` / `base_url`, else OPENAI_API_KEY / OPENAI_BASE_URL (any
    server that speaks the OpenAI images API). `response_format`: "b64_json" (the image comes
    in the answer) or "url" (it is downloaded); gpt-image-1 always answers base64, so None
    leaves the field out.
    """

    key_env = "OPENAI_API_KEY"  # for the CLI's /tools state (toolkits.catalog)

    def __init__(self, model: str = "dall-e-3", size: str = "1024x1024", quality: str | None = None, n: int = 1,
                 output_dir: str | os.PathLike[str] = "outputs", *, api_key: str | None = None,
                 base_url: str | None = None, response_format: str | None = "b64_json", timeout: float = 120.0):
        super().__init__(name="dalle")
        self.model = model
        self.size = size
        self.quality = quality
        self.n = n
        self.output_dir = output_dir
        self.api_key = api_key
        self.base_url = base_url
        self.response_format = response_format
        self.timeout = timeout
        self.register(self.create_image)

    def _client(self) -> Any:
        from openai import AsyncOpenAI

        key = self.api_key or os.environ.get("OPENAI_API_KEY")
        if not key:
            raise RuntimeError("DalleTool needs an OpenAI API key: set OPENAI_API_KEY or pass api_key=")
        return AsyncOpenAI(api_key=key, base_url=self.base_url or os.environ.get("OPENAI_BASE_URL") or None,
                           timeout=self.timeout, max_retries=1)

    async def create_image(self, prompt: str) -> str:
        """Generate an image from a text description and save it; returns the file path.

        Args:
            prompt: What the image shows, in detail (style, subject, composition).
        """
        import openai

        from agentica_cli.toolkits._image_gen import api_error, save_images

        if not prompt.strip():
            raise ValueError("prompt is empty.")
        body: dict[str, Any] = {"model": self.model, "prompt": prompt, "n": self.n, "size": self.size}
        if self.quality:
            body["quality"] = self.quality
        if self.response_format:
            body["response_format"] = self.response_format
        client = self._client()
        try:
            # The SDK's HTTP layer (auth, errors) with the body as given: servers differ in what they accept.
            answer = await client.post("/images/generations", body=body, cast_to=object)
        except openai.APIStatusError as err:
            raise api_error(err.status_code, err.response.text, "the images API") from None
        finally:
            await client.close()
        items = answer.get("data") if isinstance(answer, dict) else None
        if not isinstance(items, list):
            raise RuntimeError("the images API answer has no data list")
        return "\n".join(await save_images(items, self.output_dir, "dalle", self.timeout))
