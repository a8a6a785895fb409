"""Keep the agent process's secrets out of reach of the commands it runs (issue 18, finding 5).

`execute` and MCP servers get an environment without secret-looking variables, but a child
could still read its parent's *original* environment: /proc/<agent pid>/environ shows the
memory the process started with (between env_start and env_end, fields 50-51 of
/proc/<pid>/stat), whatever the process did with its variables since. So, once at startup
(Linux only; elsewhere nothing is done):

- prctl(PR_SET_DUMPABLE, 0): /proc/<pid>/environ, mem, fd/... of the agent become root-only
  and a process of the same user can no longer ptrace it. Side effects: gdb, strace -p or
  py-spy cannot attach to a running agentica without root, and it leaves no core dump.
- root (CAP_SYS_PTRACE) still reads a non-dumpable process's environ, so the values of the
  secret variables (agentica_cli.tools.secret_names) are overwritten with NUL bytes in that
  original block. libc's `environ` is first pointed at fresh copies (putenv), so getenv() and
  child processes that inherit the environment still see them; os.environ, Python's own
  copy, is not touched.

The command line (/proc/<pid>/cmdline, readable by every local user and by the commands the
agent runs) is rewritten once the key flags are read: the values of --api-key and
--api-key-file are overwritten with '*' in the original argv block (`blank_argv_values`), so
neither the key nor where it is kept shows there. Until that moment (the first milliseconds)
they do: prefer the environment or the config file for keys.
"""

from __future__ import annotations

import os
import sys

from agentica_cli.tools.secret_names import is_secret_name

PR_SET_DUMPABLE = 4
# /proc/<pid>/stat fields, 1-based; fields from 3 on follow the ")" that ends the command name.
_ENV_START_FIELD = 50
_ENV_END_FIELD = 51


def harden_process() -> None:
    """Make this process non-dumpable and wipe secret values from its startup environment.
    Costs well under 2 ms: no `import ctypes` (that alone takes ~2 ms)."""
    if not sys.platform.startswith("linux"):
        return
    set_not_dumpable()
    scrub_startup_environment()


def set_not_dumpable() -> bool:
    """prctl(PR_SET_DUMPABLE, 0); False if it could not be done."""
    try:
        # The C core of ctypes imports in ~0.6 ms, the ctypes package in ~2 ms; call_function
        # is the plain "call this C address with these int arguments" that ctypes is built on.
        import _ctypes

        prctl = _ctypes.dlsym(_ctypes.dlopen(None, os.RTLD_NOW), "prctl")
        return _ctypes.call_function(prctl, (PR_SET_DUMPABLE, 0, 0, 0, 0)) == 0
    except (ImportError, AttributeError, OSError):
        pass
    try:  # a Python without those internals: the public (slower to import) way
        import ctypes

        return ctypes.CDLL(None).prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == 0
    except (ImportError, OSError, AttributeError):
        return False


def _startup_environment_start() -> int | None:
    try:
        with open("/proc/self/stat", "rb") as stat:
            data = stat.read()
        fields = data[data.rindex(b")") + 2 :].split()
        start, end = int(fields[_ENV_START_FIELD - 3]), int(fields[_ENV_END_FIELD - 3])
    except (OSError, ValueError, IndexError):  # no /proc, or a kernel older than 3.5
        return None
    return start if 0 < start < end else None


def scrub_startup_environment() -> list[str]:
    """Overwrite the values of secret variables in this process's startup environment block
    (what /proc/self/environ shows) with NUL bytes; returns their names."""
    start = _startup_environment_start()
    if start is None:
        return []
    try:
        with open("/proc/self/environ", "rb") as environ:
            block = environ.read()
    except OSError:
        return []
    spans: list[tuple[int, int]] = []
    scrubbed: list[str] = []
    offset = 0
    for entry in block.split(b"\0"):
        name, sep, value = entry.partition(b"=")
        value_at = offset + len(name) + len(sep)
        offset += len(entry) + 1
        if not sep or not value or not is_secret_name(os.fsdecode(name)):
            continue
        current = os.environb.get(name)
        if current is not None:
            # libc's environ[] may still point into the block: give it a copy of its own
            # first, so getenv() and inheriting children keep the (current) value.
            os.putenv(name, current)
        spans.append((start + value_at, len(value)))
        scrubbed.append(os.fsdecode(name))
    if spans:
        _overwrite_own_memory(spans)
    return scrubbed


_ARG_START_FIELD = 48
_ARG_END_FIELD = 49


def _argv_block() -> tuple[int, bytes] | None:
    try:
        with open("/proc/self/stat", "rb") as stat:
            data = stat.read()
        fields = data[data.rindex(b")") + 2 :].split()
        start, end = int(fields[_ARG_START_FIELD - 3]), int(fields[_ARG_END_FIELD - 3])
        with open("/proc/self/cmdline", "rb") as cmdline:
            block = cmdline.read()
    except (OSError, ValueError, IndexError):
        return None
    if not 0 < start < end or len(block) != end - start:  # a process that rewrote its title: leave it
        return None
    return start, block


def blank_argv_values(options: tuple[str, ...]) -> int:
    """Overwrite with '*' the values of `options` (`--opt VALUE` and `--opt=VALUE`) in this
    process's original argv, what /proc/self/cmdline shows; returns how many. Linux only."""
    if not sys.platform.startswith("linux"):
        return 0
    found = _argv_block()
    if found is None:
        return 0
    start, block = found
    spans: list[tuple[int, int]] = []
    offset = 0
    previous = b""
    for arg in block.split(b"\0"):
        for option in options:
            flag = option.encode()
            if previous == flag and arg:
                spans.append((start + offset, len(arg)))
            elif arg.startswith(flag + b"=") and len(arg) > len(flag) + 1:
                spans.append((start + offset + len(flag) + 1, len(arg) - len(flag) - 1))
        previous = arg
        offset += len(arg) + 1
    if spans:
        _overwrite_own_memory(spans, fill=b"*")
    return len(spans)


def _overwrite_own_memory(spans: list[tuple[int, int]], fill: bytes = b"\0") -> None:
    try:
        with open("/proc/self/mem", "r+b", buffering=0) as memory:
            for address, length in spans:
                memory.seek(address)
                memory.write(fill * length)
        return
    except OSError:  # a kernel that refuses /proc/self/mem writes
        pass
    import ctypes

    for address, length in spans:
        ctypes.memset(address, fill[0], length)
