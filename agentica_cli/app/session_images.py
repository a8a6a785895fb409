"""Images in session files: their bytes stored once as files beside the session, referenced
from its lines.

An image part in a message is a data URL (`data:image/png;base64,...`): a pasted 5 MB
screenshot is ~7 MB of text, written into the message's line and again into every `history`
line after a compaction, and read back on every resume and `sessions list`. In the file the
part reads instead

    {"type": "image_url", "image_url": {"file": "<sha256>.png", "mime": "image/png"}}

with the bytes in `<sessions>/<id>.images/<sha256>.png` (0600, in a 0700 folder; one file
per distinct image, however often it is recorded). Loading the session puts the data URL
back, so the model gets the same request as before. Sessions written before this keep their
data URLs, which load as they are.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import os
from pathlib import Path
from typing import Any

from agentica_cli.private_files import open_private, private_dir

SUFFIXES = {"image/png": ".png", "image/jpeg": ".jpg", "image/gif": ".gif", "image/webp": ".webp"}
MISSING = "[an image of this session is missing: {name} is no longer in {folder}]"


def images_dir(session_path: Path) -> Path:
    """Where the images of the session file `session_path` are kept."""
    return session_path.with_suffix(".images")


def _store(url: str, folder: Path) -> dict[str, str] | None:
    """Write the image of a base64 data URL to `folder` (once: named by its hash); its
    reference, or None when `url` is not a base64 image data URL (kept as it is)."""
    head, comma, payload = url.partition(",")
    if not comma or not head.startswith("data:image/") or not head.endswith(";base64"):
        return None
    mime = head[len("data:"):-len(";base64")]
    try:
        raw = base64.b64decode(payload, validate=True)
    except (binascii.Error, ValueError):
        return None
    name = hashlib.sha256(raw).hexdigest()[:32] + SUFFIXES.get(mime, ".img")
    path = folder / name
    if not path.exists():
        private_dir(folder)
        tmp = folder / f".{name}.tmp{os.getpid()}"
        with open_private(tmp, "wb") as fh:
            fh.write(raw)
        os.replace(tmp, path)  # a reader never finds half an image under the final name
    return {"file": name, "mime": mime}


def _externalized(message: Any, folder: Path, known: dict[str, dict[str, str]]) -> Any:
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, list):
        return message
    parts: list[Any] = []
    changed = False
    for part in content:
        image = part.get("image_url") if isinstance(part, dict) and part.get("type") == "image_url" else None
        url = image.get("url") if isinstance(image, dict) else None
        if isinstance(url, str) and url.startswith("data:"):
            ref = known.get(url)
            if ref is None:
                ref = _store(url, folder)
                if ref is not None:
                    known[url] = ref
            if ref is not None:
                rest = {k: v for k, v in image.items() if k != "url"}  # e.g. "detail"
                part = {**part, "image_url": {**rest, **ref}}
                changed = True
        parts.append(part)
    return {**message, "content": parts} if changed else message


def externalize(entry: dict[str, Any], folder: Path, known: dict[str, dict[str, str]]) -> dict[str, Any]:
    """A session line's `entry` with every image data URL replaced by a reference to its file
    in `folder`. `known` (data URL -> reference) saves decoding an image again when the same
    message is recorded again (a compaction's history). The messages in memory are not changed."""
    if entry.get("type") == "message":
        message = _externalized(entry.get("message"), folder, known)
        return entry if message is entry.get("message") else {**entry, "message": message}
    if entry.get("type") == "history" and isinstance(entry.get("messages"), list):
        messages = [_externalized(m, folder, known) for m in entry["messages"]]
        return {**entry, "messages": messages}
    return entry


def _resolved_part(part: Any, folder: Path) -> Any:
    image = part.get("image_url") if isinstance(part, dict) and part.get("type") == "image_url" else None
    if not isinstance(image, dict) or "file" not in image or "url" in image:
        return part
    name = Path(str(image["file"])).name  # a name, never a path: the line may have been edited
    rest = {k: v for k, v in image.items() if k not in ("file", "mime")}
    try:
        raw = (folder / name).read_bytes()
    except OSError:
        return {"type": "text", "text": MISSING.format(name=name, folder=folder)}
    url = f"data:{image.get('mime') or 'image/png'};base64,{base64.b64encode(raw).decode('ascii')}"
    return {**part, "image_url": {**rest, "url": url}}


def resolve(messages: list[dict[str, Any]], folder: Path) -> list[dict[str, Any]]:
    """`messages` with every image reference turned back into its data URL (a missing file
    becomes a text part saying so)."""
    out = []
    for message in messages:
        content = message.get("content")
        if isinstance(content, list) and any(isinstance(p, dict) and p.get("type") == "image_url" for p in content):
            message = {**message, "content": [_resolved_part(p, folder) for p in content]}
        out.append(message)
    return out
