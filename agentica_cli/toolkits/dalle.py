"""DalleTool: generate an image with OpenAI's images API (DALL-E, gpt-image-1), save it, return its path."""

from __future__ import annotations

import os
from typing import Any

from agentica_cli.toolkits._image_gen import ImageGenerationTool, api_error, images_data, save_images


class DalleTool(ImageGenerationTool):
    """`create_image(prompt)` -> the saved file's path.

    Key and endpoint: `api_key` / `base_url`, else OPENAI_API_KEY / OPENAI_BASE_URL (any
    server that speaks the OpenAI images API). `response_format`: "b64_json" (the image comes
    in the answer) or "url" (it is downloaded); gpt-image-1 always answers base64, so None
    leaves the field out.
    """

    key_env = "OPENAI_API_KEY"
    key_name = "an OpenAI API key"

    def __init__(self, model: str = "dall-e-3", size: str = "1024x1024", quality: str | None = None, n: int = 1,
                 output_dir: str | os.PathLike[str] = "outputs", *, api_key: str | None = None,
                 base_url: str | None = None, response_format: str | None = "b64_json", timeout: float = 120.0):
        self.quality = quality
        self.n = n
        self.response_format = response_format
        super().__init__("dalle", model=model, size=size, output_dir=output_dir, api_key=api_key,
                         base_url=base_url, timeout=timeout)

    def _client(self) -> Any:
        from openai import AsyncOpenAI

        return AsyncOpenAI(api_key=self._key(), base_url=self.base_url or os.environ.get("OPENAI_BASE_URL") or None,
                           timeout=self.timeout, max_retries=1)

    def _body(self, prompt: str) -> dict[str, Any]:
        body = {**super()._body(prompt), "n": self.n}
        if self.quality:
            body["quality"] = self.quality
        if self.response_format:
            body["response_format"] = self.response_format
        return body

    async def create_image(self, prompt: str) -> str:
        """Generate an image from a text description and save it; returns the file path.

        Args:
            prompt: What the image shows, in detail (style, subject, composition).
        """
        return await self._create(prompt)

    async def _generate(self, body: dict[str, Any]) -> list[str]:
        import openai

        client = self._client()
        try:
            # The SDK's HTTP layer (auth, errors) with the body as given: servers differ in what they accept.
            answer = await client.post("/images/generations", body=body, cast_to=object)
        except openai.APIStatusError as err:
            raise api_error(err.status_code, err.response.text, "the images API") from None
        finally:
            await client.close()
        return await save_images(images_data(answer, "the images API"), self.output_dir, "dalle", self.timeout)
