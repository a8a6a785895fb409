"""First run without a key, through a pseudo-terminal: pick a provider, paste a key, the key is
checked against the scripted server's GET /models before it is saved, Ctrl-C says what happened."""

from __future__ import annotations

import socket
from pathlib import Path

import pexpect
import pytest
from screen_support import open_screen, spawn_agentica

from agentica_cli.testing import ScriptedModelServer, turns

PROMPT = "❯"
GAVE_UP = "No key saved; run agentica again when you have one."


@pytest.fixture
def project(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    path.mkdir()
    return path


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _spawn(home: Path, project: Path, args: list[str]) -> pexpect.spawn:
    # 200 columns: the save question names the config path under pytest's temporary folder
    # (longer on an xdist worker), and these tests match the output as a stream, where a
    # question wrapped by the terminal would be split by cursor moves. (Narrow terminals: below.)
    return spawn_agentica(home, project, args, columns=200)


def _finish(child: pexpect.spawn) -> int:
    child.expect(pexpect.EOF)
    child.close()
    return child.exitstatus


def test_provider_is_chosen_a_refused_key_is_asked_again_and_a_good_one_saved(home: Path, project: Path) -> None:
    with ScriptedModelServer([turns.text("Key works.")], accepted_keys=["sk-good"]) as server:
        child = _spawn(home, project, ["--base-url", server.base_url])
        try:
            child.expect(r"no API key configured for provider 'openai'")
            child.expect(r"Which provider\?")
            child.expect(r"1\. openai .*2\. zhipuai")
            child.expect(r"8\. openai-like +local server, no key needed")
            child.expect(r"Provider \[1-8, Enter = openai\]: ")
            assert "in a terminal" not in child.before  # we are in one
            child.send("9\r")
            child.expect(r"Type a number from 1 to 8, or a provider's name\.")
            child.expect(r"Provider \[1-8, Enter = openai\]: ")
            child.send("\r")
            child.expect(r"Paste your openai API key \(Enter to quit\): ")
            child.send("sk-bad\r")
            child.expect(r"The provider refused this key \(HTTP 401\)\. Check it and paste it again\.")
            child.expect(r"Paste your openai API key \(Enter to quit\): ")
            child.send("sk-good\r")
            child.expect("Key accepted.")
            child.expect(r"Save it to your user config \(.*config\.toml\)\? \[Y/n\] ")
            child.send("\r")
            child.expect(r"Saved to .*config\.toml")
            child.expect(PROMPT)
            child.send("hi\r")
            child.expect("Key works.")
            child.expect(PROMPT)
            child.sendcontrol("d")
            code = _finish(child)
        finally:
            child.close(force=True)
        assert code == 0
        assert server.request_log[0].headers["authorization"] == "Bearer sk-good"
    saved = (home / "config.toml").read_text()
    assert 'api_key = "sk-good"' in saved and 'provider = "openai"' in saved
    assert "sk-bad" not in saved
    assert "sk-good" not in child.before and "sk-bad" not in child.before  # typed as a password: never echoed


def test_a_key_that_cannot_be_checked_is_saved_only_if_the_user_says_so(home: Path, project: Path) -> None:
    unreachable = f"http://127.0.0.1:{_closed_port()}/v1"
    child = _spawn(home, project, ["--base-url", unreachable, "--provider", "deepseek"])
    try:
        child.expect(r"no API key configured for provider 'deepseek'")
        child.expect(r"Paste your deepseek API key \(Enter to quit\): ")  # the provider was given: no list
        assert "Which provider" not in child.before
        child.send("sk-offline\r")
        child.expect(r"Could not check the key: could not reach http://127\.0\.0\.1:\d+/v1")
        child.expect(r"Save it anyway\? \[y/N\] ")
        child.send("\r")
        child.expect("Not saved: the key is used for this session only.")
        child.expect(PROMPT)
        child.sendcontrol("d")
        code = _finish(child)
    finally:
        child.close(force=True)
    assert code == 0
    assert not (home / "config.toml").exists()

    child = _spawn(home, project, ["--base-url", unreachable, "--provider", "deepseek"])
    try:
        child.expect(r"Paste your deepseek API key \(Enter to quit\): ")
        child.send("sk-offline\r")
        child.expect(r"Save it anyway\? \[y/N\] ")
        child.send("y\r")
        child.expect(r"Saved to .*config\.toml")
        child.expect(PROMPT)
        child.sendcontrol("d")
        code = _finish(child)
    finally:
        child.close(force=True)
    assert code == 0
    saved = (home / "config.toml").read_text()
    assert 'api_key = "sk-offline"' in saved and 'provider = "deepseek"' in saved


@pytest.mark.parametrize("where", ["provider", "key"])
def test_ctrl_c_during_onboarding_says_no_key_was_saved_and_exits_2(home: Path, project: Path, where: str) -> None:
    with ScriptedModelServer([]) as server:
        child = _spawn(home, project, ["--base-url", server.base_url])
        try:
            child.expect(r"Provider \[1-8, Enter = openai\]: ")
            if where == "key":
                child.send("\r")
                child.expect(r"Paste your openai API key \(Enter to quit\): ")
                child.send("sk-half")
                child.sendcontrol("c")  # as at every prompt, Ctrl-C first clears what was typed
            child.sendcontrol("c")
            child.expect(GAVE_UP)
            code = _finish(child)
        finally:
            child.close(force=True)
        assert server.requests == []
    assert code == 2
    assert not (home / "config.toml").exists()


def test_enter_at_the_key_prompt_quits_with_code_2_and_says_why(home: Path, project: Path) -> None:
    child = _spawn(home, project, ["--provider", "openai"])
    try:
        child.expect(r"Paste your openai API key \(Enter to quit\): ")
        child.send("\r")
        child.expect(GAVE_UP)
        code = _finish(child)
    finally:
        child.close(force=True)
    assert code == 2
    assert not (home / "config.toml").exists()


def test_a_provider_that_needs_no_key_is_chosen_and_remembered(home: Path, project: Path) -> None:
    with ScriptedModelServer([turns.text("Local answer.")]) as server:
        child = _spawn(home, project, ["--base-url", server.base_url])
        try:
            child.expect(r"Provider \[1-8, Enter = openai\]: ")
            child.send("openai-like\r")
            child.expect(r'Save provider = "openai-like" to your user config\? \[Y/n\] ')
            child.send("y\r")
            child.expect(PROMPT)
            child.send("hello\r")
            child.expect("Local answer.")
            child.expect(PROMPT)
            child.sendcontrol("d")
            code = _finish(child)
        finally:
            child.close(force=True)
    assert code == 0
    saved = (home / "config.toml").read_text()
    assert 'provider = "openai-like"' in saved and "api_key" not in saved


def test_print_mode_still_tells_to_run_agentica_in_a_terminal(home: Path, project: Path) -> None:
    from cli_support import run_cli

    result = run_cli(["-p", "hi"], cwd=project, home=home)
    assert result.returncode == 2
    assert "Run `agentica` in a terminal and it offers to save the key for you." in result.stderr


@pytest.mark.parametrize("columns", [40, 60])
def test_every_question_is_on_screen_whole_at_a_narrow_terminal(home: Path, project: Path, columns: int) -> None:
    from agentica_cli.tui.terminal import home_relative

    save_question = f"Save it to your user config ({home_relative(home / 'config.toml')})? [Y/n]"
    assert len(save_question) > columns  # the path alone is longer: the question wraps
    with ScriptedModelServer([turns.text("Key works.")], accepted_keys=["sk-good"]) as server:
        screen = open_screen(home, project, ["--base-url", server.base_url], columns=columns)
        try:
            screen.wait_whole("Provider [1-8, Enter = openai]:")
            screen.send("\r")
            screen.wait_whole("Paste your openai API key (Enter to quit):")
            screen.send("sk-good\r")
            screen.wait_text("Key accepted.")
            screen.wait_whole(save_question)
            screen.send("\r")
            screen.wait_text("Saved to")
            screen.wait_text(PROMPT)
            screen.send("hi\r")
            screen.wait_text("Key works.")
        finally:
            screen.child.terminate(force=True)
    assert 'api_key = "sk-good"' in (home / "config.toml").read_text()
