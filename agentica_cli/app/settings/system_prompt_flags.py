"""--system-prompt, --append-system-prompt and their -file forms (Claude Code's flags).

--system-prompt replaces agentica's base instructions (the coding-agent prompt); what the
user and the project wrote (config `instructions`, AGENTS.md), each tool's notes and the
environment block (work folder, platform, date) stay, because the tools and the permission
rules still work as they do without it. --append-system-prompt ends the system prompt.

Both hold for this run only: like Claude Code, a session does not record them, so
`--continue` / `--resume` use the flags given to that command (pass them again to keep them).
The files are read once, at the start, so a missing file stops the run before anything runs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


class SystemPromptFlagError(ValueError):
    """A system prompt flag that cannot be used; the message names it."""


def _read(flag: str, path: Path) -> str:
    try:
        return path.expanduser().read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise SystemPromptFlagError(f"{flag} {path}: not UTF-8 text") from None
    except OSError as err:
        raise SystemPromptFlagError(f"{flag} {path}: cannot read: {err.strerror or err}") from None


def resolve_system_prompt_flags(args: Any) -> None:
    """Read the -file flags into `args.system_prompt` / `args.append_system_prompt` (the
    attributes build_agent's callers read). --system-prompt and --system-prompt-file both
    replace the same text, so they cannot go together; the two append flags add up (the
    text first, then the file)."""
    if args.system_prompt is not None and args.system_prompt_file is not None:
        raise SystemPromptFlagError("use either --system-prompt or --system-prompt-file, not both")
    if args.system_prompt_file is not None:
        args.system_prompt = _read("--system-prompt-file", args.system_prompt_file)
    if args.append_system_prompt_file is not None:
        text = _read("--append-system-prompt-file", args.append_system_prompt_file)
        parts = [args.append_system_prompt or "", text]
        args.append_system_prompt = "\n\n".join(p.strip() for p in parts if p.strip())


def system_prompt_options(args: Any) -> dict[str, str | None]:
    """build_agent's keyword arguments for the flags (after resolve_system_prompt_flags)."""
    return {"base_prompt": args.system_prompt, "appended_prompt": args.append_system_prompt}
