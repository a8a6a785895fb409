"""Toolkit cost in every request: each toolkit's tool schemas, and the first request of the CLI's
DeepAgent with no toolkit and with all of them (what `agentica --tools <all>` sends).

Bytes of compact JSON as sent; tokens estimated at ~4 bytes per token. Target: each toolkit's
schemas under 1.5 KB.
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
from agentica_cli.toolkits.catalog import TOOLKITS, import_all

BUDGET = 1500


def size(value: object) -> int:
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode())


def first_request(tools: list[object]) -> dict:
    with tempfile.TemporaryDirectory() as work_dir, ScriptedModelServer([turns.text("hi")]) as server:
        agent = DeepAgent(OpenAIChat(id="bench", base_url=server.base_url, api_key="bench"), work_dir=work_dir,
                          tools=tools or None)
        agent.run_sync("hi")
        return server.requests[0]


def main() -> int:
    print_machine("toolkit schemas, and the first request with all toolkits")
    results: dict[str, object] = {}
    toolkits = [cls() for cls in import_all()]
    print(f"{'toolkit':<18} {'name':<11} {'functions':>9} {'bytes':>6} {'~tokens':>8}")
    for short, tool in zip(TOOLKITS, toolkits, strict=True):
        schemas = [f.to_openai() for f in tool.get_functions()]
        bytes_ = size(schemas)
        flag = "" if bytes_ < BUDGET else "  over budget"
        print(f"{type(tool).__name__:<18} {short:<11} {len(schemas):>9} {bytes_:>6} {bytes_ // 4:>8}{flag}")
        results[f"{short}_schema_bytes"] = bytes_
    bare, full = first_request([]), first_request(toolkits)
    print(f"\nfirst request, builtin tools only: {size(bare):>6} bytes (~{size(bare) // 4} tokens), "
          f"{len(bare.get('tools', []))} tools")
    print(f"first request, + all {len(toolkits)} toolkits: {size(full):>6} bytes (~{size(full) // 4} tokens), "
          f"{len(full.get('tools', []))} tools")
    results |= {"first_request_bytes_builtin": size(bare), "first_request_bytes_all_toolkits": size(full),
                "largest_toolkit_schema_bytes": max(v for k, v in results.items() if k.endswith("_schema_bytes"))}
    emit_result("toolkits", results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
