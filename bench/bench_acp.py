"""`agentica acp`: what an editor waits for, beyond the model's own time.

Spawns `agentica acp` as an editor does (the ACP SDK's client side over stdio), against the
scripted model server answering at once, and measures:

- start: process start until `initialize` is answered (the SDK's schema import dominates);
- session/new: until a new session is answered;
- end: from closing the agent's stdin (the editor quits) to the process's end;
- prompt -> first update: from sending session/prompt until the first agent_message_chunk
  arrives, minus the model's own time (the server's receive-to-finish span of that request),
  for the first prompt of a session (3 s after session/new, as a user types it) and the ones after.

    .venv/bin/python bench/bench_acp.py [--prompts 20]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import agentica_command, emit_result, median, print_machine

from agentica_cli.testing import ScriptedModelServer, turns


class Editor:
    def __init__(self) -> None:
        self.first_chunk: float | None = None

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        if update.session_update == "agent_message_chunk" and self.first_chunk is None:
            self.first_chunk = time.perf_counter()

    async def request_permission(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("no tool calls in this bench")


async def measure(prompts: int) -> dict[str, Any]:
    from acp import spawn_agent_process, text_block
    from acp.schema import ClientCapabilities

    command = agentica_command()
    with tempfile.TemporaryDirectory() as tmp:
        project, home = Path(tmp, "project"), Path(tmp, "home")
        project.mkdir()
        home.mkdir()
        env = {"PATH": str(Path(sys.executable).parent) + ":/usr/bin:/bin", "AGENTICA_HOME": str(home),
               "HOME": str(home)}
        with ScriptedModelServer([turns.text("ok") for _ in range(prompts)]) as server:
            editor = Editor()
            started = time.perf_counter()
            args = [*command[1:], "acp", "--base-url", server.base_url, "--api-key", "k", "--model", "m"]
            async with spawn_agent_process(editor, command[0], *args, env=env, cwd=str(project),
                                           transport_kwargs={"stderr": None}) as (conn, _):
                await conn.initialize(protocol_version=1, client_capabilities=ClientCapabilities())
                start = time.perf_counter() - started
                before = time.perf_counter()
                session = await conn.new_session(cwd=str(project), mcp_servers=[])
                new = time.perf_counter() - before
                await asyncio.sleep(3)  # the user types the first prompt; the session warms up meanwhile
                overheads: list[float] = []
                for index in range(prompts):
                    editor.first_chunk = None
                    sent = time.perf_counter()
                    await conn.prompt(session_id=session.session_id, prompt=[text_block(f"hi {index}")])
                    record = server.request_log[index]
                    model_time = record.finished_at - record.received_at
                    assert editor.first_chunk is not None
                    overheads.append((editor.first_chunk - sent - model_time) * 1000)
                closing = time.perf_counter()  # leaving the block closes the agent's stdin, then waits for it
            end = time.perf_counter() - closing
    return {"start_s": round(start, 2), "new_session_ms": round(new * 1000, 1), "end_ms": round(end * 1000, 1),
            "first_prompt_ms": round(overheads[0], 1), "warm_median_ms": round(median(overheads[1:]), 1),
            "warm_max_ms": round(max(overheads[1:]), 1)}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--prompts", type=int, default=20)
    options = parser.parse_args()
    print_machine("agentica acp: editor-side latency")
    figures = asyncio.run(measure(max(2, options.prompts)))
    print(f"start (spawn -> initialize answered):  {figures['start_s']} s")
    print(f"session/new:                           {figures['new_session_ms']} ms")
    print(f"end of stdin -> the process's end:     {figures['end_ms']} ms")
    print(f"prompt -> first update, over the model: first {figures['first_prompt_ms']} ms, "
          f"then median {figures['warm_median_ms']} ms (max {figures['warm_max_ms']} ms)")
    emit_result("acp", figures)
    return 0


if __name__ == "__main__":
    sys.exit(main())
