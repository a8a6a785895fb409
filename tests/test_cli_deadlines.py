"""`agentica -p` against a model server that never finishes: it ends at the deadline, exit 1.

The server streams one chunk and then only `: keep-alive` comments: before the deadlines
the command waited forever (the HTTP read timeout never fires while bytes arrive).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from cli_support import model_args, run_cli

from agentica_cli.testing import ScriptedModelServer, turns

pytestmark = pytest.mark.timeout(90)

KEEP_ALIVE_ONLY = turns.stall(turns.text("never comes"), after=1, every=0.2)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    path.mkdir()
    return path


def test_keep_alive_only_stream_ends_at_the_request_timeout_with_exit_1(home: Path, project: Path) -> None:
    with ScriptedModelServer([KEEP_ALIVE_ONLY] * 5) as server:
        started = time.monotonic()
        proc = run_cli(["-p", "hi", "--request-timeout", "2", *model_args(server)], cwd=project, home=home)
        elapsed = time.monotonic() - started
        assert len(server.requests) == 1  # the default stall limit (300 s) never came into play
    assert proc.returncode == 1, proc.stderr
    assert elapsed < 30  # the deadline is 2 s; a hang would meet pytest's timeout instead
    assert proc.stdout == ""
    assert ("agentica: error: the model request timed out: no complete answer within 2 s (request_timeout; "
            "1 attempt): the stream had sent no content yet; raise request_timeout if the model needs "
            "longer") in proc.stderr
    assert "Traceback" not in proc.stderr


def test_config_stall_timeout_retries_a_stalled_stream_with_an_honest_notice(home: Path, project: Path) -> None:
    (home / "config.toml").write_text("[model]\nstall_timeout = 1\nrequest_timeout = 60\n")
    with ScriptedModelServer([KEEP_ALIVE_ONLY, turns.text("The answer.")]) as server:
        proc = run_cli(["-p", "hi", "--output-format", "stream-json", *model_args(server)], cwd=project, home=home)
        assert len(server.requests) == 2
    assert proc.returncode == 0, proc.stderr
    events = [json.loads(line) for line in proc.stdout.splitlines()]
    [notice] = [e for e in events if e["type"] == "notice"]
    reason = "the stream stalled: no content for 1 s (stall_timeout)"
    assert notice == {
        "type": "notice", "source": "", "kind": "retry", "attempt": 2, "max_attempts": 5,
        "delay": notice["delay"], "reason": reason,
        "message": f"retrying in {notice['delay']:.2g} s (attempt 2 of 5): {reason}",
    }
    assert 0 < notice["delay"] <= 20
    assert events[-1]["result"] == "The answer."


def test_text_mode_shows_the_retry_notice_on_stderr(home: Path, project: Path) -> None:
    with ScriptedModelServer([turns.error(503, "overloaded"), turns.text("fine")]) as server:
        proc = run_cli(["-p", "hi", *model_args(server)], cwd=project, home=home)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "fine"
    assert "note: retrying in 1 s (attempt 2 of 5): HTTP 503: overloaded" in proc.stderr
    assert "void" not in proc.stderr


@pytest.mark.parametrize("value", ["-1", "soon", "nan"])
def test_a_bad_request_timeout_flag_exits_2(home: Path, project: Path, value: str) -> None:
    proc = run_cli(["-p", "hi", "--api-key", "k", f"--request-timeout={value}"], cwd=project, home=home)
    assert proc.returncode == 2
    assert f"argument --request-timeout: expected a number of seconds >= 0 (0: no limit), got '{value}'" in proc.stderr


def test_a_negative_timeout_in_config_exits_2_naming_key_and_file(home: Path, project: Path) -> None:
    (home / "config.toml").write_text("[model]\nstall_timeout = -5\n")
    proc = run_cli(["-p", "hi", "--api-key", "k"], cwd=project, home=home)
    assert proc.returncode == 2
    assert proc.stderr == (f"agentica: config error: {home / 'config.toml'}: 'model.stall_timeout' must be a number "
                           "of seconds >= 0 (0: no limit), got -5.0\n")
