"""`agentica -p --input-format stream-json --output-format stream-json`: user messages as JSON
lines on stdin, each a turn of one session; the real command in a subprocess against the
scripted model server, its stdin a pipe the test keeps open."""

from __future__ import annotations

import base64
import json
import queue
import signal
import struct
import subprocess
import threading
import zlib
from pathlib import Path
from typing import Any

import pytest
from cli_support import AGENTICA, cli_env, model_args, run_cli

from agentica_cli.headless.stream_input import InputError, UserMessage, parse_line, split_lines
from agentica_cli.testing import ScriptedModelServer, turns

STREAM = ["-p", "--input-format", "stream-json", "--output-format", "stream-json"]


def user(content: Any) -> str:
    return json.dumps({"type": "user", "message": {"role": "user", "content": content}}) + "\n"


def tiny_png() -> bytes:
    """A 2x1 RGB PNG, built by hand (no Pillow needed)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", 2, 1, 8, 2, 0, 0, 0)
    pixels = zlib.compress(b"\x00\xff\x00\x00\x00\x00\xff")
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")


class Conversation:
    """agentica with stdin and stdout as pipes: write lines, read the JSON lines it answers."""

    def __init__(self, args: list[str], *, cwd: Path, home: Path):
        self.proc = subprocess.Popen([*AGENTICA, *args], cwd=cwd, env=cli_env(home), stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def send(self, text: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(text)
        self.proc.stdin.flush()

    def until(self, kind: str, timeout: float = 60) -> list[dict[str, Any]]:
        """The JSON lines up to and including the next one of type `kind`."""
        seen = []
        while True:
            line = self.lines.get(timeout=timeout)
            assert line is not None, f"stdout ended before a {kind!r} line; got {seen}\n{self.finish()[1]}"
            seen.append(json.loads(line))
            if seen[-1]["type"] == kind:
                return seen

    def finish(self, timeout: float = 60) -> tuple[int, str]:
        """Close stdin; the exit code and stderr."""
        assert self.proc.stdin is not None and self.proc.stderr is not None
        if not self.proc.stdin.closed:
            self.proc.stdin.close()
        code = self.proc.wait(timeout=timeout)
        return code, self.proc.stderr.read()

    def rest(self) -> list[dict[str, Any]]:
        """What stdout held after the last line read, once the process ended."""
        found = []
        while (line := self.lines.get(timeout=10)) is not None:
            found.append(json.loads(line))
        return found

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


@pytest.fixture
def conversation(home: Path, project: Path):
    started: list[Conversation] = []

    def start(*args: str) -> Conversation:
        started.append(Conversation([*STREAM, *args], cwd=project, home=home))
        return started[-1]

    yield start
    for conv in started:
        conv.kill()


def chat(request: dict[str, Any]) -> list[tuple[str, Any]]:
    """A request's conversation without the system prompt."""
    return [(m["role"], m.get("content")) for m in request["messages"] if m["role"] != "system"]


def test_each_message_is_a_turn_of_one_session_until_stdin_ends(conversation, home: Path) -> None:
    script = [
        turns.tool_calls(turns.call("read_file", {"file_path": "notes.txt"}, id="call_1")),
        turns.text("The notes say hello."),
        turns.text("You asked about the notes."),
    ]
    with ScriptedModelServer(script) as server:
        conv = conversation(*model_args(server))
        conv.send(user("what do the notes say?"))
        first = conv.until("result")
        assert len(server.requests) == 2  # the first turn: a tool call, then the answer
        conv.send(user([{"type": "text", "text": "what did I ask?"}]))
        second = conv.until("result")
        code, stderr = conv.finish()
        requests = server.requests
    assert code == 0, stderr
    assert conv.rest() == []  # nothing after the last turn's result

    assert [e["type"] for e in first][:2] == ["session", "turn_started"]
    assert first[1]["prompt"] == "what do the notes say?"
    assert [(e["call_id"], e["status"]) for e in first if e["type"] == "tool_call_finished"] == [("call_1", "ok")]
    assert second[0] == {"type": "turn_started", "source": "", "prompt": "what did I ask?"}
    assert [e["type"] for e in second].count("session") == 0  # one session line, at the start
    expected = ((first, "The notes say hello.", 2), (second, "You asked about the notes.", 1))
    for events, answer, requests_made in expected:
        result = events[-1]
        assert (result["result"], result["exit_code"], result["is_error"]) == (answer, 0, False)
        assert result["stop_reason"] == "completed" and result["num_model_requests"] == requests_made
        assert result["session_id"] == first[0]["session_id"]
    assert [c["name"] for c in first[-1]["tool_calls"]] == ["read_file"] and second[-1]["tool_calls"] == []

    assert len(requests) == 3
    history = chat(requests[2])  # the second turn carries the first: its prompt, tool call and answer
    assert history[0] == ("user", "what do the notes say?")
    assert history[-2:] == [("assistant", "The notes say hello."), ("user", "what did I ask?")]
    assert "hello from the notes" in next(content for role, content in history if role == "tool")
    saved = (home / "sessions" / f"{first[0]['session_id']}.jsonl").read_text()
    assert "what do the notes say?" in saved and "You asked about the notes." in saved


def test_messages_wait_for_the_running_turn_and_bad_lines_are_reported_by_number(conversation) -> None:
    in_flight, release = threading.Event(), threading.Event()

    def slow_first_answer(body: dict[str, Any]) -> dict[str, Any]:
        in_flight.set()
        release.wait(30)  # until the test has written the next lines
        return turns.text("first answer")

    with ScriptedModelServer([slow_first_answer, turns.text("second answer")]) as server:
        conv = conversation(*model_args(server))
        conv.send(user("first"))
        assert in_flight.wait(30)
        conv.send("this is not json\n"
                  "\n"  # a blank line is skipped, and still counted
                  '{"type": "control_request", "request": {"subtype": "interrupt"}}\n'
                  + user([{"type": "image", "source": {"type": "base64", "data": "aGVsbG8="}}])
                  + user("second"))
        release.set()
        events = conv.until("result") + conv.until("result")
        code, stderr = conv.finish()
        requests = server.requests
    assert code == 0, stderr
    kinds = [e["type"] for e in events]
    results = [i for i, kind in enumerate(kinds) if kind == "result"]
    errors = [e for e in events if e["type"] == "error"]
    assert [e["line"] for e in errors] == [2, 4, 5]
    assert all(e["kind"] == "input" and e["message"].startswith(f"stdin line {e['line']}: ") for e in errors)
    assert "not JSON" in errors[0]["message"]
    assert 'unknown message type "control_request"' in errors[1]["message"]
    assert "not a PNG, JPEG, GIF or WebP image" in errors[2]["message"]
    assert results[0] < kinds.index("error") < kinds.index("turn_started", results[0])  # reported in order
    assert [events[i]["result"] for i in results] == ["first answer", "second answer"]
    assert len(requests) == 2  # the bad lines never reached the model
    assert [m for m in chat(requests[1]) if m[0] == "user"] == [("user", "first"), ("user", "second")]
    assert "agentica: stdin line 2: not JSON" in stderr


def test_an_image_block_goes_with_the_text(conversation) -> None:
    data = base64.b64encode(tiny_png()).decode("ascii")
    with ScriptedModelServer([turns.text("A tiny picture.")]) as server:
        conv = conversation(*model_args(server))
        conv.send(user([{"type": "text", "text": "what is this?"},
                        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": data}}]))
        events = conv.until("result")
        code, stderr = conv.finish()
        requests = server.requests
    assert code == 0, stderr
    assert events[-1]["result"] == "A tiny picture."
    assert any(e["type"] == "notice" and "Sent with the prompt: image 1 (stdin line 1): 2x1 PNG" in e["message"]
               for e in events)
    [(_, content)] = [m for m in chat(requests[0]) if m[0] == "user"]
    assert content == [{"type": "text", "text": "what is this?"},
                       {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{data}"}}]


@pytest.mark.parametrize(("order", "code"), [(("limit", "done"), 0), (("done", "limit"), 3)])
def test_the_exit_code_is_the_last_turns(home: Path, project: Path, order: tuple[str, str], code: int) -> None:
    answers = {"done": [turns.text("done")],
               "limit": [turns.tool_calls(turns.call("read_file", {"file_path": "notes.txt"}, id="r1"))]}
    with ScriptedModelServer([turn for name in order for turn in answers[name]]) as server:
        proc = run_cli([*STREAM, "--max-turns", "1", *model_args(server)], cwd=project, home=home,
                       input=user("one") + user("two"))
    assert proc.returncode == code, proc.stderr
    results = [json.loads(line) for line in proc.stdout.splitlines() if json.loads(line)["type"] == "result"]
    expected = {"done": (0, "completed"), "limit": (3, "max_turns")}
    assert [(r["exit_code"], r["stop_reason"]) for r in results] == [expected[name] for name in order]


def test_continue_carries_on_the_last_session(home: Path, project: Path) -> None:
    with ScriptedModelServer([turns.text("Noted: blue."), turns.text("You said blue.")]) as server:
        earlier = run_cli(["-p", "remember: blue", "--output-format", "json", *model_args(server)], cwd=project,
                          home=home)
        assert earlier.returncode == 0, earlier.stderr
        proc = run_cli([*STREAM, "--continue", *model_args(server)], cwd=project, home=home,
                       input=user("what did I say?"))
        requests = server.requests
    assert proc.returncode == 0, proc.stderr
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    assert lines[0]["session_id"] == lines[-1]["session_id"] == json.loads(earlier.stdout)["session_id"]
    assert [m for m in chat(requests[1]) if m[0] != "tool"] == [
        ("user", "remember: blue"), ("assistant", "Noted: blue."), ("user", "what did I say?")]


def test_no_message_on_stdin_exits_2(home: Path, project: Path) -> None:
    with ScriptedModelServer([]) as server:
        proc = run_cli([*STREAM, *model_args(server)], cwd=project, home=home, input="not json\n")
        assert server.requests == []
    assert proc.returncode == 2
    assert "agentica: no user message on stdin" in proc.stderr
    assert [json.loads(line)["type"] for line in proc.stdout.splitlines()] == ["session", "error"]


@pytest.mark.parametrize(("args", "message"), [
    # (with --output-format stream-json too and no -p it is the Claude Agent SDK's protocol: test_claude_sdk_flags.py)
    (["--input-format", "stream-json"], "--input-format stream-json needs -p"),
    (["-p", "--input-format", "stream-json"], "needs --output-format stream-json"),
    (["-p", "--input-format", "stream-json", "--output-format", "json"], "needs --output-format stream-json"),
    ([*STREAM, "a prompt"], "give no PROMPT argument"),
    ([*STREAM, "--image", "shot.png"], "send images as content blocks"),
    ([*STREAM, "--api-key", "-"], "--api-key - reads the key from stdin"),
    (["-p", "hi", "--input-format", "xml"], "invalid choice: 'xml'"),
])
def test_wrong_combinations_exit_2(home: Path, project: Path, args: list[str], message: str) -> None:
    proc = run_cli(args, cwd=project, home=home, input=user("hi"))
    assert proc.returncode == 2
    assert message in proc.stderr and proc.stdout == ""


def test_line_splitting_skips_an_over_long_line_and_keeps_the_last_one() -> None:
    data = b"short\r\n" + b"x" * 50 + b"\n\nlast"
    pieces = [data[i:i + 7] for i in range(0, len(data), 7)]
    read = iter([*pieces, b""])
    assert list(split_lines(lambda _: next(read), limit=20)) == [b"short\r", None, b"", b"last"]


def test_parse_line_shapes() -> None:
    assert parse_line("   ", 1) is None
    message = parse_line(user([{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]), 3)
    assert message == UserMessage(3, "a\nb", [])
    assert isinstance(parse_line('{"type": "user", "message": {"role": "assistant", "content": "x"}}', 1),
                      InputError)
    no_text = parse_line(user([]), 7)
    assert isinstance(no_text, InputError) and no_text.message == "stdin line 7: the message has no text"
    wrong_block = parse_line(user([{"type": "document", "source": {}}]), 2)
    assert isinstance(wrong_block, InputError) and 'content block 1: type "document" is not read' in wrong_block.problem
    url_image = parse_line(user([{"type": "text", "text": "x"},
                                 {"type": "image", "source": {"type": "url", "url": "https://example.com/a.png"}}]), 1)
    assert isinstance(url_image, InputError) and "base64" in url_image.problem


def test_sigint_ends_the_running_turn_with_its_result_and_exits_130(conversation) -> None:
    with ScriptedModelServer([turns.text("slow", delay=30)]) as server:
        conv = conversation(*model_args(server))
        conv.send(user("take your time"))
        conv.until("turn_started")
        conv.until("model_request_started")
        conv.proc.send_signal(signal.SIGINT)
        code, stderr = conv.finish()
    assert code == 130, stderr
    result = conv.rest()[-1]
    assert (result["type"], result["stop_reason"], result["exit_code"]) == ("result", "cancelled", 130)


def test_a_custom_command_message_uses_its_model_for_that_turn_only(home: Path, project: Path, tmp_path: Path) -> None:
    commands = project / ".agentica" / "commands"
    commands.mkdir(parents=True)
    (commands / "fix.md").write_text("---\nmodel: command-model\nallowed-tools: Read\n---\nFix issue #$1")
    user_home = tmp_path / "user"  # HOME: no ~/.claude commands of the machine's user
    user_home.mkdir()
    with ScriptedModelServer([turns.text("fixed"), turns.text("plain")]) as server:
        proc = run_cli([*STREAM, "--trust", *model_args(server)], cwd=project, home=home,
                       env=cli_env(home, HOME=str(user_home)), input=user("/fix 42") + user("and now?"))
        requests = server.requests
    assert proc.returncode == 0, proc.stderr
    assert [r["model"] for r in requests] == ["command-model", "scripted-model"]
    assert {t["function"]["name"] for t in requests[0]["tools"]} == {"read_file"}
    assert len(requests[1]["tools"]) > 1  # the command's tool list was for its turn only
    assert [c for r, c in chat(requests[1]) if r == "user"] == ["Fix issue #42", "and now?"]


def test_the_checkpoints_store_opens_while_the_first_prompt_is_awaited(conversation, home: Path,
                                                                       project: Path) -> None:
    """A session a batch prepared ahead waits for its prompt: its shadow repository is made in
    that wait (Agent.open_checkpoints), so the first turn starts with its snapshot's scan only;
    the turn's checkpoint and /undo work as before."""
    import time

    script = [turns.tool_calls(turns.call("write_file", {"file_path": "new.txt", "content": "new\n"}, id="w")),
              turns.text("Written.")]
    with ScriptedModelServer(script) as server:
        conv = conversation(*model_args(server), "-y")
        conv.until("session")
        deadline = time.monotonic() + 30
        while not list((home / "checkpoints").glob("*/HEAD")) and time.monotonic() < deadline:
            time.sleep(0.02)
        made = list((home / "checkpoints").glob("*/HEAD"))
        assert made and (made[0].parent / "project").read_text().strip() == str(project.resolve())
        assert server.requests == []  # no prompt yet
        conv.send(user("write a new file"))
        events = conv.until("result")
        code, stderr = conv.finish()
    assert code == 0, stderr
    assert events[-1]["result"] == "Written." and (project / "new.txt").read_text() == "new\n"
    assert [e for e in events if e["type"] == "checkpoint"]
    undo = run_cli(["--undo"], cwd=project, home=home)
    assert undo.returncode == 0, undo.stderr
    assert not (project / "new.txt").exists()
