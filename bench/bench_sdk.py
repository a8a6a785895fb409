"""A Claude Agent SDK program on agentica: how long the SDK waits, beyond the model's own time.

Runs the real `claude-agent-sdk` `query()` with `cli_path` at agentica (never its bundled Claude
Code) against the scripted model server answering at once, `--sessions` times, and measures per
session, from the call to `query()`:

- first message: until the SDK yields its first message (system/init): process start, the
  `initialize` round trip, settings, tools and the agent built;
- first answer beyond the model: until the AssistantMessage with the text, minus the model's
  own time (the server's receive-to-finish span of that request);
- agentica's CPU time for the whole session (user + system, from the process's rusage): what
  the wall times come to on an idle machine, whatever else the machine is running.

    .venv/bin/python bench/bench_sdk.py [--sessions 5]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import agentica_command, emit_result, median, print_machine

from agentica_cli.testing import ScriptedModelServer, turns


async def one_session(server: ScriptedModelServer, index: int, cli: str, project: Path, home: Path,
                      key_file: Path) -> tuple[float, float, float]:
    from claude_agent_sdk import AssistantMessage, ClaudeAgentOptions, query

    options = ClaudeAgentOptions(cli_path=cli, cwd=str(project), model="scripted-model",
                                 env={"AGENTICA_HOME": str(home), "NO_COLOR": "1"},
                                 extra_args={"base-url": server.base_url, "api-key-file": str(key_file)})
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    first = answered = None
    async for message in query(prompt=f"hello {index}", options=options):
        now = time.perf_counter()
        if first is None:
            first = now - started
        if isinstance(message, AssistantMessage) and answered is None:
            answered = now - started
    assert first is not None and answered is not None
    record = server.request_log[index]
    after = resource.getrusage(resource.RUSAGE_CHILDREN)  # the SDK has waited for agentica's exit
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return first, answered - (record.finished_at - record.received_at), cpu


async def measure(sessions: int) -> dict[str, Any]:
    command = agentica_command()
    if len(command) != 1:
        raise SystemExit("bench_sdk needs the installed `agentica` script (cli_path is one executable)")
    firsts: list[float] = []
    answers: list[float] = []
    cpus: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        project, home = Path(tmp, "project"), Path(tmp, "home")
        project.mkdir()
        home.mkdir()
        key_file = Path(tmp, "key")
        key_file.write_text("test-key\n")
        with ScriptedModelServer([turns.text("ok") for _ in range(sessions)]) as server:
            for index in range(sessions):
                first, answer, cpu = await one_session(server, index, command[0], project, home, key_file)
                firsts.append(first * 1000)
                answers.append(answer * 1000)
                cpus.append(cpu * 1000)
    return {"first_message_ms": round(median(firsts), 1), "first_answer_beyond_model_ms": round(median(answers), 1),
            "first_answer_max_ms": round(max(answers), 1), "agentica_cpu_ms": round(median(cpus), 1),
            "load_average": round(os.getloadavg()[0], 1), "sessions": sessions}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sessions", type=int, default=5)
    options = parser.parse_args()
    try:
        import claude_agent_sdk  # noqa: F401
    except ImportError:
        print("bench_sdk needs claude-agent-sdk (pip install -e '.[test]')", file=sys.stderr)
        return 2
    print_machine("a Claude Agent SDK program on agentica: start-up latency")
    figures = asyncio.run(measure(max(1, options.sessions)))
    print(f"query() -> first message (system/init):  median {figures['first_message_ms']} ms")
    print(f"query() -> first answer, beyond the model: median {figures['first_answer_beyond_model_ms']} ms "
          f"(max {figures['first_answer_max_ms']} ms, {figures['sessions']} sessions)")
    print(f"agentica's CPU time per session:            median {figures['agentica_cpu_ms']} ms "
          f"(load average {figures['load_average']})")
    emit_result("sdk", figures)
    return 0


if __name__ == "__main__":
    sys.exit(main())
