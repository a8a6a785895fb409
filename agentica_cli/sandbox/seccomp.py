"""A seccomp filter that keeps a Landlock-confined command off the network: standard library
only (ctypes), so the `python -I -S` launcher can load it too.

Landlock (ABI >= 4) only handles TCP connect and bind, and only for plain TCP: an MPTCP socket
(`socket(AF_INET, SOCK_STREAM, IPPROTO_MPTCP)`) or `sendto(..., MSG_FASTOPEN)` on a TCP socket
reached the host's 127.0.0.1 services, and UDP (DNS) and raw sockets were never covered. So,
when the command has no network, `socket()` is refused (EPERM) for every family but AF_UNIX:
no IPv4/IPv6 socket exists to connect, send to or fast-open with, whatever the protocol, and
no netlink socket to change the host's routes. `socketpair` (AF_UNIX only) stays. io_uring is
refused too (EPERM), since IORING_OP_SOCKET/CONNECT would create and connect sockets without
the socket() system call. Syscalls of another ABI than the native one (32-bit x86 programs'
`socketcall`, x32) are refused, as a filter written for one ABI cannot vouch for another.
Named AF_UNIX sockets stay reachable by path (docs/security.md: not protected).

The filter is installed on the calling thread only (no TSYNC): Landlock's spawn thread
installs it after no_new_privs and before it starts the command, which inherits it.
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


def network_filter(machine: str | None = None) -> bytes:
    """The BPF program (sock_filter array) described above, for `machine` (default: this one)."""
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
        _insn(_RET_K, 0, 0, _RET_ALLOW),
        _insn(_RET_K, 0, 0, deny),
    ]
    return b"".join(prog)


_PROGRAM: bytes | None = None


def confine_network(libc: ctypes.CDLL | None = None) -> None:
    """Install the filter on the calling thread (no_new_privs must be set). OSError if the
    kernel refuses it; nothing is done on an architecture the filter does not know."""
    global _PROGRAM
    if not supported():
        return
    if _PROGRAM is None:
        _PROGRAM = network_filter()
    libc = libc or ctypes.CDLL(None, use_errno=True)
    buffer = ctypes.create_string_buffer(_PROGRAM, len(_PROGRAM))
    prog = _SockFprog(len(_PROGRAM) // 8, ctypes.cast(buffer, ctypes.c_void_p))
    if libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(prog), 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_SECCOMP) failed")
