"""The floor for `agentica -p`'s per-step cost: a stdlib-only client doing the same work.

Per step: POST the whole conversation (streamed, with usage) on one keep-alive connection,
read the SSE answer to its end, run the one read_file call it asks for (read the file, number
its lines), append both messages, repeat. No SDK, no session file, no rendering: what is
left is HTTP, JSON and the file read. bench_headless.py times it against the CLI.

    python bench/floor_client.py BASE_URL FILE [STEPS] [REQUEST.json]

REQUEST.json (optional): a first request body whose system prompt and tool list are sent
instead of the short ones here, so the requests are as big as agentica's.
"""

from __future__ import annotations

import http.client
import json
import sys
from urllib.parse import urlsplit

TOOLS = [{"type": "function", "function": {"name": "read_file", "description": "Read a file.", "parameters": {
    "type": "object", "properties": {"file_path": {"type": "string"}}, "required": ["file_path"]}}}]


def run(base_url: str, path: str, steps: int, like: dict | None = None) -> int:
    url = urlsplit(base_url)
    conn = http.client.HTTPConnection(url.hostname, url.port)
    tools = like["tools"] if like else TOOLS
    system = like["messages"][0]["content"] if like else "You are a coding agent."
    messages: list[dict] = [{"role": "system", "content": system}, {"role": "user", "content": f"read {path}"}]
    for step in range(steps + 1):
        body = {"model": "bench", "messages": messages, "tools": tools, "stream": True,
                "stream_options": {"include_usage": True}}
        conn.request("POST", url.path.rstrip("/") + "/chat/completions", json.dumps(body),
                     {"Content-Type": "application/json", "Authorization": "Bearer bench"})
        response = conn.getresponse()
        calls: dict[int, dict] = {}
        for line in response.read().split(b"\n"):
            if not line.startswith(b"data: {"):
                continue
            for choice in json.loads(line[6:])["choices"]:
                for delta in choice["delta"].get("tool_calls") or ():
                    call = calls.setdefault(delta["index"], {"id": "", "name": "", "arguments": ""})
                    call["id"] = delta.get("id") or call["id"]
                    call["name"] += delta.get("function", {}).get("name") or ""
                    call["arguments"] += delta.get("function", {}).get("arguments") or ""
        if not calls:
            return step  # the final answer
        messages.append({"role": "assistant", "content": "", "tool_calls": [
            {"id": c["id"], "type": "function", "function": {"name": c["name"], "arguments": c["arguments"]}}
            for c in calls.values()]})
        for call in calls.values():
            with open(json.loads(call["arguments"])["file_path"], encoding="utf-8") as fh:
                text = "".join(f"{n:6}\t{line}" for n, line in enumerate(fh, 1))
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": text})
    return steps


if __name__ == "__main__":
    like = None
    if len(sys.argv) > 4:
        with open(sys.argv[4], encoding="utf-8") as fh:
            like = json.load(fh)
    print(run(sys.argv[1], sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 30, like))
