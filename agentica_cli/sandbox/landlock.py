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

What Landlock can express: an allow-list, where a rule on a folder covers everything beneath
it. Read (and execute) is granted on every entry of `/` except along the paths to the hidden
secrets, where it is granted entry by entry, so a secret's siblings stay readable and the
secret is not (its parent folders can still be listed: names, not contents; a symlink that
leads to a secret or above it gets no rule of its own, the real path stays reachable). /dev
is read the same way, with only null, zero, full, random, urandom, shm and the fd links
readable: no disks, no terminals (/dev/pts, /dev/tty*, /dev/console).

Write is granted on the writable folders the same way around what they must not change
(`grant_except`): a writable folder with a protected entry (.git, .agentica, ...:
policy.PROTECTED_NAMES) or a hidden secret inside gets no write rule of its own; each of its
other entries gets one. Landlock cannot subtract, and a right to create files in a folder
covers every folder beneath it (.git/hooks too), so in such a folder (most projects: .git)
commands cannot create, delete or rename entries at its top level (they can in every
subfolder, and can rewrite the top-level files that exist): docs/security.md says so. Write
is also granted on a few character devices (/dev/null, /dev/zero, ...; never a terminal) and
/dev/shm. Device ioctls are denied (ABI >= 5: no TIOCSTI through a terminal fd). TCP connect
and bind are denied (ABI >= 4) unless the network is allowed, and seccomp.py refuses every
socket but AF_UNIX (MPTCP, UDP, raw: what Landlock does not cover), and AF_UNIX too unless
the policy allows Unix sockets (a named socket is reached by path, which Landlock cannot
refuse). Signals to and abstract Unix sockets of processes outside the sandbox are denied (ABI >= 6). Capabilities are
dropped (run by root, a command would keep them all: mknod, modules, the network config).
"""

from __future__ import annotations

import ctypes
import errno
import os
import sys

SYS_CREATE_RULESET, SYS_ADD_RULE, SYS_RESTRICT_SELF = 444, 445, 446  # the same on every architecture
CREATE_RULESET_VERSION = 1
RULE_PATH_BENEATH, RULE_NET_PORT = 1, 2
PR_SET_NO_NEW_PRIVS = 38

EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
REMOVE_DIR, REMOVE_FILE, MAKE_CHAR, MAKE_DIR = 1 << 4, 1 << 5, 1 << 6, 1 << 7
MAKE_REG, MAKE_SOCK, MAKE_FIFO, MAKE_BLOCK, MAKE_SYM = 1 << 8, 1 << 9, 1 << 10, 1 << 11, 1 << 12
REFER, TRUNCATE, IOCTL_DEV = 1 << 13, 1 << 14, 1 << 15  # ABI 2, ABI 3, ABI 5
NET_BIND_TCP, NET_CONNECT_TCP = 1 << 0, 1 << 1  # ABI 4
SCOPE_ABSTRACT_UNIX_SOCKET, SCOPE_SIGNAL = 1 << 0, 1 << 1  # ABI 6

READ = EXECUTE | READ_FILE | READ_DIR
WRITABLE_DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom")
READABLE_DEV_ENTRIES = frozenset({"null", "zero", "full", "random", "urandom", "shm", "fd", "stdin", "stdout",
                                  "stderr"})
# Never granted to a writable folder: device nodes (root could mknod a disk) and device ioctls.
NOT_WRITE = MAKE_CHAR | MAKE_BLOCK | IOCTL_DEV
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
    if abi >= 5:
        rights |= IOCTL_DEV
    return rights


def unreadable_devices() -> list[str]:
    """The entries of /dev a command may not open: all but READABLE_DEV_ENTRIES."""
    try:
        names = os.listdir("/dev")
    except OSError:
        return []
    return [os.path.join("/dev", n) for n in names if n not in READABLE_DEV_ENTRIES]


def grant_except(root: str, excluded: list[str], rights: int) -> list[tuple[str, int]]:
    """(path, rights) granting `rights` on `root` and everything beneath it except the
    `excluded` paths: the folders on the way to an excluded path get no rule, their other
    entries one each. Symlinks get none (a rule follows the link, maybe out of `root`)."""
    root = os.path.normpath(root)
    inside = {os.path.normpath(e) for e in excluded}
    inside = {e for e in inside if e.startswith(root.rstrip("/") + "/")}
    if not inside:
        return [(root, rights)]
    rules: list[tuple[str, int]] = []
    try:
        names = os.listdir(root)
    except OSError:
        return rules
    for name in names:
        path = os.path.join(root, name)
        if path in inside or os.path.islink(path):
            continue
        if any(e.startswith(path + "/") for e in inside):
            rules += grant_except(path, sorted(inside), rights) if os.path.isdir(path) else []
        else:
            rules.append((path, rights))
    return rules


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
    "protected": [...], "network": bool, "unix_sockets": bool (seccomp's, not Landlock's)}, and
    the ABI it was built for. Enforcing it (enforce_ruleset) confines
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
        write = handled & ~READ & ~NOT_WRITE
        hidden = list(spec.get("hidden", ()))
        rules = read_rules(hidden + unreadable_devices())
        # Write without read: what a writable folder may read comes from the read rules (a
        # secret inside it stays unreadable).
        excluded = hidden + list(spec.get("protected", ()))
        for path in spec.get("write", ()):
            rules += grant_except(path, excluded, write)
        # Only the harmless character devices, never all of /dev (as root that would include disks)
        # and never a terminal.
        device = WRITE_FILE | (TRUNCATE if abi >= 3 else 0)
        rules += [(path, device) for path in WRITABLE_DEVICES] + [("/dev/shm", write)]
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


PR_CAPBSET_DROP, PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL = 24, 47, 4
_CAPABILITY_VERSION_3 = 0x20080522
_CAP_LAST_FILE = "/proc/sys/kernel/cap_last_cap"


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


def drop_capabilities(libc: ctypes.CDLL | None = None) -> None:
    """Every capability out of the calling thread's sets, the bounding and ambient sets too,
    so nothing it execs gets one back (root included: a uid-0 exec gains only what the bounding
    set holds). A process without capabilities has nothing to drop and pays one capget."""
    libc = libc or _libc()
    header = _CapHeader(_CAPABILITY_VERSION_3, 0)
    data = (_CapData * 2)()
    if libc.capget(ctypes.byref(header), data) != 0:
        raise LandlockError(ctypes.get_errno(), "capget failed")
    if not any(d.effective | d.permitted | d.inheritable for d in data):
        return
    try:
        with open(_CAP_LAST_FILE) as f:
            last = int(f.read())
    except (OSError, ValueError):
        last = 63
    for cap in range(last + 1):  # needs CAP_SETPCAP, so before the sets are cleared
        libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0)
    libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    empty = (_CapData * 2)()
    if libc.capset(ctypes.byref(header), empty) != 0:
        raise LandlockError(ctypes.get_errno(), "capset (dropping every capability) failed")


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
            if ctypes.get_errno() == errno.EBADFD:  # a link to a pipe or socket (/dev/stderr): no file to allow
                return
            raise LandlockError(ctypes.get_errno(), f"landlock_add_rule failed for {path}")
    finally:
        os.close(fd)


_LIST_OPTIONS = {"--write": "write", "--hide": "hidden", "--protect": "protected"}


def parse_spec(argv: list[str]) -> tuple[dict, list[str]]:
    """The launcher's options (no argparse or json: they would double its start-up time)."""
    spec: dict = {"write": [], "hidden": [], "protected": [], "network": False, "unix_sockets": False}
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--":
            return spec, argv[i + 1:]
        if arg == "--network":
            spec["network"] = True
        elif arg == "--unix-sockets":
            spec["unix_sockets"] = True
        elif arg in _LIST_OPTIONS and i + 1 < len(argv):
            spec[_LIST_OPTIONS[arg]].append(argv[i + 1])
            i += 1
        else:
            raise ValueError(f"unknown launcher option {arg!r}")
        i += 1
    raise ValueError("no command after --")


def launcher_args(spec: dict) -> list[str]:
    """The options for `spec`, the inverse of parse_spec."""
    args = [a for path in spec.get("write", ()) for a in ("--write", str(path))]
    args += [a for path in spec.get("hidden", ()) for a in ("--hide", str(path))]
    args += [a for path in spec.get("protected", ()) for a in ("--protect", str(path))]
    return args + (["--network"] if spec.get("network") else []) + (
        ["--unix-sockets"] if spec.get("unix_sockets") else [])


def main(argv: list[str]) -> int:
    try:
        spec, command = parse_spec(argv)
        if not command:
            raise ValueError("no command after --")
    except ValueError as err:
        sys.stderr.write(f"agentica sandbox (landlock): {err}\n")
        return 2
    try:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # -I leaves this folder out
        from seccomp import confine_sockets  # beside this file (the launcher imports no package)

        libc = _libc()
        drop_capabilities(libc)
        restrict_self(spec)
        confine_sockets(libc, inet=spec["network"], unix=spec["unix_sockets"])
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
