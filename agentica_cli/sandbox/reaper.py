"""The session reaper: ends every Landlock-confined process of a session when agentica dies,
SIGKILL included. Standard library only: it runs as `python -I -S reaper.py FD AGENT_PID`.

A daemonised command (`setsid cmd >/dev/null &`, or a double fork) leaves the command's
process group and session; once its parents are gone it is adopted by agentica (a child
subreaper: descendants.py), and when agentica is SIGKILLed nothing runs in agentica to end
it, and it is adopted by init. A user's agentica cannot give its commands a PID namespace
(that needs a user namespace, which a threaded process cannot enter), and no ancestor of the
commands outlives agentica. So the session is recognised by the kernel instead, through
Landlock's signal scoping (ABI >= 6):

- sandbox_session.py confines one long-lived thread of agentica with a ruleset that only
  scopes signals (no file or network rule): the session's Landlock domain. Every command is
  started from a thread that this thread creates, and so runs in a domain nested in it,
  whatever it does later (setsid, double forks, new domains of its own: a domain cannot be
  left).
- That thread starts this reaper, which is therefore in the session's domain itself. Scoping
  lets a process signal only processes of its own domain and of domains nested in it: the
  reaper can signal every process of the session and no other (not agentica's own threads,
  not the user's shell, not another session's commands), and no command can signal the
  reaper (it is outside their nested domains), nor ptrace it.
- The reaper blocks reading a pipe whose write end only agentica holds (close-on-exec, so
  no command has it). At agentica's end, whatever the cause, the kernel closes it; the reaper
  reads end-of-file and sends SIGKILL to every process it is allowed to signal, in rounds
  until none is left (a process that forks while it is being killed leaves a child behind),
  then exits. At a normal exit agentica's own end_descendants got there first.

It never kills without the scoping in force: before it waits it checks that it may not
signal agentica (EPERM); if it may, it exits at once and kills nothing.
"""

from __future__ import annotations

import os
import signal
import sys
import time

_ROUNDS = 200  # x _ROUND_PAUSE_S: how long a fork bomb is chased
_ROUND_PAUSE_S = 0.01


def _zombie(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
        return stat[stat.rindex(b")") + 2:].split()[0] in (b"Z", b"X")
    except (OSError, ValueError, IndexError):
        return True  # gone


def sweep() -> int:
    """SIGKILL every process this one may signal but itself, until none is left alive; how
    many were killed. Only safe in a signal-scoped Landlock domain (see the module's notes)."""
    me = os.getpid()
    killed: set[int] = set()
    for _ in range(_ROUNDS):
        alive = 0
        try:
            pids = [int(name) for name in os.listdir("/proc") if name.isdigit()]
        except OSError:
            return len(killed)
        for pid in pids:
            if pid == me:
                continue
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                continue
            killed.add(pid)
            if not _zombie(pid):
                alive += 1
        if not alive:
            break
        time.sleep(_ROUND_PAUSE_S)
    return len(killed)


def scoped(agent: int) -> bool:
    """Whether signal scoping is in force here: agentica (outside the session's domain) must be
    out of reach. Agentica already gone: its successor as our parent (init, or a subreaper
    above agentica) is asked instead."""
    for pid in (agent, os.getppid()):
        try:
            os.kill(pid, 0)
        except PermissionError:
            return True
        except ProcessLookupError:
            continue
        return False
    return False


def main(argv: list[str]) -> int:
    fd, agent = int(argv[0]), int(argv[1])
    for sig in (signal.SIGINT, signal.SIGHUP, signal.SIGTERM, signal.SIGPIPE):
        signal.signal(sig, signal.SIG_IGN)  # only the end of the pipe ends it (or SIGKILL by agentica)
    if not scoped(agent):
        return 0
    while True:
        try:
            if not os.read(fd, 512):
                break
        except InterruptedError:
            continue
        except OSError:
            break
    sweep()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
