"""Against the reference server nobody here wrote: `@modelcontextprotocol/server-everything`
(Node). Runs when `mcp-server-everything` is on PATH or AGENTICA_TEST_SERVER_EVERYTHING
names it (e.g. after `npm install @modelcontextprotocol/server-everything`); the test never
downloads it."""

from __future__ import annotations

import asyncio
import os
import shutil
from pathlib import Path

import pytest

from agentica_cli.tools.mcp import McpTool
from agentica_cli.tools.mcp.client_features import ElicitAnswer, ElicitRequest, McpClientHandlers, SamplingRequest

EVERYTHING = os.environ.get("AGENTICA_TEST_SERVER_EVERYTHING") or shutil.which("mcp-server-everything")
pytestmark = pytest.mark.skipif(
    not EVERYTHING or not shutil.which("node"),
    reason="server-everything is not installed (npm i -g @modelcontextprotocol/server-everything)",
)


def test_server_everything_tasks_elicitation_sampling_roots_progress(tmp_path: Path) -> None:
    asked: list[ElicitRequest] = []

    async def elicit(request: ElicitRequest) -> ElicitAnswer:
        asked.append(request)
        return ElicitAnswer("decline")

    async def sample(request: SamplingRequest) -> str | None:
        return f"sampled {request.max_tokens}"

    progress: list[str] = []
    task_status: list[str] = []
    handlers = McpClientHandlers(roots=[tmp_path], elicit=elicit, sample=sample)

    async def main() -> dict[str, str]:
        assert EVERYTHING is not None
        async with McpTool(EVERYTHING, name="everything", handlers=handlers, log_file=tmp_path / "e.log") as mcp:
            # taskSupport "required": offered, and called as a task (tools/mcp/tasks.py), in the
            # background while the other calls run (its four stages take a second each).
            assert "everything__simulate-research-query" in mcp.functions and not mcp.left_out
            research = asyncio.ensure_future(mcp.call_tool("simulate-research-query", {"topic": "owls"},
                                                           on_progress=task_status.append))
            assert "everything__read_resource" in mcp.functions
            assert "args-prompt" in [p.name for p in await mcp.list_prompts()]
            return {
                "elicit": await mcp.call_tool("trigger-elicitation-request"),
                "sample": await mcp.call_tool("trigger-sampling-request", {"prompt": "hi", "maxTokens": 10}),
                "roots": await mcp.call_tool("get-roots-list"),
                "long": await mcp.call_tool("trigger-long-running-operation", {"duration": 1, "steps": 2},
                                            on_progress=progress.append),
                "research_done": await research,
            }

    out = asyncio.run(main())
    assert "declined" in out["elicit"] and asked[0].required == ["name"]
    assert '"text": "sampled 10"' in out["sample"]
    assert tmp_path.resolve().as_uri() in out["roots"]
    assert progress == ["[progress 1/2]\n", "[progress 2/2]\n"] and "completed" in out["long"]
    assert out["research_done"].startswith("# Research Report: owls")
    assert task_status[0].startswith("[task working]") and task_status[-1].startswith("[task completed]")
