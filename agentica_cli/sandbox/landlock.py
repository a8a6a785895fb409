"""Landlock (Linux >= 5.13) through its three syscalls, with ctypes: no extra dependency.

Two ways to apply it. The execute tool's commands and background processes start from a
short-lived thread that confined itself first (landlock_spawn.py: no extra process, well
under a millisecond). Where the caller only gets to choose an argv (MCP servers, whose
process the MCP SDK starts), this file runs as a launcher that confines itself and then
execs the command:

    python -I -S landlock.py [--write DIR]... [--hide PATH]... [--network] -- bash -c '...'

The launcher imports only the standard library so it starts with `-I -S` (no
site-packages, ~15 ms). Neither runs Python between fork and exec (a `preexec_fn`), which
can deadlock in a threaded program and forks the agent's whole address space.

What Landlock can express: an allow-list. Read (and execute) is granted on every entry of
`/` except along the paths to the hidden secrets, where it is granted entry by entry, so a
secret's siblings stay readable and the secret is not (its parent folders can still be
listed: names, not contents; a symlink that leads to a secret or above it gets no rule of
its own, the real path stays reachable). Write is granted on the writable folders, a few
character devices (/dev/null, /dev/tty, ...; not the rest of /dev, which as root holds the
disks), /dev/pts and /dev/shm. TCP connect and bind are denied (ABI >= 4)
unless the network is allowed; UDP (e.g. DNS) is not covered by Landlock. Signals to and
abstract Unix sockets of processes outside the sandbox are denied (ABI >= 6).
"""

from __future__ import annotations

import ctypes
import os
import sys

SYS_CREATE_RULESET, SYS_ADD_RULE, SYS_RESTRICT_SELF = 444, 445, 446  # the same on every architecture
CREATE_RULESET_VERSION = 1
RULE_PATH_BENEATH, RULE_NET_PORT = 1, 2
PR_SET_NO_NEW_PRIVS = 38

EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
REMOVE_DIR, REMOVE_FILE, MAKE_CHAR, MAKE_DIR = 1 << 4, 1 << 5, 1 << 6, 1 << 7
MAKE_REG, MAKE_SOCK, MAKE_FIFO, MAKE_BLOCK, MAKE_SYM = 1 << 8, 1 << 9, 1 << 10, 1 << 11, 1 << 12
REFER, TRUNCATE = 1 << 13, 1 << 14  # ABI 2, ABI 3
NET_BIND_TCP, NET_CONNECT_TCP = 1 << 0, 1 << 1  # ABI 4
SCOPE_ABSTRACT_UNIX_SOCKET, SCOPE_SIGNAL = 1 << 0, 1 << 1  # ABI 6

READ = EXECUTE | READ_FILE | READ_DIR
WRITABLE_DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty", "/dev/ptmx")
FILE_RIGHTS = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE  # the rights a rule on a file may carry


class RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64),
                ("scoped", ctypes.c_uint64)]


class PathBeneathAttr(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


class LandlockError(OSError):
    pass


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def abi_version() -> int:
    """The kernel's Landlock ABI version; 0 when Landlock is missing or disabled."""
    if not sys.platform.startswith("linux"):
        return 0
    try:
        libc = _libc()
    except OSError:
        return 0
    version = libc.syscall(SYS_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(CREATE_RULESET_VERSION))
    return max(int(version), 0)


def _fs_rights(abi: int) -> int:
    rights = (1 << 13) - 1  # ABI 1: EXECUTE .. MAKE_SYM
    if abi >= 2:
        rights |= REFER
    if abi >= 3:
        rights |= TRUNCATE
    return rights


def read_rules(hidden: list[str]) -> list[tuple[str, int]]:
    """(path, rights) granting read on everything except the hidden paths: every entry of
    each folder on the way to a secret is allowed on its own, the secret itself is left out,
    and the folders on the way get READ_DIR only (listing)."""
    hidden_set = {os.path.normpath(h) for h in hidden if h != "/"}
    if not hidden_set:
        return [("/", READ)]
    ancestors: set[str] = set()
    for path in hidden_set:
        parent = os.path.dirname(path)
        while True:
            ancestors.add(parent)
            if parent == "/":
                break
            parent = os.path.dirname(parent)
    rules: list[tuple[str, int]] = []
    for folder in sorted(ancestors):
        rules.append((folder, READ_DIR))
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        for name in names:
            path = os.path.join(folder, name)
            if path in hidden_set or path in ancestors:
                continue
            if os.path.islink(path) and _covers_hidden(os.path.realpath(path), hidden_set):
                continue  # a rule follows the link: it would open the secret (pytest-current -> ...)
            rules.append((path, READ))
    return rules


def _covers_hidden(path: str, hidden: set[str]) -> bool:
    """Whether a rule on `path` would reach a hidden path (it is one, or above or below one)."""
    prefix = path.rstrip("/") + "/"
    return any(h == path or h.startswith(prefix) or path.startswith(h.rstrip("/") + "/") for h in hidden)


def build_ruleset(spec: dict) -> tuple[int, int]:
    """A Landlock ruleset fd (O_CLOEXEC) for `spec`: {"write": [...], "hidden": [...],
    "network": bool}, and the ABI it was built for. Enforcing it (enforce_ruleset) confines
    the calling thread and what it starts; the caller closes the fd. LandlockError when
    Landlock is missing."""
    abi = abi_version()
    if abi < 1:
        raise LandlockError("Landlock is not available in this kernel")
    libc = _libc()
    handled = _fs_rights(abi)
    attr = RulesetAttr(handled, 0, 0)
    size = 8
    if abi >= 4:
        size = 16
        if not spec.get("network"):
            attr.handled_access_net = NET_BIND_TCP | NET_CONNECT_TCP
    if abi >= 6:
        size = 24
        attr.scoped = SCOPE_SIGNAL | SCOPE_ABSTRACT_UNIX_SOCKET
    ruleset = libc.syscall(SYS_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0))
    if ruleset < 0:
        raise LandlockError(ctypes.get_errno(), "landlock_create_ruleset failed")
    try:
        write = handled & ~READ
        rules = read_rules(list(spec.get("hidden", ())))
        rules += [(path, READ | write) for path in spec.get("write", ())]
        # Only the harmless character devices, never all of /dev (as root that would include disks).
        device = WRITE_FILE | (TRUNCATE if abi >= 3 else 0)
        rules += [(path, device) for path in WRITABLE_DEVICES] + [("/dev/pts", device), ("/dev/shm", write)]
        for path, rights in rules:
            _add_path_rule(libc, ruleset, path, rights & handled)
    except BaseException:
        os.close(ruleset)
        raise
    return ruleset, abi


def enforce_ruleset(ruleset: int, libc: ctypes.CDLL | None = None) -> None:
    """no_new_privs, then the ruleset, on the calling thread (and everything it starts later)."""
    libc = libc or _libc()
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise LandlockError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS) failed")
    if libc.syscall(SYS_RESTRICT_SELF, ctypes.c_int(ruleset), ctypes.c_uint32(0)) != 0:
        raise LandlockError(ctypes.get_errno(), "landlock_restrict_self failed")


def restrict_self(spec: dict) -> int:
    """Confine this process (and what it execs) to `spec` (see build_ruleset). Returns the
    ABI used; raises LandlockError when Landlock is missing."""
    ruleset, abi = build_ruleset(spec)
    try:
        enforce_ruleset(ruleset)
    finally:
        os.close(ruleset)
    return abi


def _add_path_rule(libc: ctypes.CDLL, ruleset: int, path: str, rights: int) -> None:
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return  # gone since it was listed, or unreachable: nothing to allow
    try:
        if not os.path.isdir(path):
            rights &= FILE_RIGHTS
        if not rights:
            return
        rule = PathBeneathAttr(rights, fd)
        if libc.syscall(SYS_ADD_RULE, ctypes.c_int(ruleset), ctypes.c_int(RULE_PATH_BENEATH),
                        ctypes.byref(rule), ctypes.c_uint32(0)) != 0:
            raise LandlockError(ctypes.get_errno(), f"landlock_add_rule failed for {path}")
    finally:
        os.close(fd)


def parse_spec(argv: list[str]) -> tuple[dict, list[str]]:
    """The launcher's options (no argparse or json: they would double its start-up time)."""
    spec: dict = {"write": [], "hidden": [], "network": False}
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--":
            return spec, argv[i + 1:]
        if arg == "--network":
            spec["network"] = True
        elif arg in ("--write", "--hide") and i + 1 < len(argv):
            spec["write" if arg == "--write" else "hidden"].append(argv[i + 1])
            i += 1
        else:
            raise ValueError(f"unknown launcher option {arg!r}")
        i += 1
    raise ValueError("no command after --")


def launcher_args(spec: dict) -> list[str]:
    """The options for `spec`, the inverse of parse_spec."""
    args = [a for path in spec.get("write", ()) for a in ("--write", str(path))]
    args += [a for path in spec.get("hidden", ()) for a in ("--hide", str(path))]
    return args + (["--network"] if spec.get("network") else [])


def main(argv: list[str]) -> int:
    try:
        spec, command = parse_spec(argv)
        if not command:
            raise ValueError("no command after --")
    except ValueError as err:
        sys.stderr.write(f"agentica sandbox (landlock): {err}\n")
        return 2
    try:
        restrict_self(spec)
    except OSError as err:
        sys.stderr.write(f"agentica sandbox (landlock): {err}\n")
        return 126
    try:
        os.execvp(command[0], command)
    except OSError as err:
        sys.stderr.write(f"agentica sandbox (landlock): cannot run {command[0]}: {err}\n")
        return 127


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
