"""Prompt size: bytes and estimated tokens of the first request with the default tool set.

Every request carries the system prompt and the tool schemas, so their size is paid on
every step of every session. Measured on what the CLI's DeepAgent really sends to the
(scripted) model for a one-word prompt. Tokens are estimated at ~4 bytes per token
(no tokenizer download here). Target: first request under 16 KB.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import emit_result, print_machine

from agentica_cli.deep import DeepAgent
from agentica_cli.models import OpenAIChat
from agentica_cli.testing import ScriptedModelServer, turns


def size(value: object) -> int:
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode())


def main() -> int:
    print_machine("prompt size of the first request (DeepAgent, default builtin tools)")
    with tempfile.TemporaryDirectory() as work_dir, ScriptedModelServer([turns.text("hi")]) as server:
        agent = DeepAgent(OpenAIChat(id="bench", base_url=server.base_url, api_key="bench"), work_dir=work_dir)
        agent.run_sync("hi")
        body = server.requests[0]
    system = next(m["content"] for m in body["messages"] if m["role"] == "system")
    tools = body.get("tools", [])
    total = size(body)
    print(f"{'part':<28} {'bytes':>7} {'~tokens':>8}")
    print(f"{'whole request body':<28} {total:>7} {total // 4:>8}")
    print(f"{'system prompt':<28} {len(system.encode()):>7} {len(system.encode()) // 4:>8}")
    print(f"{'tool schemas (' + str(len(tools)) + ')':<28} {size(tools):>7} {size(tools) // 4:>8}")
    for spec in sorted(tools, key=size, reverse=True):
        name = spec["function"]["name"]
        print(f"  {name:<26} {size(spec):>7} {size(spec) // 4:>8}")
    emit_result(
        "prompt",
        {
            "first_request_bytes": total,
            "first_request_kb": round(total / 1024, 2),
            "estimated_tokens": total // 4,
            "system_prompt_bytes": len(system.encode()),
            "tool_schema_bytes": size(tools),
            "tools": len(tools),
        },
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
