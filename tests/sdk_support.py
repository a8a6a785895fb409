"""For the Claude Agent SDK tests: the SDK may never run Claude Code itself.

The SDK ships its own Claude Code binary and looks for a `claude` on PATH when no cli_path is
given; `no_real_claude` (autouse where it is imported) makes both lookups an error, so no test
can quietly run the real thing instead of agentica."""

from __future__ import annotations

from typing import Any

import pytest


@pytest.fixture(autouse=True)
def no_real_claude(monkeypatch: pytest.MonkeyPatch) -> None:
    from claude_agent_sdk._internal.transport.subprocess_cli import SubprocessCLITransport

    def refuse(self: Any) -> str:
        raise AssertionError("the SDK looked for Claude Code: every test must pass cli_path=agentica")

    monkeypatch.setattr(SubprocessCLITransport, "_find_cli", refuse)
    monkeypatch.setattr(SubprocessCLITransport, "_find_bundled_cli", refuse)
