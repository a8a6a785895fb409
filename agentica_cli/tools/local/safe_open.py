"""Opening paths beneath an allowed root folder without following a symlink on the way.

The path sandbox resolves a path with realpath and checks that it is inside an allowed root.
Between that check and the open, a folder on the way can be swapped for a symlink that leads
out (renameat2 RENAME_EXCHANGE), and an open by path would follow it. So the checked path is
opened relative to a descriptor of its root, and no component may be a symlink at open time
(the check already resolved every symlink, so a symlink found now means the tree changed):

- Linux >= 5.6: one openat2() call with RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
  RESOLVE_NO_MAGICLINKS (the kernel refuses any symlink, `..` escape or /proc magic link);
- elsewhere: each component opened with O_NOFOLLOW | O_DIRECTORY relative to the previous one.

Either way the caller gets a descriptor; everything after (stat, read, temp file, rename) is
done relative to it, so a later swap of names cannot redirect the operation.
"""

from __future__ import annotations

import errno
import os
import stat
import sys
from collections.abc import Callable, Sequence

_RESOLVE_NO_MAGICLINKS = 0x02
_RESOLVE_NO_SYMLINKS = 0x04
_RESOLVE_BENEATH = 0x08
_SYS_OPENAT2 = 437  # the same number on every Linux architecture (new syscalls are unified)
_RESOLVE = _RESOLVE_BENEATH | _RESOLVE_NO_SYMLINKS | _RESOLVE_NO_MAGICLINKS
_EAGAIN_RETRIES = 5  # openat2 may say EAGAIN when a rename raced the lookup; try again

DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC | os.O_NOFOLLOW


class PathChangedError(PermissionError):
    """A symlink was found on a path that had none when it was checked: the tree is changing."""


def changed_error(shown: str) -> PathChangedError:
    return PathChangedError(
        f"{shown}: a folder or file on the way is now a symlink that was not there when the path "
        "was checked (something is changing the folder tree), or the path has a symlink loop. "
        "Nothing was read or written; try again."
    )


_Openat2 = Callable[[int, str, int], int]
_openat2_impl: _Openat2 | bool | None = False  # False: not probed yet


def _load_openat2() -> _Openat2 | None:
    """openat2 through libc's syscall(), or None when the kernel (or a seccomp filter) lacks it."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        syscall = libc.syscall
    except (OSError, AttributeError):
        return None
    syscall.restype = ctypes.c_long

    class OpenHow(ctypes.Structure):
        _fields_ = [("flags", ctypes.c_uint64), ("mode", ctypes.c_uint64), ("resolve", ctypes.c_uint64)]

    def openat2(dir_fd: int, path: str, flags: int) -> int:
        # RESOLVE_NO_SYMLINKS covers the last component too; O_NOFOLLOW | O_DIRECTORY on a
        # symlink would say ENOTDIR instead of ELOOP.
        how = OpenHow((flags | os.O_CLOEXEC) & ~os.O_NOFOLLOW, 0, _RESOLVE)
        raw = os.fsencode(path)
        for _ in range(_EAGAIN_RETRIES):
            fd = syscall(ctypes.c_long(_SYS_OPENAT2), ctypes.c_int(dir_fd), ctypes.c_char_p(raw),
                         ctypes.byref(how), ctypes.c_size_t(ctypes.sizeof(how)))
            if fd >= 0:
                return int(fd)
            code = ctypes.get_errno()
            if code != errno.EAGAIN:
                break
        raise OSError(code, os.strerror(code), path)

    probe_dir = os.open("/", DIR_FLAGS)
    try:
        os.close(openat2(probe_dir, ".", os.O_RDONLY | os.O_DIRECTORY))
    except OSError:  # ENOSYS (kernel < 5.6), EPERM (a seccomp filter), ...: walk instead
        return None
    finally:
        os.close(probe_dir)
    return openat2


def _openat2() -> _Openat2 | None:
    global _openat2_impl
    if _openat2_impl is False:
        _openat2_impl = _load_openat2()
    return _openat2_impl  # type: ignore[return-value]


def use_component_walk(enabled: bool = True) -> None:
    """Force the portable O_NOFOLLOW walk (tests exercise both ways on a kernel with openat2)."""
    global _openat2_impl
    _openat2_impl = None if enabled else False


def _check_parts(parts: Sequence[str]) -> None:
    for part in parts:
        if part in ("", ".", "..") or "/" in part:
            raise ValueError(f"not a resolved path component: {part!r}")


def _open_component(dir_fd: int, name: str, flags: int, shown: str) -> int:
    try:
        return os.open(name, flags | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dir_fd)
    except OSError as err:
        if err.errno == errno.ELOOP:  # the last component is a symlink
            raise changed_error(shown) from None
        if err.errno == errno.ENOTDIR and flags & os.O_DIRECTORY:
            # O_DIRECTORY | O_NOFOLLOW on a symlink also says ENOTDIR. A symlink there now, or
            # a folder again (swapped back meanwhile), means the tree is changing.
            try:
                mode = os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode
            except OSError:
                mode = 0
            if stat.S_ISLNK(mode) or stat.S_ISDIR(mode):
                raise changed_error(shown) from None
        raise


def open_root(root: str | os.PathLike[str]) -> int:
    """A descriptor of an allowed root folder (already resolved by realpath)."""
    return os.open(root, DIR_FLAGS)


def open_beneath(root_fd: int, parts: Sequence[str], flags: int, shown: str) -> int:
    """Open root/parts[0]/.../parts[-1] with `flags` (no O_CREAT), following no symlink.

    `parts` are the components of an already resolved path below the root (no `.` or `..`);
    an empty `parts` opens the root itself. A symlink anywhere raises PathChangedError.
    """
    _check_parts(parts)
    openat2 = _openat2()
    if openat2 is not None:
        try:
            return openat2(root_fd, "/".join(parts) or ".", flags)
        except OSError as err:
            if err.errno in (errno.ELOOP, errno.EXDEV):
                raise changed_error(shown) from None
            raise OSError(err.errno, err.strerror, shown) from None
    if not parts:
        return os.open(".", flags | os.O_CLOEXEC, dir_fd=root_fd)
    fd = root_fd
    try:
        for part in parts[:-1]:
            next_fd = _open_component(fd, part, DIR_FLAGS, shown)
            if fd != root_fd:
                os.close(fd)
            fd = next_fd
        return _open_component(fd, parts[-1], flags, shown)
    finally:
        if fd != root_fd:
            os.close(fd)


def open_dir_beneath(root_fd: int, parts: Sequence[str], shown: str, *, create: bool = False) -> int:
    """A readable descriptor of the folder root/parts; with `create`, missing folders are made
    one by one (like mkdir -p), each opened without following symlinks before going on."""
    try:
        return open_beneath(root_fd, parts, DIR_FLAGS, shown)
    except FileNotFoundError:
        if not create:
            raise
    fd = root_fd
    try:
        for part in parts:
            try:
                next_fd = _open_component(fd, part, DIR_FLAGS, shown)
            except FileNotFoundError:
                try:
                    os.mkdir(part, 0o777, dir_fd=fd)
                except FileExistsError:  # made meanwhile by someone else: open what is there
                    pass
                next_fd = _open_component(fd, part, DIR_FLAGS, shown)
            if fd != root_fd:
                os.close(fd)
            fd = next_fd
        result, fd = fd, root_fd
        return result if result != root_fd else os.dup(root_fd)
    finally:
        if fd != root_fd:
            os.close(fd)


def lstat_at(dir_fd: int, name: str) -> os.stat_result | None:
    """The entry `name` in the folder `dir_fd`, not following a symlink; None when missing."""
    try:
        return os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return None
