"""Image generation toolkits' common part: `ImageGenerationTool` (the settings, the key, the
request body, the `create_image` flow of DalleTool and CogViewTool), and saving what an images
API returned (OpenAI's `data: [{b64_json | url, revised_prompt}]`, which ZhipuAI's CogView also
speaks) as files."""

from __future__ import annotations

import base64
import os
from typing import Any

from agentica_cli.toolkits._support import output_path
from agentica_cli.tools.base import Tool

MAX_DOWNLOAD_BYTES = 50 * 1024 * 1024


async def save_images(items: list[dict[str, Any]], folder: str | os.PathLike[str], stem: str,
                      timeout: float = 60.0, client: Any = None) -> list[str]:
    """Write each returned image (base64 or a URL to fetch, with `client`: an httpx.AsyncClient,
    or a new one) under `folder`; the paths, and a line for each revised prompt."""
    from agentica_cli.images import sniff_mime

    lines: list[str] = []
    for item in items:
        if item.get("b64_json"):
            data = base64.b64decode(item["b64_json"])
        elif item.get("url"):
            data = await _download(item["url"], timeout, client)
        else:
            raise ValueError("the images API returned an entry with neither b64_json nor url")
        suffix = {"image/jpeg": ".jpg", "image/webp": ".webp", "image/gif": ".gif"}.get(sniff_mime(data) or "", ".png")
        path = output_path(folder, stem, suffix)
        path.write_bytes(data)
        lines.append(str(path))
        if item.get("revised_prompt"):
            lines.append(f"  revised prompt: {item['revised_prompt']}")
    if not lines:
        raise ValueError("the images API returned no image")
    return lines


async def _download(url: str, timeout: float, client: Any = None) -> bytes:
    import httpx

    if not url.startswith(("https://", "http://")):
        raise ValueError(f"the images API returned a URL that is not http(s): {url[:80]}")
    if client is None:
        async with httpx.AsyncClient(timeout=timeout) as own:
            return await _download(url, timeout, own)
    async with client.stream("GET", url, follow_redirects=True) as response:
        response.raise_for_status()
        chunks, size = [], 0
        async for chunk in response.aiter_bytes():
            size += len(chunk)
            if size > MAX_DOWNLOAD_BYTES:
                raise ValueError(f"the generated image at {url[:80]} is over {MAX_DOWNLOAD_BYTES >> 20} MB")
            chunks.append(chunk)
    return b"".join(chunks)


def api_error(status: int, body: str, service: str) -> RuntimeError:
    detail = body.strip()[:300]
    try:
        import json

        payload = json.loads(body)
        inner = payload.get("error", payload) if isinstance(payload, dict) else payload
        if isinstance(inner, dict) and inner.get("message"):
            detail = str(inner["message"])
    except ValueError:
        pass
    hint = " (check the API key)" if status in (401, 403) else ""
    return RuntimeError(f"{service} answered HTTP {status}: {detail}{hint}")


class ImageGenerationTool(Tool):
    """`create_image(prompt)` on an OpenAI-style images endpoint: the image is saved under
    `output_dir` and its path returned. A subclass names its key variable and sends the request
    (`_generate`); its own `create_image` carries the description the model reads."""

    key_env = ""  # the variable the key comes from (also the CLI's /tools state: toolkits.catalog)
    key_name = "an API key"  # for the missing-key message: "an OpenAI API key"

    def __init__(self, name: str, *, model: str, size: str, output_dir: str | os.PathLike[str],
                 api_key: str | None, base_url: str | None, timeout: float):
        super().__init__(name=name)
        self.model = model
        self.size = size
        self.output_dir = output_dir
        self.api_key = api_key
        self.base_url = base_url
        self.timeout = timeout
        self.register(self.create_image)

    async def create_image(self, prompt: str) -> str:
        raise NotImplementedError

    def _key(self) -> str:
        key = self.api_key or os.environ.get(self.key_env)
        if not key:
            raise RuntimeError(f"{type(self).__name__} needs {self.key_name}: set {self.key_env} or pass api_key=")
        return key

    def _body(self, prompt: str) -> dict[str, Any]:
        return {"model": self.model, "prompt": prompt, "size": self.size}

    async def _generate(self, body: dict[str, Any]) -> list[str]:
        """Send `body`, save the images; the lines `save_images` returns."""
        raise NotImplementedError

    async def _create(self, prompt: str) -> str:
        if not prompt.strip():
            raise ValueError("prompt is empty.")
        return "\n".join(await self._generate(self._body(prompt)))


def images_data(answer: Any, service: str) -> list[dict[str, Any]]:
    """The `data` list of an images API answer."""
    items = answer.get("data") if isinstance(answer, dict) else None
    if not isinstance(items, list):
        raise RuntimeError(f"{service} answer has no data list")
    return items
