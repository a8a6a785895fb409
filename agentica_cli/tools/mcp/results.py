"""An MCP `CallToolResult` as the text the model reads.

Text blocks are joined; images, audio and binary resources are summarised in one line
(the chat API a tool result goes back through carries text only); embedded text resources
are included with their URI. A result with no content but structured content is JSON.
"""

from __future__ import annotations

import base64
import json
from typing import Any


def _size(data: str) -> str:
    """Human size of base64 `data` once decoded."""
    try:
        n = len(base64.b64decode(data, validate=False))
    except (ValueError, TypeError):
        n = len(data) * 3 // 4
    return f"{n} bytes" if n < 1024 else f"{n / 1024:.1f} KB"


def render_block(block: Any) -> str:
    kind = getattr(block, "type", None)
    if kind == "text":
        return block.text
    if kind == "image":
        return f"[image: {block.mime_type}, {_size(block.data)}]"
    if kind == "audio":
        return f"[audio: {block.mime_type}, {_size(block.data)}]"
    if kind == "resource":
        resource = block.resource
        mime = getattr(resource, "mime_type", None)
        text = getattr(resource, "text", None)
        if text is not None:
            return f"[resource: {resource.uri}{', ' + mime if mime else ''}]\n{text}"
        return f"[resource: {resource.uri}, {mime or 'binary'}, {_size(resource.blob)}]"
    if kind == "resource_link":
        parts = [f"[resource link: {block.name} <{block.uri}>"]
        if getattr(block, "mime_type", None):
            parts.append(f", {block.mime_type}")
        parts.append("]")
        if getattr(block, "description", None):
            parts.append(f" {block.description}")
        return "".join(parts)
    return f"[{kind or type(block).__name__} content]"


def render_result(result: Any) -> str:
    """The text of a CallToolResult (for errors too: the message is in its content)."""
    parts = [render_block(block) for block in result.content or ()]
    if not parts and getattr(result, "structured_content", None) is not None:
        return json.dumps(result.structured_content, ensure_ascii=False, default=str)
    return "\n".join(parts)


def render_resource(result: Any) -> str:
    """The text of a ReadResourceResult: each part's text, binary parts summarised."""
    parts = []
    for part in result.contents or ():
        text = getattr(part, "text", None)
        if text is not None:
            parts.append(text)
        else:
            mime = getattr(part, "mime_type", None) or "binary"
            parts.append(f"[resource: {part.uri}, {mime}, {_size(getattr(part, 'blob', '') or '')}]")
    return "\n".join(parts)


def with_images(text: str, result: Any) -> Any:
    """`text`, or an ImageResult when the result has image blocks the model can be shown.
    An image that cannot be sent (not an image, too large without Pillow) stays a summary line."""
    blocks = [b for b in result.content or () if getattr(b, "type", None) == "image"]
    if not blocks:
        return text
    from agentica_cli.images import ImageError, ImageResult, from_base64

    images = []
    for number, block in enumerate(blocks, 1):
        try:
            images.append(from_base64(block.data, f"image {number} ({block.mime_type})"))
        except ImageError:
            continue
    return ImageResult(text, images) if images else text
