"""Per-chunk cost of reading a chat completions stream: SSE decoding, JSON, and the
accumulator (`agentica_cli.models.openai_chat._chunk_events`), in process, no HTTP.

    .venv/bin/python bench/bench_chunks.py [--runs 15]

Three streams in the shapes providers send (tests/provider_replays/): a DeepSeek-style
answer of 2,000 text deltas after 500 reasoning deltas; a tool call whose arguments come in
1,000 pieces (GLM's tool_stream); Ollama's 200 whole calls on one index. Each is decoded
from its bytes `--runs` times; the figures are the median and the best microseconds per
chunk (the best is the steadier one on a busy machine). The provider
dialects must not make this path slower: every field they read is one dict lookup on the
chunks that carry it.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import emit_result, median, print_machine


class _Clock:
    def progress(self) -> None:
        pass


def _sse(chunks: list[dict]) -> bytes:
    return b"".join(b"data: " + json.dumps(c, separators=(",", ":")).encode() + b"\n\n" for c in chunks) + \
        b"data: [DONE]\n\n"


def _chunk(delta: dict, finish: str | None = None) -> dict:
    return {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1764000000, "model": "m",
            "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]}


def streams() -> dict[str, tuple[bytes, int]]:
    text = [_chunk({"role": "assistant", "content": None, "reasoning_content": ""})]
    text += [_chunk({"content": None, "reasoning_content": "think "}) for _ in range(500)]
    text += [_chunk({"content": "word "}) for _ in range(2000)]
    text.append(_chunk({"content": ""}, "stop"))
    args = [_chunk({"tool_calls": [{"index": 0, "id": "call_1", "type": "function",
                                    "function": {"name": "write_file", "arguments": ""}}]})]
    args += [_chunk({"tool_calls": [{"index": 0, "function": {"arguments": "abcdefgh"}}]}) for _ in range(1000)]
    args.append(_chunk({}, "tool_calls"))
    calls = [_chunk({"tool_calls": [{"id": f"call_{i}", "index": 0, "type": "function",
                                     "function": {"name": "read_file", "arguments": '{"file_path":"a"}'}}]})
             for i in range(200)]
    calls.append(_chunk({}, "tool_calls"))
    return {"text": (_sse(text), len(text)), "arguments": (_sse(args), len(args)), "calls": (_sse(calls), len(calls))}


def decode(body: bytes) -> object:
    from agentica_cli.models.openai_chat import ResponseAccumulator, _chunk_events
    from agentica_cli.models.sse import SseDecoder

    acc = ResponseAccumulator()
    decoder = SseDecoder()
    clock = _Clock()
    loads = json.loads
    for start in range(0, len(body), 4096):  # as the network hands it over
        for data in decoder.feed(body[start:start + 4096]):
            if data.startswith(b"[DONE]"):
                break
            _chunk_events(loads(data), clock, acc)  # type: ignore[arg-type]
    return acc.response()


def accumulator_only(body: bytes, runs: int) -> float:
    """Best microseconds per chunk of `_chunk_events` alone, on chunks parsed beforehand: the
    part the dialects touch, without the JSON decoding that dominates the whole path."""
    from agentica_cli.models.openai_chat import ResponseAccumulator, _chunk_events

    chunks = [json.loads(part[6:]) for part in body.split(b"\n\n") if part.startswith(b"data: {")]
    clock = _Clock()
    best = float("inf")
    for _ in range(runs * 2):
        acc = ResponseAccumulator()
        start = time.perf_counter()
        for chunk in chunks:
            _chunk_events(chunk, clock, acc)  # type: ignore[arg-type]
        acc.response()
        best = min(best, (time.perf_counter() - start) / len(chunks) * 1e6)
    return best


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    print_machine("stream chunk parsing")
    figures = {}
    for name, (body, count) in streams().items():
        decode(body)  # warm-up (imports)
        times = []
        for _ in range(args.runs):
            start = time.perf_counter()
            decode(body)
            times.append((time.perf_counter() - start) / count * 1e6)
        figures[f"{name}_us_per_chunk"] = round(median(times), 2)
        figures[f"{name}_us_per_chunk_best"] = round(min(times), 2)  # steadier on a shared machine
        alone = accumulator_only(body, args.runs)
        figures[f"{name}_accumulator_us_best"] = round(alone, 3)
        print(f"{name:10s} {count:5d} chunks  median {median(times):6.2f} us/chunk  min {min(times):6.2f}"
              f"  (accumulator alone, best: {alone:.3f} us)")
    emit_result("chunks", figures)
    return 0


if __name__ == "__main__":
    sys.exit(main())
