"""A conversation written out, for `/export [FILE] [--json] [--force]` (and any front end).

Markdown: a heading per turn (`## You`, `## Agent`), the model's text as it wrote it, every
tool call with its arguments (a command as a `bash` block), the diff of each edit (a unified
diff of the strings it replaced, or a new file's content) and each result. JSON: the
messages as they are stored (the OpenAI chat format the session file keeps), with the same
diffs by call id, for scripts.

The file is written through the path sandbox (`agentica_cli.tools.local.paths.PathSandbox`): inside the
project or an --add-dir folder, opened beneath its root without following symlinks, created
exclusively. An existing file is never replaced unless the caller says `overwrite` (the REPL's
`--force`), and then it says it replaced it. The default name is new in the project folder.
"""

from __future__ import annotations

import difflib
import json
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentica_cli.app.session_views.tool_calls import calls_by_id

EXPORT_FORMAT = "agentica-conversation"
EXPORT_VERSION = 1


@dataclass(frozen=True)
class ExportMeta:
    session_id: str | None
    work_dir: str
    model: str


@dataclass(frozen=True)
class Exported:
    path: Path
    replaced: bool  # an existing file was overwritten (asked for)
    messages: int


class ExportError(Exception):
    """Why the export was not written (outside the project, exists, unwritable)."""


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, dict) and part.get("type") == "text":
                parts.append(str(part.get("text", "")))
            elif isinstance(part, dict):
                parts.append("[image]")
        return "\n".join(parts)
    return ""


def _fence(body: str, language: str = "") -> str:
    """`body` in a code fence longer than any run of backticks inside it."""
    longest = run = 0
    for char in body:
        run = run + 1 if char == "`" else 0
        longest = max(longest, run)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{language}\n{body.rstrip(chr(10))}\n{fence}"


def _first(args: dict[str, Any], *keys: str) -> Any:
    return next((args[key] for key in keys if key in args), None)


def edit_diff(name: str, args: dict[str, Any]) -> str | None:
    """A unified diff of what an edit call changed (its replaced strings; a written file's
    whole content), or None for a call that is not an edit."""
    path = _first(args, "file_path", "path", "filename")
    if not isinstance(path, str):
        return None
    content = _first(args, "content", "file_text", "text")
    pairs: list[tuple[str, str]] = []
    if isinstance(content, str):
        pairs.append(("", content))
    else:
        listed = args.get("edits")
        edits = listed if isinstance(listed, list) else [args]
        for edit in edits:
            if isinstance(edit, dict):
                old = _first(edit, "old_string", "old_str", "old_text", "old")
                new = _first(edit, "new_string", "new_str", "new_text", "new")
                if isinstance(old, str) and isinstance(new, str):
                    pairs.append((old, new))
    if not pairs:
        return None
    old_name = "/dev/null" if isinstance(content, str) else f"a/{path}"
    chunks = []
    for old, new in pairs:
        lines = difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True), old_name,
                                     f"b/{path}", n=3)
        chunks.append("".join(line if line.endswith("\n") else line + "\n" for line in lines))
    return "".join(chunks) or None


def diffs_by_call(messages: Sequence[dict[str, Any]]) -> dict[str, str]:
    out: dict[str, str] = {}
    for call_id, (name, args) in calls_by_id(messages).items():
        diff = edit_diff(name, args)
        if diff:
            out[call_id] = diff
    return out


def to_markdown(messages: Sequence[dict[str, Any]], meta: ExportMeta) -> str:
    calls = calls_by_id(messages)
    out = [f"# agentica conversation{f' {meta.session_id}' if meta.session_id else ''}", "",
           f"- project: `{meta.work_dir}`", f"- model: `{meta.model}`",
           f"- exported: {time.strftime('%Y-%m-%d %H:%M:%S %z')}", ""]
    last_role = ""
    for message in messages:
        role = message.get("role")
        text = _text_of(message.get("content")).strip()
        if role == "system":
            continue
        if role == "user":
            out += ["## You", "", text or "(empty)", ""]
        elif role == "assistant":
            if last_role not in ("assistant", "tool"):
                out += ["## Agent", ""]
            if text:
                out += [text, ""]
            for call in message.get("tool_calls") or ():
                name, args = calls.get(str(call.get("id")), ("?", {}))
                out += [f"**Tool call:** `{name}`", ""]
                command = args.get("command")
                if isinstance(command, str):
                    out += [_fence(command, "bash"), ""]
                    others = {k: v for k, v in args.items() if k != "command"}
                    if others:
                        out += [_fence(json.dumps(others, indent=2, ensure_ascii=False), "json"), ""]
                else:
                    diff = edit_diff(name, args)
                    if diff:
                        out += [_fence(diff, "diff"), ""]
                    else:
                        out += [_fence(json.dumps(args, indent=2, ensure_ascii=False), "json"), ""]
        elif role == "tool":
            name, _ = calls.get(str(message.get("tool_call_id")), ("?", {}))
            out += [f"**Result** (`{name}`):", "", _fence(text or "(empty)"), ""]
        last_role = str(role)
    return "\n".join(out).rstrip("\n") + "\n"


def to_json(messages: Sequence[dict[str, Any]], meta: ExportMeta) -> str:
    payload = {"format": EXPORT_FORMAT, "version": EXPORT_VERSION, "session_id": meta.session_id,
               "work_dir": meta.work_dir, "model": meta.model, "exported_at": int(time.time()),
               "messages": list(messages), "diffs": diffs_by_call(messages)}
    return json.dumps(payload, indent=2, ensure_ascii=False) + "\n"


def default_name(meta: ExportMeta, as_json: bool, work_dir: Path) -> str:
    """`agentica-<session>.md` in the project folder, numbered if that name is taken."""
    stem = f"agentica-{meta.session_id or time.strftime('%Y%m%d-%H%M%S')}"
    suffix = ".json" if as_json else ".md"
    name, number = stem + suffix, 2
    while (work_dir / name).exists() or (work_dir / name).is_symlink():
        name, number = f"{stem}-{number}{suffix}", number + 1
    return name


def write_export(text: str, target: str, work_dir: Path, allowed_dirs: Sequence[Path] = (), *,
                 overwrite: bool = False) -> tuple[Path, bool]:
    """Write `text` to `target` through the path sandbox; (the real path, whether an existing
    file was replaced). ExportError when outside the roots, existing (without `overwrite`), a
    folder, or not writable."""
    from agentica_cli.tools.local.paths import PathOutsideRootsError, PathSandbox

    sandbox = PathSandbox(work_dir, allowed_dirs)
    try:
        real = sandbox.resolve(target)
    except PathOutsideRootsError as err:
        raise ExportError(str(err)) from None
    except OSError as err:
        raise ExportError(f"cannot write {target}: {err}") from None
    try:
        parent = sandbox.open_parent(real, create=True)
    except (OSError, PathOutsideRootsError) as err:
        raise ExportError(f"cannot write {target}: {err}") from None
    flags = os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC | (os.O_TRUNC if overwrite else os.O_EXCL)
    try:
        existed = overwrite and _exists_at(parent, real.name)
        try:
            fd = os.open(real.name, flags, 0o644, dir_fd=parent)
        except FileExistsError:
            raise ExportError(f"{sandbox.display(real)} exists; not replaced (add --force to overwrite it, "
                              "or give another name)") from None
        except IsADirectoryError:
            raise ExportError(f"{sandbox.display(real)} is a folder") from None
        except OSError as err:
            raise ExportError(f"cannot write {sandbox.display(real)}: {err.strerror or err}") from None
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
    finally:
        os.close(parent)
    return real, existed


def _exists_at(dir_fd: int, name: str) -> bool:
    try:
        os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return False
    return True


def export_conversation(messages: Sequence[dict[str, Any]], meta: ExportMeta, target: str | None,
                        work_dir: Path, allowed_dirs: Sequence[Path] = (), *, as_json: bool = False,
                        overwrite: bool = False) -> Exported:
    """Write the conversation (Markdown, or JSON with `as_json` or a `.json` target)."""
    if target and target.lower().endswith(".json"):
        as_json = True
    name = target or default_name(meta, as_json, work_dir)
    text = to_json(messages, meta) if as_json else to_markdown(messages, meta)
    path, replaced = write_export(text, name, work_dir, allowed_dirs, overwrite=overwrite)
    return Exported(path, replaced, len(messages))
