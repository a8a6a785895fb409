"""`agentica --worktree [NAME]` and `agentica worktrees list|rm`: two sessions in one repository
edit the same file at the same time, each in its own worktree, and neither touches the other's
file or the main checkout; checkpoints and the sandbox follow the worktree."""

from __future__ import annotations

import json
import subprocess
import threading
from pathlib import Path

import pytest
from batch_support import TaskModel, git, make_repository, task_server
from cli_support import AGENTICA, cli_env, model_args, run_cli

from agentica_cli.worktrees import Worktree, WorktreeError, create_worktree


def _session(name: str, repo: Path, home: Path, server) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [*AGENTICA, "-p", f"--worktree={name}", "--output-format", "json", "--permission-mode", "accept-edits",
         *model_args(server), f"[task {name}] write shared.txt"],
        cwd=repo, env=cli_env(home), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True)


def test_two_worktree_sessions_edit_the_same_file_without_conflict(tmp_path: Path, home: Path) -> None:
    repo = make_repository(tmp_path / "repo")
    server = task_server(TaskModel())
    try:
        first, second = _session("one", repo, home, server), _session("two", repo, home, server)
        outputs = {name: process.communicate(timeout=90) for name, process in (("one", first), ("two", second))}
    finally:
        server.stop()
    assert first.returncode == 0 and second.returncode == 0, outputs
    for name in ("one", "two"):
        tree = repo / ".worktrees" / name
        assert (tree / "shared.txt").read_text() == f"from {name}\n"
        result = json.loads(outputs[name][0])
        assert result["files_changed"] == ["shared.txt"]  # the checkpoint of the worktree's session
        assert git(tree, "branch", "--show-current").strip() == f"agentica/{name}"
        note = outputs[name][1]
        assert f"the work is in {tree} (branch agentica/{name})" in note
        assert f"git merge agentica/{name}" in note and f"agentica worktrees rm {name}" in note
    # the main checkout is untouched, and git does not list the worktrees' folder as new files
    assert (repo / "shared.txt").read_text() == "original\n"
    assert git(repo, "status", "--porcelain") == ""
    # each session's checkpoints are the worktree's: --undo there puts that worktree's file back
    undo = run_cli(["--undo", "-C", str(repo / ".worktrees/one")], cwd=repo, home=home)
    assert undo.returncode == 0, undo.stderr
    assert (repo / ".worktrees/one/shared.txt").read_text() == "original\n"
    assert (repo / ".worktrees/two/shared.txt").read_text() == "from two\n"

    listed = run_cli(["worktrees", "list", "--json"], cwd=repo, home=home)
    states = {s["name"]: s for s in json.loads(listed.stdout)}
    assert set(states) == {"one", "two"} and states["two"]["uncommitted"] == 1 and states["one"]["uncommitted"] == 0

    refused = run_cli(["worktrees", "rm", "two"], cwd=repo, home=home)
    assert refused.returncode != 0 and "uncommitted changes" in refused.stderr
    assert (repo / ".worktrees/two/shared.txt").exists()
    # the work of "two" is merged the way the note says; then both go
    tree_two = repo / ".worktrees/two"
    git(tree_two, "add", "-A")
    git(tree_two, "commit", "-q", "-m", "two")
    git(repo, "merge", "-q", "agentica/two")
    assert (repo / "shared.txt").read_text() == "from two\n"
    for name in ("one", "two"):
        removed = run_cli(["worktrees", "rm", name], cwd=repo, home=home)
        assert removed.returncode == 0, removed.stderr
        assert f"removed worktree {name} and branch agentica/{name}" in removed.stdout
    assert git(repo, "branch", "--list", "agentica/*") == ""
    assert json.loads(run_cli(["worktrees", "list", "--json"], cwd=repo, home=home).stdout) == []


def test_worktree_outside_git_is_a_clear_error(tmp_path: Path, home: Path) -> None:
    folder = tmp_path / "plain"
    folder.mkdir()
    done = run_cli(["-p", "--worktree", "--model", "m", "hi"], cwd=folder, home=home)
    assert done.returncode == 2
    assert "is not in a git repository (--worktree needs one)" in done.stderr
    repo = make_repository(tmp_path / "r")
    bad = run_cli(["-p", "--worktree=no/slash", "hi"], cwd=repo, home=home)
    assert bad.returncode == 2 and "invalid worktree name 'no/slash'" in bad.stderr
    # a run that changed nothing (here: no API key) leaves no worktree or branch behind; -w takes no name here
    unchanged = run_cli(["-p", "-w", "--model", "m", "--base-url", "http://127.0.0.1:9", "hi"], cwd=repo, home=home)
    assert unchanged.returncode == 2 and "working in worktree " in unchanged.stderr
    assert "had no changes: removed it and its branch" in unchanged.stderr
    assert git(repo, "worktree", "list", "--porcelain").count("worktree ") == 1
    assert git(repo, "branch", "--list", "agentica/*") == ""


def test_worktrees_and_batch_logic_import_no_ui() -> None:
    """The application logic imports no UI library; the batch's live display is progress.py alone."""
    import ast

    root = Path(__file__).resolve().parent.parent / "agentica_cli"
    offenders = []
    for path in [*(root / "worktrees").glob("*.py"), *(root / "batch").glob("*.py")]:
        if path.name == "progress.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            offenders += [f"{path.name}: {n}" for n in names
                          if n.split(".")[0] in ("rich", "prompt_toolkit", "typer")
                          or n.startswith(("agentica_cli.cli", "agentica_cli.tui"))]
    assert offenders == []


def test_the_repl_in_a_worktree_says_where_the_work_is_when_it_ends(tmp_path: Path, home: Path) -> None:
    import pexpect
    from screen_support import ANSI, Repl, spawn_agentica

    repo = make_repository(tmp_path / "repo")
    server = task_server(TaskModel())
    try:
        child = spawn_agentica(home, repo, [*model_args(server), "--worktree=talk", "--permission-mode",
                                            "accept-edits"])
        repl = Repl(child)
        repl.expect_prompt()
        repl.send_line("[task talk] put your name in shared.txt")
        repl.expect("wrote shared.txt for talk")
        repl.expect_prompt()
        child.sendcontrol("d")
        child.expect(pexpect.EOF, timeout=30)
        child.close()
    finally:
        server.stop()
    tail = " ".join(ANSI.sub("", child.before or "").split())
    tree = repo / ".worktrees" / "talk"
    assert f"the work is in {tree} (branch agentica/talk): 1 uncommitted path(s)" in tail
    assert "agentica worktrees rm talk" in tail
    assert (tree / "shared.txt").read_text() == "from talk\n" and (repo / "shared.txt").read_text() == "original\n"


def test_a_worktrees_changes_name_files_as_they_are_and_match_git_diff(tmp_path: Path) -> None:
    """commit_all + worktree_changes: names with a space, a quote and a non-ASCII letter as
    they are (git's --name-only would quote them), the diff as `git diff --binary` prints it,
    and nothing to commit when nothing changed."""
    from agentica_cli.worktrees import commit_all, create_worktree, worktree_changes

    repo = make_repository(tmp_path / "repo")
    (repo / "old.bin").write_bytes(b"\x00\x01\x02")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "binary")
    tree = create_worktree(repo, "names")
    assert commit_all(tree, "nothing") is False
    assert worktree_changes(tree) == ([], "")
    (tree.path / "shared.txt").write_text("changed\n")
    (tree.path / 'a "quoted" name.txt').write_text("q\n")
    (tree.path / "café.txt").write_text("c\n")
    (tree.path / "old.bin").unlink()
    assert commit_all(tree, "work") is True
    files, diff = worktree_changes(tree)
    assert sorted(files) == sorted(['a "quoted" name.txt', "café.txt", "old.bin", "shared.txt"])
    assert diff == subprocess.run(["git", "diff", "--no-renames", "--binary", tree.base, "HEAD"], cwd=tree.path,
                                  check=True, capture_output=True, text=True).stdout
    assert "+changed" in diff and "deleted file mode" in diff


@pytest.mark.parametrize("refs", ["loose", "packed"])
def test_an_unchanged_worktree_runs_no_diff_but_a_commit_of_the_agents_own_is_seen(
    tmp_path: Path, refs: str, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """worktree_changes(clean=True): HEAD read as files; still the base -> no `git diff` runs;
    moved (the agent ran `git commit` itself, so the work tree is clean) -> the same answer as
    git's, read from a loose ref or from packed-refs."""
    from agentica_cli.worktrees import commit_all, create_worktree, manager, worktree_changes

    repo = make_repository(tmp_path / "repo")
    tree = create_worktree(repo, "reader")
    calls: list[tuple[str, ...]] = []
    real_run = manager._run

    def run(cwd: Path, *args: str, **kwargs: object) -> subprocess.CompletedProcess:
        calls.append(args)
        return real_run(cwd, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(manager, "_run", run)
    if refs == "packed":
        git(repo, "pack-refs", "--all")
        assert not (repo / ".git" / "refs" / "heads" / "agentica" / "reader").exists()
    assert commit_all(tree, "nothing") is False
    calls.clear()
    assert worktree_changes(tree, clean=True) == ([], "") and calls == []

    (tree.path / "shared.txt").write_text("the agent's own commit\n")
    git(tree.path, "commit", "-q", "-am", "by the agent")
    if refs == "packed":
        git(repo, "pack-refs", "--all")
    assert commit_all(tree, "nothing left") is False
    assert worktree_changes(tree, clean=True) == worktree_changes(tree)
    files, diff = worktree_changes(tree, clean=True)
    assert files == ["shared.txt"] and "+the agent's own commit" in diff


def test_a_name_whose_branch_exists_is_refused_and_adds_nothing(tmp_path: Path) -> None:
    from agentica_cli.worktrees import WorktreeError
    from agentica_cli.worktrees.manager import create_worktree

    repo = make_repository(tmp_path / "repo")
    git(repo, "branch", "agentica/taken")
    try:
        create_worktree(repo, "taken")
    except WorktreeError as err:
        assert str(err) == "branch agentica/taken exists; pick another name or delete it (git branch -D agentica/taken)"
    else:
        raise AssertionError("a worktree was made on an existing branch")
    assert not (repo / ".worktrees" / "taken").exists()
    assert "taken" not in git(repo, "worktree", "list")
    assert create_worktree(repo, "free").branch == "agentica/free"  # the lock was let go


def _git_runs_hooks() -> bool:
    """`git hook run` (git 2.36+): what runs a new worktree's post-checkout hook."""
    done = subprocess.run(["git", "hook", "run", "--ignore-missing", "no-such-hook"], capture_output=True, text=True,
                          cwd=Path(__file__).parent)
    return "is not a git command" not in done.stderr


needs_hook_run = pytest.mark.skipif(not _git_runs_hooks(), reason="git before 2.36 has no `git hook run`")


def _hook(repo: Path, body: str) -> None:
    hook = repo / ".git" / "hooks" / "post-checkout"
    hook.parent.mkdir(parents=True, exist_ok=True)
    hook.write_text("#!/bin/sh\n" + body)
    hook.chmod(0o755)


@needs_hook_run
def test_a_new_worktree_runs_the_post_checkout_hook_as_git_worktree_add_does(tmp_path: Path) -> None:
    repo = make_repository(tmp_path / "repo")
    marks = tmp_path / "hook-args"
    _hook(repo, f'echo "$@" > {marks}\n')
    tree = create_worktree(repo, "hooked")
    assert marks.read_text().split() == ["0" * len(tree.base), tree.base, "1"]
    assert git(tree.path, "status", "--porcelain").strip() == ""  # every file checked out, the index HEAD's
    assert sorted(p.name for p in tree.path.iterdir() if p.name != ".git") == sorted(
        p.name for p in repo.iterdir() if p.name not in (".git", ".worktrees"))


@needs_hook_run
def test_a_check_out_that_fails_leaves_no_worktree_and_no_branch(tmp_path: Path) -> None:
    repo = make_repository(tmp_path / "repo")
    _hook(repo, "echo 'the hook says no' >&2\nexit 3\n")
    with pytest.raises(WorktreeError, match="the hook says no"):
        create_worktree(repo, "refused")
    assert "refused" not in git(repo, "worktree", "list")
    assert git(repo, "branch", "--list", "agentica/refused").strip() == ""
    assert not (repo / ".worktrees" / "refused").exists()


@needs_hook_run
def test_parallel_worktrees_of_one_repository_check_out_at_once(tmp_path: Path) -> None:
    """The repository's lock covers only a worktree's set-up: each hook below succeeds only
    if the other worktree's check-out runs while it waits (one after the other, the first
    gives up after 10 s and fails)."""

    repo = make_repository(tmp_path / "repo")
    marks = tmp_path / "checking-out"
    marks.mkdir()
    _hook(repo, f'touch "{marks}/$(basename "$PWD")"\n'
                f'i=0; while [ "$(ls "{marks}" | wc -l)" -lt 2 ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done\n'
                f'[ "$(ls "{marks}" | wc -l)" -ge 2 ]\n')
    errors: list[BaseException] = []

    def make(name: str) -> None:
        try:
            create_worktree(repo, name)
        except BaseException as err:
            errors.append(err)

    threads = [threading.Thread(target=make, args=(name,)) for name in ("one", "two")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert errors == []
    assert sorted(p.name for p in marks.iterdir()) == ["one", "two"]


def test_worktrees_made_at_once_are_all_whole_and_a_name_taken_twice_fails_once(tmp_path: Path) -> None:
    """As a batch's workers make them: every worktree comes out whole, on its own branch, and two
    asking for the same name get one worktree and one clear error, not a broken one. (`git
    worktree add` beside another can die reading the other's half-made files: the set-up is
    under the repository's lock.)"""
    repo = make_repository(tmp_path / "repo")
    names = [f"w{n}" for n in range(14)] + ["twice", "twice"]
    made: list[Worktree] = []
    errors: list[BaseException] = []
    start = threading.Barrier(len(names))

    def make(name: str) -> None:
        start.wait()
        try:
            made.append(create_worktree(repo, name))
        except BaseException as err:
            errors.append(err)

    threads = [threading.Thread(target=make, args=(name,)) for name in names]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert sorted(tree.name for tree in made) == sorted(set(names))
    assert len(errors) == 1 and isinstance(errors[0], WorktreeError) and "twice" in str(errors[0])
    for tree in made:
        assert (tree.path / "shared.txt").read_text() == "original\n"
        assert git(tree.path, "status", "--porcelain").strip() == ""  # checked out whole
        assert git(tree.path, "symbolic-ref", "HEAD").strip() == f"refs/heads/agentica/{tree.name}"
    listed = git(repo, "worktree", "list", "--porcelain")
    assert all(f"branch refs/heads/agentica/{name}" in listed for name in set(names))


@needs_hook_run
def test_the_post_checkout_hook_is_found_where_core_hookspath_puts_it(tmp_path: Path) -> None:
    repo = make_repository(tmp_path / "repo")
    hooks = tmp_path / "shared-hooks"
    hooks.mkdir()
    marks = tmp_path / "ran"
    (hooks / "post-checkout").write_text(f"#!/bin/sh\npwd > {marks}\n")
    (hooks / "post-checkout").chmod(0o755)
    git(repo, "config", "core.hooksPath", str(hooks))
    tree = create_worktree(repo, "elsewhere")
    assert marks.read_text().strip() == str(tree.path)  # run in the new worktree, as git worktree add runs it


def test_worktrees_rm_takes_a_pattern_and_keeps_the_branches_that_hold_work(tmp_path: Path, home: Path) -> None:
    """After a batch: `agentica worktrees rm 'batch-*'` frees every task's folder; a branch with
    the task's commit stays (its work), one with nothing on it goes; other worktrees stay."""
    from agentica_cli.worktrees import commit_all

    repo = make_repository(tmp_path / "repo")
    worked = create_worktree(repo, "batch-a-1")
    (worked.path / "shared.txt").write_text("the task's work\n")
    commit_all(worked, "work")
    create_worktree(repo, "batch-b-1")
    create_worktree(repo, "mine")
    done = run_cli(["worktrees", "rm", "batch-*"], cwd=repo, home=home)
    assert done.returncode == 0, done.stderr
    assert "kept branch agentica/batch-a-1" in done.stdout and "removed worktree batch-b-1 and branch" in done.stdout
    assert sorted(p.name for p in (repo / ".worktrees").iterdir()) == ["mine"]
    assert git(repo, "for-each-ref", "--format=%(refname:short)", "refs/heads/agentica/").split() == [
        "agentica/batch-a-1", "agentica/mine"]
    assert git(repo, "show", "agentica/batch-a-1:shared.txt") == "the task's work\n"
    missing = run_cli(["worktrees", "rm", "nothing-*"], cwd=repo, home=home)
    assert missing.returncode == 1 and "no agentica worktree matches 'nothing-*'" in missing.stderr


def test_removing_a_worktree_removes_its_checkpoints_and_no_one_elses(tmp_path: Path, agentica_home: Path) -> None:
    """remove_worktree -> checkpoints.prune.forget_folder: the shadow repositories of the
    worktree and of a folder inside it (a batch task's `cwd`) go; the main checkout's and a
    sibling worktree whose name starts the same stay."""
    from agentica_cli.checkpoints import Checkpoints, shadow_dir_for
    from agentica_cli.worktrees import remove_worktree

    repo = make_repository(tmp_path / "repo")
    tree = create_worktree(repo, "gone")
    sibling = create_worktree(repo, "gone2")
    (tree.path / "sub").mkdir()
    (tree.path / "sub" / "f.txt").write_text("f\n")
    projects = [repo, tree.path, tree.path / "sub", sibling.path]
    for project in projects:
        assert Checkpoints(project, session_id="s1").snapshot() is not None
    assert all(shadow_dir_for(p).is_dir() for p in projects)

    remove_worktree(repo, "gone", force=True)
    assert not shadow_dir_for(tree.path).exists() and not shadow_dir_for(tree.path / "sub").exists()
    assert shadow_dir_for(repo).is_dir() and shadow_dir_for(sibling.path).is_dir()
