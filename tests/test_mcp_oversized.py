"""Issue 25 item 19: one 50 MB MCP result is cut while it streams in (tools/mcp/oversized.py,
stdio_lines.py), so agentica's peak memory stays bounded and the model gets a well-formed,
cut result that says how much was cut."""

from __future__ import annotations

import json
import random
import subprocess
import sys
import time
from pathlib import Path

from cli_support import AGENTICA, cli_env, model_args, tool_results

from agentica_cli.testing import ScriptedModelServer, turns
from agentica_cli.tools.mcp.oversized import Truncator

DEMO = Path(__file__).resolve().parent / "mcp_servers" / "demo_server.py"
LINES_50_MB = 820_000  # big_text lines of 61 characters: 50 MB, carried twice in the one message (content and
# structuredContent)
PEAK_BOUND_MB = 200  # it was ~740 MB with the message held whole


def _vm_hwm_mb(pid: int) -> float | None:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def test_a_50_mb_result_has_a_bounded_peak_and_reaches_the_model_cut_with_a_notice(home: Path,
                                                                                   project: Path) -> None:
    (home / "config.toml").write_text(f'[mcp_servers.demo]\ncommand = "{sys.executable}"\nargs = ["{DEMO}"]\n')
    # The answer after the result waits a little: the peak is sampled before agentica exits.
    script = [turns.tool_calls(turns.call("demo__big_text", {"lines": LINES_50_MB}, id="m1")),
              turns.text("done", delay=0.5)]
    with ScriptedModelServer(script) as server:
        agentica = subprocess.Popen([*AGENTICA, "-p", "go", "--yes", *model_args(server)], cwd=project,
                                    env=cli_env(home), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, text=True)
        peak = 0.0
        while agentica.poll() is None:
            peak = max(peak, _vm_hwm_mb(agentica.pid) or 0.0)
            time.sleep(0.02)
        _out, err = agentica.communicate()
        requests = server.requests
    assert agentica.returncode == 0, err
    assert 0 < peak < PEAK_BOUND_MB, f"agentica's peak RSS was {peak:.0f} MB"
    result = tool_results(requests[1])["m1"]
    assert result.startswith("[Result too large for the context"), result[:300]  # the result budget's preview
    assert "00000001 xxx" in result  # the text's first line
    notice = "more bytes of this text were cut: the MCP server's message was too large to keep whole]"
    assert notice in result, result[-600:]
    cut = int(result[result.rindex("[agentica: ") + 11:result.index(" more bytes of this text")].replace(",", ""))
    assert cut > 45_000_000, cut  # most of the 50 MB, said in bytes


_SAMPLE = ["a", "é", "😀", '"', "\\", "\n", "\u2028", "x", "\x01", "中", "/"]


def _text(rng: random.Random, n: int) -> str:
    return "".join(rng.choice(_SAMPLE) for _ in range(n))


def _message(rng: random.Random, ident: int) -> dict:
    result = {"content": [{"type": "text", "text": _text(rng, rng.randint(0, 90))},
                          {"type": "image", "data": "iVBORw0K" * rng.randint(0, 12), "mimeType": "image/png"}],
              "structuredContent": {"result": _text(rng, rng.randint(0, 70)), "rows": [1, 2.5, None, {"k": "v"}]},
              "isError": False}
    if rng.random() < 0.5:  # the Python SDK's order (id first) and the TypeScript SDK's (id last)
        return {"jsonrpc": "2.0", "id": ident, "result": result}
    return {"result": result, "jsonrpc": "2.0", "id": ident}


def test_cut_messages_stay_well_formed_and_keep_a_prefix_of_each_string() -> None:
    """Random strings (escapes, surrogate pairs, multi-byte UTF-8) fed in random pieces, cut at
    random small caps: every cut message parses, keeps its id, keys and short values, and each
    long text keeps a prefix of the original followed by the notice."""
    rng = random.Random(25)
    for ident in range(200):
        message = _message(rng, ident)
        raw = json.dumps(message, ensure_ascii=rng.random() < 0.5).encode()
        cap = rng.randint(1, 40)
        truncator = Truncator(string_cap=cap, message_cap=1 << 20)
        at = 0
        while at < len(raw):
            step = rng.randint(1, 9)
            truncator.feed(raw[at:at + step])
            at += step
        got = json.loads(truncator.finish())
        assert got["id"] == ident and list(got) == list(message)
        assert got["result"]["isError"] is False and got["result"]["structuredContent"]["rows"] == [1, 2.5, None,
                                                                                                  {"k": "v"}]
        for original, kept in ((message["result"]["content"][0]["text"], got["result"]["content"][0]["text"]),
                               (message["result"]["structuredContent"]["result"],
                                got["result"]["structuredContent"]["result"])):
            if kept != original:
                head, _, notice = kept.partition("\n\n[agentica: ")
                assert original.startswith(head) and notice.endswith("too large to keep whole]"), (original, kept)
        image = got["result"]["content"][1]  # base64 is kept whole or the item replaced by a notice
        if image["type"] == "text":
            assert "bytes of base64 was left out" in image["text"], image
        else:
            assert image["data"] == message["result"]["content"][1]["data"], image


def test_structure_over_the_cap_becomes_an_error_for_the_same_id() -> None:
    for message in ({"jsonrpc": "2.0", "id": 7, "result": {"rows": list(range(200_000))}},
                    {"result": {"rows": list(range(200_000))}, "jsonrpc": "2.0", "id": "req-7"}):
        truncator = Truncator(string_cap=100, message_cap=50_000)
        truncator.feed(json.dumps(message).encode())
        got = json.loads(truncator.finish())
        assert got["id"] == message["id"] and got["error"]["code"] == -32603
        assert "too large" in got["error"]["message"]


class _Pipe:
    """A byte stream handing out the given chunks, then end-of-stream (anyio's receive())."""

    def __init__(self, chunks: list[bytes]):
        self.chunks = list(chunks)

    async def receive(self, max_bytes: int = 65536) -> bytes:
        import anyio

        if not self.chunks:
            raise anyio.EndOfStream
        return self.chunks.pop(0)


def test_the_lines_around_a_cut_line_arrive_whole_and_in_order() -> None:
    """A small message before and after the oversized one, sharing its chunks (and two after it
    in the same chunk): each arrives as it was, the big one cut, none waits for more input."""
    import anyio

    from agentica_cli.tools.mcp.stdio_lines import WholeLines

    before = b'{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}'
    big = json.dumps({"jsonrpc": "2.0", "id": 3, "result": {"content": [{"type": "text", "text": "y" * 5000}]}})
    after = [b'{"jsonrpc":"2.0","id":4,"result":{}}', b'{"jsonrpc":"2.0","id":5,"result":{}}']
    stream = before + b"\n" + big.encode() + b"\n" + after[0] + b"\n" + after[1] + b"\n"
    chunks = [stream[i:i + 700] for i in range(0, len(stream), 700)]

    async def read_all() -> list[bytes]:
        lines = WholeLines(_Pipe(chunks), line_cap=1000, string_cap=1000)
        got: list[bytes] = []
        with anyio.fail_after(5):
            async for chunk in lines:
                got += bytes(chunk).splitlines()
        assert lines.cut_messages == 1
        return got

    got = anyio.run(read_all)
    assert got[0] == before and got[2:] == after
    cut = json.loads(got[1])
    assert cut["id"] == 3 and cut["result"]["content"][0]["text"].startswith("y" * 1000 + "\n\n[agentica: 4,000 ")
    assert "more bytes of this text were cut" in cut["result"]["content"][0]["text"]
