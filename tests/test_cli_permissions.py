"""PermissionPolicy: what each mode allows, asks or refuses, with a real FunctionCall."""

from __future__ import annotations

import asyncio
from pathlib import Path

from agentica_cli.app.permissions.approvals import Answer, PermissionPolicy
from agentica_cli.tools.base import Function, FunctionCall


def write_file(file_path: str, content: str) -> str:
    """Write a file.

    Args:
        file_path: where
        content: what
    """
    return "ok"


def execute(command: str) -> str:
    """Run a command.

    Args:
        command: the command
    """
    return "ok"


def make_call(fn, **args) -> FunctionCall:  # type: ignore[no-untyped-def]
    call = FunctionCall(Function.from_callable(fn, is_destructive=True), "c1", args)
    assert call.parse_arguments()
    return call


def decide(policy: PermissionPolicy, call: FunctionCall):  # type: ignore[no-untyped-def]
    return asyncio.run(policy(call))


def test_modes_without_a_terminal(tmp_path: Path) -> None:
    refused: list[tuple[str, str]] = []
    inside = make_call(write_file, file_path="a.txt", content="x")
    outside = make_call(write_file, file_path=str(tmp_path.parent / "elsewhere.txt"), content="x")
    command = make_call(execute, command="ls")

    def policy(mode: str) -> PermissionPolicy:
        return PermissionPolicy(mode, tmp_path, on_refusal=lambda name, m: refused.append((name, m)))

    assert not decide(policy("default"), inside).allowed
    assert decide(policy("accept-edits"), inside).allowed
    assert not decide(policy("accept-edits"), outside).allowed
    assert not decide(policy("accept-edits"), command).allowed
    assert decide(policy("auto"), command).allowed
    plan = decide(policy("plan"), inside)
    assert not plan.allowed and plan.message.startswith("Plan mode is on")
    assert refused == [
        ("write_file", "default"),
        ("write_file", "accept-edits"),
        ("execute", "accept-edits"),
        ("write_file", "plan"),
    ]


def test_accept_edits_covers_added_folders(tmp_path: Path) -> None:
    extra = tmp_path / "extra"
    extra.mkdir()
    work = tmp_path / "work"
    work.mkdir()
    policy = PermissionPolicy("accept-edits", work, allowed_dirs=[extra])
    assert decide(policy, make_call(write_file, file_path=str(extra / "f.txt"), content="x")).allowed
    assert not decide(policy, make_call(write_file, file_path="../f.txt", content="x")).allowed


def test_answers_once_always_and_no_with_a_message(tmp_path: Path) -> None:
    answers = [Answer("once"), Answer("no", "use git mv instead"), Answer("always")]
    asked: list[str] = []

    def ask(call: FunctionCall) -> Answer:
        asked.append(call.name)
        return answers.pop(0)

    policy = PermissionPolicy("default", tmp_path, ask=ask, always_allow=["write_file"])
    command = make_call(execute, command="mv a b")
    assert decide(policy, command).allowed
    denied = decide(policy, command)
    assert not denied.allowed
    assert denied.message == "The user declined to run 'execute'. They said: use git mv instead"
    assert decide(policy, command).allowed  # "always" ...
    assert decide(policy, command).allowed  # ... so this one is not asked
    assert decide(policy, make_call(write_file, file_path="x", content="y")).allowed  # permissions.allow
    assert asked == ["execute", "execute", "execute"]


def test_accept_edits_resolves_home_paths_like_the_file_tools(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.setenv("HOME", str(tmp_path / "elsewhere"))  # `~` is outside the work dir
    policy = PermissionPolicy("accept-edits", work)
    assert not decide(policy, make_call(write_file, file_path="~/notes.txt", content="x")).allowed
    assert decide(policy, make_call(write_file, file_path="./sub/../notes.txt", content="x")).allowed
    monkeypatch.setenv("HOME", str(work))
    assert decide(policy, make_call(write_file, file_path="~/notes.txt", content="x")).allowed
