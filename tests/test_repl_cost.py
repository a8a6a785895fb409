"""The session's cost in money: from the user's [prices] table or the provider's own report
(OpenRouter's `usage.cost`), in /cost and the status line (pty, 80x24), summed over the whole
session after --continue; and `-p --max-cost` stopping a run (and refusing to guess a price)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_support import model_args, run_cli
from screen_support import PROMPT, Screen, spawn_screen

from agentica_cli.testing import ScriptedModelServer, turns

PRICES = '[prices]\n"scripted-*" = { input = 2.0, output = 10.0 }\n'  # USD per million tokens


@pytest.fixture
def screens() -> Iterator[list[Screen]]:
    started: list[Screen] = []
    yield started
    for screen in started:
        if screen.child.isalive():
            screen.child.terminate(force=True)


def _dollars(text: str) -> list[float]:
    return [float(d.replace(",", "")) for d in re.findall(r"\$([0-9][0-9,]*\.[0-9]+)", text)]


def _answer(text: str, prompt: int, completion: int, **extra: object) -> turns.Turn:
    return turns.text(text, usage={"prompt_tokens": prompt, "completion_tokens": completion, **extra})


def test_cost_from_the_price_table_in_cost_and_the_status_line_summed_after_continue(
    home: Path, project: Path, screens: list[Screen]
) -> None:
    (home / "config.toml").write_text(PRICES)
    with ScriptedModelServer([_answer("First.", 10_000, 1_000)]) as server:  # $0.02 + $0.01
        screen = spawn_screen(home, project, server, columns=80, lines=24)
        screens.append(screen)
        screen.send("one\r")
        screen.wait_text("First.")
        screen.send("/cost\r")
        shown = screen.wait_for(lambda text: "$0.0300" in text and text.count("$0.0300") >= 2,
                                what="the cost in /cost and in the status line")
        assert 0.03 in _dollars(shown)
        screen.child.terminate(force=True)
    with ScriptedModelServer([_answer("Second.", 20_000, 2_000)]) as server:  # $0.04 + $0.02
        screen = spawn_screen(home, project, server, "--continue", columns=80, lines=24)
        screens.append(screen)
        status = screen.wait_text("11.0k tokens")  # the resumed session's tokens, before any request of this process
        assert "$0.0300" in status
        screen.send("two\r")
        screen.wait_text("Second.")
        screen.send("/cost\r")
        shown = screen.wait_text("33,000 total")
        assert "$0.0900" in shown  # the whole session: both processes' requests


def test_clear_starts_the_cost_and_tokens_of_the_new_conversation_from_zero(
    home: Path, project: Path, screens: list[Screen]
) -> None:
    """/clear opens a new stored session (AppSession.clear): its /cost and status line count
    from zero, and its first request is counted alone."""
    (home / "config.toml").write_text(PRICES)
    script = [_answer("First.", 10_000, 1_000), _answer("Second.", 1_000, 100)]  # $0.03, then $0.003
    with ScriptedModelServer(script) as server:
        screen = spawn_screen(home, project, server, columns=80, lines=24)
        screens.append(screen)
        screen.send("one\r")
        screen.wait_text("First.")
        screen.wait_text("11.0k tokens")
        screen.send("/clear\r")
        screen.wait_text("Started a new conversation.")
        screen.send("/cost\r")
        screen.wait_text("tokens this session: 0 in · 0 out · 0 total")
        screen.send("two\r")
        screen.wait_text("Second.")
        screen.send("/cost\r")
        shown = screen.wait_text("1,100 total")
        assert "$0.0030" in shown and "$0.0330" not in shown


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
def test_the_providers_reported_cost_is_used_without_a_price(home: Path, project: Path,
                                                              screens: list[Screen], size: tuple[int, int]) -> None:
    with ScriptedModelServer([_answer("Priced by the provider.", 500, 50, cost=0.0042)]) as server:
        screen = spawn_screen(home, project, server, columns=size[0], lines=size[1])
        screens.append(screen)
        screen.send("hi\r")
        screen.wait_text("Priced by the provider.")
        screen.send("/cost\r")
        shown = screen.wait_text("$0.0042")
        assert 0.0042 in _dollars(shown)


def test_unknown_price_is_said_not_guessed(home: Path, project: Path, screens: list[Screen]) -> None:
    with ScriptedModelServer([_answer("Hello.", 500, 50)]) as server:
        screen = spawn_screen(home, project, server, columns=80, lines=24)
        screens.append(screen)
        screen.send("hi\r")
        screen.wait_text("Hello.")
        screen.send("/cost\r")
        shown = screen.wait_text("[prices]")
        assert not _dollars(shown)
        screen.wait_text(PROMPT)


def _expensive_run(home: Path, project: Path, *extra: str) -> tuple[object, ScriptedModelServer]:
    script = [turns.tool_calls(turns.call("execute", {"command": "touch ran.txt"}, id="x"),
                               usage={"prompt_tokens": 100_000, "completion_tokens": 1_000}),  # $0.21
              turns.text("Done.")]
    with ScriptedModelServer(script) as server:
        proc = run_cli(["-p", "go", "-y", "--output-format", "json", *model_args(server), *extra], cwd=project,
                       home=home)
    return proc, server


def test_max_cost_stops_a_print_run_before_its_next_request(home: Path, project: Path) -> None:
    (home / "config.toml").write_text(PRICES)
    proc, server = _expensive_run(home, project, "--max-cost", "0.10")
    assert proc.returncode == 3, proc.stderr
    result = json.loads(proc.stdout)
    assert result["stop_reason"] == "max_cost" and result["total_cost_usd"] == pytest.approx(0.21)
    assert len(server.requests) == 1 and not (project / "ran.txt").exists()
    proc, server = _expensive_run(home, project, "--max-cost", "5")
    assert proc.returncode == 0, proc.stderr
    assert len(server.requests) == 2 and (project / "ran.txt").exists()


def test_max_cost_without_a_known_price_fails_closed(home: Path, project: Path) -> None:
    proc, server = _expensive_run(home, project, "--max-cost", "100")
    assert proc.returncode == 3
    assert len(server.requests) == 1 and not (project / "ran.txt").exists()
    assert "[prices]" in json.loads(proc.stdout)["error"]
    bad = run_cli(["-p", "go", "--max-cost", "0"], cwd=project, home=home)
    assert bad.returncode == 2 and "--max-cost" in bad.stderr


def test_model_switches_mid_session_and_each_request_is_priced_as_its_model(
    home: Path, project: Path, screens: list[Screen]
) -> None:
    (home / "config.toml").write_text('[prices]\n"scripted-model" = { input = 1.0, output = 0.0 }\n'
                                      '"other-model" = { input = 100.0, output = 0.0 }\n')
    with ScriptedModelServer([_answer("From the first.", 1_000, 0), _answer("From the other.", 1_000, 0)]) as server:
        screen = spawn_screen(home, project, server, columns=80, lines=24)
        screens.append(screen)
        screen.send("one\r")
        screen.wait_text("From the first.")
        screen.send("/model other-model\r")
        screen.wait_text("other-model")
        screen.send("two\r")
        screen.wait_text("From the other.")
        assert [r["model"] for r in server.requests] == ["scripted-model", "other-model"]
        history = [m["content"] for m in server.requests[1]["messages"] if m["role"] != "system"]
        assert history == ["one", "From the first.", "two"]  # the same conversation, another model
        screen.send("/cost\r")
        screen.wait_text("$0.1010")  # $0.001 at the first model's price + $0.10 at the other's
