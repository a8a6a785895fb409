"""An ACP prompt (text, resource links, embedded resources, images) as one user message.

Text and context become one string; images become OpenAI-style `image_url` parts, in which
case the message content is a list of parts instead of a string.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote, urlparse

IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")


def uri_path(uri: str) -> str:
    """A file:// URI as a path; any other URI as it is."""
    parsed = urlparse(uri)
    return unquote(parsed.path) if parsed.scheme == "file" else uri


def prompt_content(blocks: list[Any]) -> str | list[dict[str, Any]]:
    texts: list[str] = []
    images: list[dict[str, Any]] = []
    for block in blocks:
        kind = getattr(block, "type", "")
        if kind == "text":
            texts.append(block.text)
        elif kind == "resource_link":
            texts.append(f"[@{block.name}]({block.uri}) (referenced: {uri_path(block.uri)}; read it if you need it)")
        elif kind == "resource":
            resource = block.resource
            text = getattr(resource, "text", None)
            if isinstance(text, str):
                texts.append(f'<context ref="{uri_path(resource.uri)}">\n{text}\n</context>')
            elif (resource.mime_type or "") in IMAGE_TYPES:
                images.append(_image_part(resource.blob, resource.mime_type))
            else:
                texts.append(f"(attached binary resource {resource.uri} was left out)")
        elif kind == "image":
            images.append(_image_part(block.data, block.mime_type))
        elif kind == "audio":
            texts.append("(attached audio was left out: not supported)")
    text = "\n\n".join(t for t in texts if t)
    if not images:
        return text
    return [{"type": "text", "text": text}, *images] if text else images


def _image_part(data: str, mime_type: str | None) -> dict[str, Any]:
    return {"type": "image_url", "image_url": {"url": f"data:{mime_type or 'image/png'};base64,{data}"}}


def content_text(content: Any) -> str:
    """The text of a message's content, whether a string or a list of parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(p.get("text", "") for p in content if isinstance(p, dict) and p.get("type") == "text")
    return ""
