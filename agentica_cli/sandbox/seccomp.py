"""A seccomp filter that keeps a sandboxed command off the network and away from local services'
Unix sockets: standard library only (ctypes), so the `python -I -S` launchers can load it too.

Landlock (ABI >= 4) only handles TCP connect and bind, and only for plain TCP: an MPTCP socket
(`socket(AF_INET, SOCK_STREAM, IPPROTO_MPTCP)`) or `sendto(..., MSG_FASTOPEN)` on a TCP socket
reached the host's 127.0.0.1 services, and UDP (DNS) and raw sockets were never covered. So,
when the command has no network, `socket()` is refused (EPERM) for every family but AF_UNIX:
no IPv4/IPv6 socket exists to connect, send to or fast-open with, whatever the protocol, and
no netlink socket to change the host's routes. `socketpair` (AF_UNIX only) stays. io_uring is
refused too (EPERM), since IORING_OP_SOCKET/CONNECT would create and connect sockets without
the socket() system call. Syscalls of another ABI than the native one (32-bit x86 programs'
`socketcall`, x32) are refused, as a filter written for one ABI cannot vouch for another.

Unix sockets: a named one (ssh-agent's, docker.sock, a database's, one planted in the project)
is reached by its path, and neither backend can refuse connect() by path (Landlock has no such
right yet; under bubblewrap a socket needs no write permission on a read-only mount). So unless
the policy allows Unix sockets (`[sandbox] unix_sockets = true`), `socket(AF_UNIX, ...)` is
refused too, on both backends: no socket exists to connect() with. `socketpair()` stays (pipes
between a program's own processes: Python's multiprocessing.Pipe, node's IPC channel).

The filter is installed on the calling thread only (no TSYNC): Landlock's spawn thread
installs it after no_new_privs and before it starts the command, which inherits it;
bubblewrap is started from a thread that installed it (sandbox_threads.py).
Architectures: x86_64 and aarch64; elsewhere `supported()` is False and the sandbox reports
the network as not confined.
"""

from __future__ import annotations

import ctypes
import errno
import platform
import struct

PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 22, 2
AF_UNIX = 1
_RET_ALLOW = 0x7FFF0000
_RET_ERRNO = 0x00050000
_X32_BIT = 0x40000000

# machine -> (AUDIT_ARCH value, socket nr, io_uring_setup nr, reject x32 numbers)
_ARCHES = {
    "x86_64": (0xC000003E, 41, 425, True),
    "aarch64": (0xC00000B7, 198, 425, False),
}

# BPF opcodes
_LD_W_ABS = 0x20  # BPF_LD | BPF_W | BPF_ABS
_JEQ_K = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
_JGE_K = 0x35  # BPF_JMP | BPF_JGE | BPF_K
_RET_K = 0x06  # BPF_RET | BPF_K
_NR, _ARCH, _ARG0 = 0, 4, 16  # offsets in struct seccomp_data (arg0's low 32 bits: little-endian)


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def _machine() -> str:
    return platform.machine().lower()


def supported() -> bool:
    return _machine() in _ARCHES


def _insn(code: int, jt: int, jf: int, k: int) -> bytes:
    return struct.pack("HBBI", code, jt, jf, k)


def socket_filter(*, inet: bool = False, unix: bool = True, machine: str | None = None) -> bytes:
    """The BPF program (sock_filter array) described above, for `machine` (default: this one):
    socket() allowed for AF_UNIX when `unix`, for every other family when `inet`; io_uring and
    foreign ABIs always refused. Both allowed: no filter is needed (see needed())."""
    arch, nr_socket, nr_io_uring, x32 = _ARCHES[machine or _machine()]
    deny = _RET_ERRNO | errno.EPERM
    prog = [
        _insn(_LD_W_ABS, 0, 0, _ARCH),
        _insn(_JEQ_K, 1, 0, arch),  # native ABI: go on; else refuse
        _insn(_RET_K, 0, 0, deny),
        _insn(_LD_W_ABS, 0, 0, _NR),
    ]
    if x32:
        prog += [_insn(_JGE_K, 0, 1, _X32_BIT), _insn(_RET_K, 0, 0, deny)]
    prog += [
        _insn(_JEQ_K, 0, 1, nr_io_uring),
        _insn(_RET_K, 0, 0, deny),
        _insn(_JEQ_K, 1, 0, nr_socket),
        _insn(_RET_K, 0, 0, _RET_ALLOW),
        _insn(_LD_W_ABS, 0, 0, _ARG0),  # socket(domain, ...)
        _insn(_JEQ_K, 0, 1, AF_UNIX),
        _insn(_RET_K, 0, 0, _RET_ALLOW if unix else deny),
        _insn(_RET_K, 0, 0, _RET_ALLOW if inet else deny),
    ]
    return b"".join(prog)


def network_filter(machine: str | None = None) -> bytes:
    """No socket but AF_UNIX (the filter for a command without network that may use Unix sockets)."""
    return socket_filter(inet=False, unix=True, machine=machine)


def needed(*, inet: bool, unix: bool) -> bool:
    """Whether a command with these rights needs the filter at all."""
    return not (inet and unix)


_PROGRAMS: dict[tuple[bool, bool], bytes] = {}


def confine_sockets(libc: ctypes.CDLL | None = None, *, inet: bool = False, unix: bool = True) -> None:
    """Install the filter for these rights on the calling thread (no_new_privs must be set);
    nothing when both are allowed. OSError if the kernel refuses it; nothing is done on an
    architecture the filter does not know (supported() is False: the sandbox says so)."""
    if not needed(inet=inet, unix=unix) or not supported():
        return
    program = _PROGRAMS.get((inet, unix))
    if program is None:
        program = _PROGRAMS[(inet, unix)] = socket_filter(inet=inet, unix=unix)
    libc = libc or ctypes.CDLL(None, use_errno=True)
    buffer = ctypes.create_string_buffer(program, len(program))
    prog = _SockFprog(len(program) // 8, ctypes.cast(buffer, ctypes.c_void_p))
    if libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(prog), 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_SECCOMP) failed")


def confine_network(libc: ctypes.CDLL | None = None) -> None:
    """No socket but AF_UNIX on the calling thread (see confine_sockets)."""
    confine_sockets(libc, inet=False, unix=True)


def main(argv: list[str]) -> int:
    """`python -I -S seccomp.py [--network] [--unix-sockets] -- CMD...`: no_new_privs, the
    filter, exec CMD (for a command that only gets to choose an argv inside bubblewrap)."""
    import os
    import sys

    inet = unix = False
    while argv and argv[0] != "--":
        flag = argv.pop(0)
        if flag == "--network":
            inet = True
        elif flag == "--unix-sockets":
            unix = True
        else:
            sys.stderr.write(f"agentica sandbox (seccomp): unknown option {flag!r}\n")
            return 2
    command = argv[1:]
    if not command:
        sys.stderr.write("agentica sandbox (seccomp): no command after --\n")
        return 2
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(38, 1, 0, 0, 0) != 0:  # PR_SET_NO_NEW_PRIVS
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS) failed")
        confine_sockets(libc, inet=inet, unix=unix)
    except OSError as err:
        sys.stderr.write(f"agentica sandbox (seccomp): {err}\n")
        return 126
    try:
        os.execvp(command[0], command)
    except OSError as err:
        sys.stderr.write(f"agentica sandbox (seccomp): cannot run {command[0]}: {err}\n")
        return 127


if __name__ == "__main__":
    import sys as _sys

    _sys.exit(main(_sys.argv[1:]))
