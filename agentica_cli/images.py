"""Images in the conversation: load, fit to provider limits, encode as `image_url` parts.

A chat completions request carries an image as a content part
`{"type": "image_url", "image_url": {"url": "data:image/png;base64,..."}}` in a user
message (tool messages carry text only, so an image a tool returns follows its result as a
user message; see agent/executor.py). Images larger than the providers take are scaled down
and re-encoded with Pillow (the `images` extra); without Pillow an image already within the
limits is sent as it is and a larger one is refused with a clear message.

Standard library only at import time: the CLI, the agent and the tools all import this.
"""

from __future__ import annotations

import base64
import io
import math
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

# The strictest common limits: Anthropic-compatible gateways take 5 MB and 8000 px, OpenAI
# 20 MB but scales every image to fit 2048 px anyway; sending more only costs upload time.
MAX_SIDE = 2048
MAX_BYTES = 5 * 1024 * 1024
IMAGE_SUFFIXES = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif",
                  ".webp": "image/webp"}
# Model ids (lower case) that take images; any id can be declared with `vision = true`.
_VISION_HINTS = ("gpt-4o", "gpt-4.1", "gpt-4-turbo", "gpt-5", "o3", "o4", "vision", "-vl", "vl-", "4v", "5v",
                 "claude", "gemini", "pixtral", "llava", "qwen-vl", "qwen2.5-vl", "qwen3-vl", "glm-4.5v",
                 "glm-4.1v", "kimi-vl", "grok-4", "llama-4", "gemma-3", "minicpm-v", "moondream")


class ImageError(ValueError):
    """An image that cannot be sent; the message says why and what to do."""


@dataclass
class Image:
    """One image ready to send: encoded bytes, their MIME type and pixel size."""

    data: bytes
    mime: str
    width: int = 0
    height: int = 0
    name: str = ""  # where it came from (a path, a URL, a tool), for people
    note: str = ""  # what was done to it (scaled, re-encoded)

    @property
    def data_url(self) -> str:
        return f"data:{self.mime};base64,{base64.b64encode(self.data).decode('ascii')}"

    def part(self) -> dict[str, Any]:
        """The chat completions content part."""
        return {"type": "image_url", "image_url": {"url": self.data_url}}

    @property
    def tokens(self) -> int:
        return image_tokens(self.width, self.height)

    def describe(self) -> str:
        """For people: `shot.png: 1280x720 PNG, 245.1 KB, ~765 tokens (scaled from 4000x3000)`."""
        size = f"{self.width}x{self.height} " if self.width else ""
        kind = self.mime.split("/")[-1].upper()
        extra = f" ({self.note})" if self.note else ""
        return f"{self.name or 'image'}: {size}{kind}, {_human(len(self.data))}, ~{self.tokens} tokens{extra}"


@dataclass
class ImageResult:
    """A tool result with images: `text` goes to the model as the tool's result, the images
    follow it when the model takes images (else a note says they were left out)."""

    text: str
    images: list[Image] = field(default_factory=list)

    def __str__(self) -> str:
        return self.text


def _human(size: int) -> str:
    return f"{size} B" if size < 1024 else f"{size / 1024:.1f} KB" if size < 1 << 20 else f"{size / (1 << 20):.1f} MB"


def image_tokens(width: int, height: int) -> int:
    """What an image costs in input tokens, by OpenAI's high-detail rule: fit in 2048x2048,
    shortest side to 768, then 170 a 512-px tile plus 85 (other providers are close)."""
    if width <= 0 or height <= 0:
        return 765  # unknown size: a typical screenshot
    scale = min(1.0, 2048 / max(width, height))
    w, h = width * scale, height * scale
    scale = min(1.0, 768 / min(w, h))
    w, h = w * scale, h * scale
    return 170 * math.ceil(w / 512) * math.ceil(h / 512) + 85


def sniff_mime(data: bytes) -> str | None:
    """The image type from the file's first bytes (a name's suffix can lie)."""
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if data[:6] in (b"GIF87a", b"GIF89a"):
        return "image/gif"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None


def is_image_path(path: str | os.PathLike[str]) -> bool:
    return os.path.splitext(os.fspath(path))[1].lower() in IMAGE_SUFFIXES


def _pixel_size(data: bytes, mime: str) -> tuple[int, int]:
    """Width and height from the header alone (PNG, GIF, JPEG, WebP), 0x0 when unknown."""
    try:
        if mime == "image/png" and len(data) >= 24:
            return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
        if mime == "image/gif" and len(data) >= 10:
            return int.from_bytes(data[6:8], "little"), int.from_bytes(data[8:10], "little")
        if mime == "image/jpeg":
            i = 2
            while i + 9 < len(data):
                if data[i] != 0xFF:
                    i += 1
                    continue
                marker, length = data[i + 1], int.from_bytes(data[i + 2:i + 4], "big")
                if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
                    return int.from_bytes(data[i + 7:i + 9], "big"), int.from_bytes(data[i + 5:i + 7], "big")
                i += 2 + length
        if mime == "image/webp" and len(data) >= 30:
            chunk = data[12:16]
            if chunk == b"VP8X":
                return 1 + int.from_bytes(data[24:27], "little"), 1 + int.from_bytes(data[27:30], "little")
            if chunk == b"VP8 ":
                return int.from_bytes(data[26:28], "little") & 0x3FFF, int.from_bytes(data[28:30], "little") & 0x3FFF
            if chunk == b"VP8L":
                bits = int.from_bytes(data[21:25], "little")
                return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    except (IndexError, ValueError):
        pass
    return 0, 0


def prepare(data: bytes, name: str = "", *, max_side: int = MAX_SIDE, max_bytes: int = MAX_BYTES) -> Image:
    """An Image from encoded bytes, scaled down and re-encoded to fit `max_side` px and
    `max_bytes` when it does not (Pillow needed then); raises ImageError."""
    mime = sniff_mime(data)
    if mime is None:
        raise ImageError(f"{name or 'the data'} is not a PNG, JPEG, GIF or WebP image.")
    width, height = _pixel_size(data, mime)
    if width and max(width, height) <= max_side and len(data) <= max_bytes:
        return Image(data, mime, width, height, name)
    try:
        from PIL import Image as PILImage
    except ImportError:
        raise ImageError(
            f"{name or 'the image'} ({width}x{height}, {_human(len(data))}) is over the {max_side} px / "
            f"{_human(max_bytes)} limit and Pillow is not installed to scale it down: "
            "pip install 'agentica-cli[images]', or send a smaller image."
        ) from None
    return _fit(PILImage, data, mime, name, max_side, max_bytes)


def _fit(pil: Any, data: bytes, mime: str, name: str, max_side: int, max_bytes: int) -> Image:
    try:
        img = pil.open(io.BytesIO(data))
        img.load()
    except Exception as exc:  # Pillow raises many types for broken files
        raise ImageError(f"{name or 'the image'} cannot be decoded: {exc}") from None
    original = img.size
    if getattr(img, "is_animated", False):
        img.seek(0)  # the first frame: providers read no animation
    if max(img.size) > max_side:
        scale = max_side / max(img.size)
        img = img.resize((max(1, round(img.width * scale)), max(1, round(img.height * scale))), pil.LANCZOS)
    has_alpha = img.mode in ("RGBA", "LA", "P") and mime != "image/jpeg"
    notes = [f"scaled from {original[0]}x{original[1]}"] if img.size != original else []
    # PNG keeps screenshots sharp; then JPEG at falling quality; then smaller, until it fits.
    out = io.BytesIO()
    if has_alpha or mime == "image/png":
        img.save(out, "PNG")
        if out.tell() <= max_bytes:
            return Image(out.getvalue(), "image/png", img.width, img.height, name, "; ".join(notes))
    rgb = img.convert("RGB")
    for shrink in (1.0, 0.7, 0.5, 0.35, 0.25):
        sized = rgb if shrink == 1.0 else rgb.resize(
            (max(1, round(rgb.width * shrink)), max(1, round(rgb.height * shrink))), pil.LANCZOS)
        for quality in (85, 70, 50):
            out = io.BytesIO()
            sized.save(out, "JPEG", quality=quality)
            if out.tell() <= max_bytes:
                if sized.size != original and not notes:
                    notes.append(f"scaled from {original[0]}x{original[1]}")
                elif sized.size != img.size:
                    notes[0] = f"scaled from {original[0]}x{original[1]}"
                if mime != "image/jpeg" or quality != 85:
                    notes.append(f"re-encoded as JPEG q{quality}")
                return Image(out.getvalue(), "image/jpeg", sized.width, sized.height, name, "; ".join(notes))
    raise ImageError(f"{name or 'the image'} is still over {_human(max_bytes)} after compression.")


def load(path: str | os.PathLike[str], *, max_side: int = MAX_SIDE, max_bytes: int = MAX_BYTES) -> Image:
    """An image file, ready to send; raises ImageError (also for a missing file)."""
    path = os.path.expanduser(os.fspath(path))
    try:
        with open(path, "rb") as f:
            data = f.read(64 * 1024 * 1024 + 1)
    except OSError as err:
        raise ImageError(f"cannot read image {path}: {err.strerror or err}") from None
    if len(data) > 64 * 1024 * 1024:
        raise ImageError(f"{path} is over 64 MB; not an image to send to a model.")
    return prepare(data, os.path.basename(path), max_side=max_side, max_bytes=max_bytes)


def from_base64(data: str, name: str = "", **limits: Any) -> Image:
    try:
        raw = base64.b64decode(data, validate=False)
    except (ValueError, TypeError):
        raise ImageError(f"{name or 'the image'} is not valid base64.") from None
    return prepare(raw, name, **limits)


def user_content(text: str, images: Sequence[Image]) -> str | list[dict[str, Any]]:
    """A user message's content: the text alone, or text and image parts."""
    if not images:
        return text
    return [{"type": "text", "text": text}, *(image.part() for image in images)]


def is_image_part(part: Any) -> bool:
    return isinstance(part, dict) and part.get("type") == "image_url"


def content_text(content: Any) -> str:
    """The text of a message's content, images as `[image]` (for transcripts and titles)."""
    if isinstance(content, str) or content is None:
        return content or ""
    if isinstance(content, list):
        return "\n".join("[image]" if is_image_part(p) else str(p.get("text", "")) if isinstance(p, dict) else str(p)
                         for p in content)
    return str(content)


def content_image_tokens(content: Any) -> tuple[int, int]:
    """(estimated image tokens, characters of data URLs) in a message's content."""
    if not isinstance(content, list):
        return 0, 0
    tokens = chars = 0
    for part in content:
        if is_image_part(part):
            url = str((part.get("image_url") or {}).get("url", ""))
            chars += len(url)
            head = url.partition(",")
            width = height = 0
            if head[0].startswith("data:") and head[1]:
                try:
                    raw = base64.b64decode(head[2][:400] + "=" * (-len(head[2][:400]) % 4))
                    width, height = _pixel_size(raw, sniff_mime(raw) or "")
                except (ValueError, TypeError):
                    pass
            tokens += image_tokens(width, height)
    return tokens, chars


def supports_vision(model: Any) -> bool:
    """Whether `model` takes images: its `vision` attribute (config `model.vision`) when set,
    else a guess from its id (gpt-4o, claude, gemini, *-vl, glm-4.5v, ...)."""
    declared = getattr(model, "vision", None)
    if declared is not None:
        return bool(declared)
    model_id = str(getattr(model, "id", "") or "").lower()
    return any(hint in model_id for hint in _VISION_HINTS)


def describe_all(images: Iterable[Image]) -> str:
    return "; ".join(image.describe() for image in images)
