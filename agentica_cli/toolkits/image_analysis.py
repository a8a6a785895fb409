"""ImageAnalysisTool: describe an image, or answer a question about it, with a vision model."""

from __future__ import annotations

import os
from typing import Any

from agentica_cli.tools.base import Tool
from agentica_cli.tools.context import ToolContext

DEFAULT_QUESTION = "Describe this image in detail: what it shows, any text in it, anything unusual."


class ImageAnalysisTool(Tool):
    """`analyze_image(image, question)`: the image (a file under `work_dir`, or an http(s) URL)
    goes to a vision model as an `image_url` part (a file as a base64 data URL, fitted to the
    providers' limits) with the question; the model's answer is the result.

    model: the vision model to ask (an agentica model client); None: the agent's own model.
    """

    extra = "images"  # Pillow scales large files down; smaller ones go as they are
    extra_modules = ("PIL",)
    extra_optional = True

    def __init__(self, model: Any = None, work_dir: str | os.PathLike[str] = ".", *,
                 allowed_dirs: tuple[str, ...] = ()):
        super().__init__(name="image_analysis")
        from agentica_cli.tools.local.paths import PathSandbox

        self.model = model
        self.paths = PathSandbox(work_dir, allowed_dirs)
        self.register(self.analyze_image, is_read_only=True, concurrency_safe=True)

    async def analyze_image(self, image: str, question: str = "", ctx: ToolContext = None) -> str:  # type: ignore[assignment]
        """Look at an image file or URL and describe it or answer a question about it.

        Args:
            image: Path of a PNG/JPEG/GIF/WebP file, or an http(s) URL of an image.
            question: What to find out (default: a detailed description).
        """
        model = self.model or getattr(getattr(ctx, "agent", None), "model", None)
        if model is None:
            raise RuntimeError("no model to look at the image: pass ImageAnalysisTool(model=...) or use it in an agent")
        if image.startswith(("https://", "http://")):
            part: dict[str, Any] = {"type": "image_url", "image_url": {"url": image}}
            shown = image
        else:
            from agentica_cli.images import prepare
            from agentica_cli.toolkits._support import read_bytes

            data, shown = read_bytes(self.paths, image)
            part = prepare(data, shown).part()
        messages = [{"role": "user", "content": [{"type": "text", "text": question or DEFAULT_QUESTION}, part]}]
        response = await model.response(messages)
        return response.content or f"(the model said nothing about {shown})"
