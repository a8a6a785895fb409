"""The guardian of one stdio MCP server process tree (Linux), run as its own small process:

    python -I -S guardian.py <agentica pid> <program> <args...>

The server is often started through a wrapper (`npx ...`, `uvx ...`, `sh -c ...`): a
parent-death signal set on the wrapper alone reaches only the wrapper, and the real server
(a grandchild) ran on after agentica was killed. So the guardian sits between agentica and
the server:

- it is a child subreaper (PR_SET_CHILD_SUBREAPER): every orphaned descendant, also one
  that left the process group with setsid, is re-parented to it, so it can always find
  the whole tree;
- it gets SIGTERM when agentica dies for any reason, SIGKILL included (PR_SET_PDEATHSIG),
  and then stops the whole tree: SIGTERM, a short grace, SIGKILL;
- when the server exits on its own, it stops what the server left behind and exits with
  the server's status, so the SDK sees the server's own exit.

It closes its copies of the stdio pipes at once: the server alone holds them, so the SDK's
"close stdin" still reaches it and its exit still ends the SDK's stdout. Standard library
only, no site packages (-I -S): it starts in ~20 ms and stays small.
"""

import ctypes
import os
import signal
import sys
import time

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
GRACE = 1.0  # seconds between SIGTERM and SIGKILL of the tree


def descendants(root: int) -> list[int]:
    """Every live process below `root`, from /proc (children before grandchildren)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                stat = f.read()
            ppid = int(stat[stat.rindex(b")") + 2 :].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(ppid, []).append(int(entry))
    found: list[int] = []
    todo = [root]
    while todo:
        for child in children.get(todo.pop(), ()):
            found.append(child)
            todo.append(child)
    return found


def signal_tree(sig: int) -> list[int]:
    """Send `sig` to every process below us (a subreaper's descendants are the whole tree,
    also what left the process group); returns them."""
    pids = descendants(os.getpid())
    for pid in pids:
        try:
            os.kill(pid, sig)
        except OSError:
            pass
    return pids


def reap() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def stop_tree() -> None:
    """SIGTERM everything below us, wait up to GRACE for it to go, then SIGKILL what is left."""
    for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(sig, signal.SIG_IGN)  # no second stop_tree from inside this one
    if not signal_tree(signal.SIGTERM):
        return
    deadline = time.monotonic() + GRACE
    while time.monotonic() < deadline:
        reap()
        if not descendants(os.getpid()):
            return
        time.sleep(0.02)
    for _ in range(20):  # a dying process may still start children: a few rounds
        if not signal_tree(signal.SIGKILL):
            return
        time.sleep(0.02)
        reap()


def on_signal(signum: int, frame: object) -> None:
    stop_tree()
    os._exit(128 + signum)


def main(argv: list[str]) -> int:
    parent, program, args = int(argv[1]), argv[2], argv[2:]
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_CHILD_SUBREAPER, 1)
    for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(sig, on_signal)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    if os.getppid() != parent:
        return 0  # agentica died before the line above: nobody to serve
    server = os.fork()
    if server == 0:
        for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
            signal.signal(sig, signal.SIG_DFL)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)  # if the guardian itself is killed
        try:
            os.execv(program, args)
        except OSError as err:
            sys.stderr.write(f"cannot run {program}: {err.strerror}\n")
            os._exit(127)
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    os.close(null)
    status = 0
    while True:
        try:
            pid, raw = os.waitpid(-1, 0)
        except ChildProcessError:
            break
        if pid == server:
            status = os.waitstatus_to_exitcode(raw)
            break
    stop_tree()  # what the server left running
    return status if status >= 0 else 128 - status


if __name__ == "__main__":
    sys.exit(main(sys.argv))
