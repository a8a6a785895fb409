"""The scripted model server, exercised with the real openai SDK and raw HTTP."""

from __future__ import annotations

import asyncio
import http.client
import json
import socket
import subprocess
import sys
import time

import httpx
import openai
import pytest

from agentica_cli.testing import ScriptedModelServer, ScriptedServerProcess, tool_call_problems, turns


def client(server: ScriptedModelServer | ScriptedServerProcess) -> openai.OpenAI:
    return openai.OpenAI(base_url=server.base_url, api_key="test", max_retries=0)


def sse_events(response: httpx.Response) -> list[dict]:
    events = []
    for line in response.text.splitlines():
        if line.startswith("data: ") and line != "data: [DONE]":
            events.append(json.loads(line[6:]))
    return events


def test_base_url_and_plain_json_text():
    with ScriptedModelServer([turns.text("hello there")]) as server:
        assert server.base_url.startswith("http://127.0.0.1:") and server.base_url.endswith("/v1")
        reply = client(server).chat.completions.create(model="m1", messages=[{"role": "user", "content": "hi"}])
        assert reply.choices[0].message.content == "hello there"
        assert reply.choices[0].finish_reason == "stop"
        assert reply.model == "m1"
        assert reply.usage is not None and reply.usage.total_tokens > 0
        assert server.requests == [{"model": "m1", "messages": [{"role": "user", "content": "hi"}]}]
        assert server.pending == 0


def test_streamed_tool_call_arguments_arrive_in_several_chunks_and_usage_last():
    args = {"path": "src/main.py", "pattern": "def main"}
    with ScriptedModelServer(
        [turns.tool_calls(turns.call("grep", args, id="c1"), turns.call("ls", {}), usage={"prompt_tokens": 7,
                                                                                         "completion_tokens": 3})]
    ) as server:
        body = {"model": "m", "messages": [], "stream": True, "stream_options": {"include_usage": True}}
        response = httpx.post(server.base_url + "/chat/completions", json=body)
        assert response.status_code == 200
        assert response.headers["content-type"] == "text/event-stream"
        assert response.text.rstrip().endswith("data: [DONE]")
        events = sse_events(response)
        pieces = [
            tc["function"]["arguments"]
            for e in events if e["choices"]
            for tc in e["choices"][0]["delta"].get("tool_calls", [])
            if tc["index"] == 0 and "id" not in tc
        ]
        assert len(pieces) == 3 and "".join(pieces) == json.dumps(args)
        heads = [tc for e in events if e["choices"] for tc in e["choices"][0]["delta"].get("tool_calls", [])
                 if "id" in tc]
        assert [(h["id"], h["function"]["name"]) for h in heads] == [("c1", "grep"), ("call_0_1", "ls")]
        assert events[-2]["choices"][0]["finish_reason"] == "tool_calls"
        assert events[-1]["choices"] == []
        assert events[-1]["usage"] == {"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10}


def test_openai_sdk_accumulates_streamed_tool_call():
    with ScriptedModelServer([turns.tool_calls(turns.call("f", '{"a": 1, "b": "x y z"}'))]) as server:
        stream = client(server).chat.completions.create(model="m", messages=[], stream=True)
        args, names = "", []
        for chunk in stream:
            for tc in (chunk.choices[0].delta.tool_calls or []) if chunk.choices else []:
                if tc.function and tc.function.name:
                    names.append(tc.function.name)
                args += (tc.function.arguments or "") if tc.function else ""
        assert names == ["f"] and json.loads(args) == {"a": 1, "b": "x y z"}


def test_no_usage_chunk_without_include_usage():
    with ScriptedModelServer([turns.text("abc")]) as server:
        response = httpx.post(server.base_url + "/chat/completions", json={"stream": True, "messages": []})
        events = sse_events(response)
        assert all("usage" not in e for e in events)
        assert "".join(e["choices"][0]["delta"].get("content") or "" for e in events) == "abc"


def test_raw_malformed_arguments_are_sent_verbatim():
    with ScriptedModelServer([turns.tool_calls(turns.call("f", '{"a": 1,,'))]) as server:
        reply = client(server).chat.completions.create(model="m", messages=[])
        assert reply.choices[0].message.tool_calls[0].function.arguments == '{"a": 1,,'


def test_error_with_retry_after_and_exhausted_script():
    with ScriptedModelServer([turns.error(429, "slow down", retry_after=2)]) as server:
        r = httpx.post(server.base_url + "/chat/completions", json={"messages": []})
        assert r.status_code == 429 and r.headers["retry-after"] == "2"
        assert r.json()["error"]["message"] == "slow down"
        r = httpx.post(server.base_url + "/chat/completions", json={"messages": []})
        assert r.status_code == 400 and "no scripted turn left for request #2" in r.json()["error"]["message"]
        assert len(server.requests) == 2


def test_cut_stream_breaks_the_client_mid_answer():
    with ScriptedModelServer([turns.cut(turns.tool_calls(turns.call("f", {"x": "1234567890"})), after=3)]) as server:
        with pytest.raises(httpx.RemoteProtocolError):
            httpx.post(server.base_url + "/chat/completions", json={"stream": True, "messages": []})
        assert server.pending == 0


def test_cut_non_streamed_request_gets_no_answer():
    with ScriptedModelServer([turns.cut(turns.text("x"), after=0)]) as server, pytest.raises(openai.APIConnectionError):
        client(server).chat.completions.create(model="m", messages=[])


def test_a_request_cut_short_mid_body_is_recorded_as_unparsed_with_its_connection():
    """A client killed while sending leaves headers and part of a body (or none): recorded as
    `_unparsed`, never as the `{}` it did not send, with the connection it came over, which a
    client's earlier whole requests share."""
    with ScriptedModelServer([turns.text("whole"), turns.text("never sent")]) as server:
        connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
        try:
            connection.request("POST", "/v1/chat/completions", json.dumps({"messages": [
                {"role": "user", "content": "[task a1]"}]}), {"Content-Type": "application/json"})
            assert b"whole" in connection.getresponse().read()
            assert connection.sock is not None  # kept alive: the next request goes over the same one
            connection.sock.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 500\r\n\r\n")
        finally:
            connection.close()
        deadline = time.monotonic() + 10
        while len(server.request_log) < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        first, cut = server.request_log
        assert cut.body == {"_unparsed": ""} and first.body["messages"][0]["content"] == "[task a1]"
        assert cut.connection == first.connection and cut.connection.startswith("127.0.0.1:")


def test_delay_and_callable_turn_and_timestamps():
    seen = []

    def respond(body):
        seen.append(body["messages"][-1]["content"])
        return turns.text("echo " + body["messages"][-1]["content"])

    with ScriptedModelServer([turns.text("late", delay=0.3), respond]) as server:
        c = client(server)
        start = time.monotonic()
        assert c.chat.completions.create(model="m", messages=[]).choices[0].message.content == "late"
        assert time.monotonic() - start >= 0.3
        msg = c.chat.completions.create(model="m", messages=[{"role": "user", "content": "yo"}])
        assert msg.choices[0].message.content == "echo yo" and seen == ["yo"]
        first, second = server.request_log
        assert first.finished_at - first.received_at >= 0.3
        assert first.finished_at <= second.received_at <= second.finished_at


def test_repeat_tool_answers_count_times_then_final():
    with ScriptedModelServer([turns.repeat_tool("noop", 3, final="all done"), turns.text("next")]) as server:
        c = client(server)
        names = []
        for _ in range(3):
            reply = c.chat.completions.create(model="m", messages=[])
            names.append(reply.choices[0].message.tool_calls[0].function.name)
        assert names == ["noop"] * 3
        assert c.chat.completions.create(model="m", messages=[]).choices[0].message.content == "all done"
        assert c.chat.completions.create(model="m", messages=[]).choices[0].message.content == "next"


def test_unknown_turn_is_rejected():
    with pytest.raises(ValueError, match="not a scripted turn"):
        ScriptedModelServer([{"type": "bogus"}])
    with pytest.raises(TypeError, match="unknown turn option"):
        turns.text("x", dely=1)


def test_subprocess_server_serves_script_and_records_requests(tmp_path):
    script = [turns.tool_calls(turns.call("ls", {"path": "."})), turns.text("bye")]
    with ScriptedServerProcess(script, workdir=tmp_path) as server:
        c = client(server)
        reply = c.chat.completions.create(model="m", messages=[{"role": "user", "content": "a"}], stream=False)
        assert reply.choices[0].message.tool_calls[0].function.name == "ls"
        assert c.chat.completions.create(model="m", messages=[]).choices[0].message.content == "bye"
        assert [r["messages"] for r in server.requests] == [[{"role": "user", "content": "a"}], []]
        assert (tmp_path / "port.txt").read_text() == str(server.port)
        proc = server.proc
    assert proc is not None and proc.poll() is not None


def test_tool_call_problems_detects_missing_and_misordered_results():
    call = lambda i: {"id": i, "type": "function", "function": {"name": "f", "arguments": "{}"}}  # noqa: E731
    good = [{"role": "user", "content": "x"}, {"role": "assistant", "tool_calls": [call("a"), call("b")]},
            {"role": "tool", "tool_call_id": "a", "content": "1"},
            {"role": "tool", "tool_call_id": "b", "content": "2"}]
    assert tool_call_problems(good) == []
    assert tool_call_problems(good[:3]) != []
    assert tool_call_problems([*good[:2], good[3], good[2]]) != []
    assert tool_call_problems([{"role": "tool", "tool_call_id": "z", "content": ""}]) != []


def test_the_network_guard_refuses_real_hosts_here_and_in_child_processes():
    from agentica_cli.models import DeepSeek, ModelError

    with pytest.raises(OSError, match="tests may not reach the network"):
        socket.create_connection(("192.0.2.1", 443), timeout=1)  # TEST-NET-1, never loopback
    # A real provider, as a forgotten base_url would reach it: the request goes to the dead
    # proxy (first) and fails as a connection error.
    with pytest.raises(ModelError) as err:
        asyncio.run(DeepSeek(api_key="k", max_retries=0).response([{"role": "user", "content": "x"}]))
    assert err.value.kind == "connection"
    code = ("import httpx\ntry:\n    httpx.get('https://example.com', timeout=5)\n"
            "except httpx.HTTPError as exc:\n    print(type(exc).__name__, exc)\n")
    start = time.monotonic()
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=30)
    # refused by the closed loopback proxy (without it: a DNS failure here, or a real answer)
    assert out.stdout.startswith("ConnectError") and "Connection refused" in out.stdout, (out.stdout, out.stderr)
    assert time.monotonic() - start < 10


def test_the_documented_server_command_starts_without_warnings(tmp_path):
    """`python -m agentica_cli.testing.server` (docs/library.md): the package must not have
    imported the module already (runpy then warns and runs it a second time)."""
    import subprocess
    import sys

    script = tmp_path / "turns.json"
    script.write_text('[{"type": "text", "content": "hi"}]')
    proc = subprocess.Popen([sys.executable, "-u", "-W", "error::RuntimeWarning", "-m", "agentica_cli.testing.server",
                             "--script", str(script), "--port-file", str(tmp_path / "port")],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        first = proc.stderr.readline()  # where it says it listens; at once, or at its exit
    finally:
        proc.terminate()
        _, rest = proc.communicate(timeout=10)
    assert first.startswith("scripted model server on http://127.0.0.1:"), first + rest
    assert "Warning" not in first + rest
