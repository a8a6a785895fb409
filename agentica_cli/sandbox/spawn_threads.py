"""Long-lived threads that prepare themselves once and then start the sandbox's processes.

Linux keeps no_new_privs, seccomp filters and the Landlock domain per *thread*, a child gets
them from the thread that forked it, and a parent-death signal (bubblewrap's
--die-with-parent) fires when that thread ends. So a process started from a thread that
installed a filter starts with it, and must be started from a thread that lives as long as
the process should. A `PreparedThread` is such a thread: it runs `setup` once (bubblewrap's:
the seccomp filter), then every job handed to it, for the life of the process. Jobs run one
at a time, in order. (Landlock's session thread, sandbox_session.py, makes one short-lived
thread per command instead: each command confines its own thread further.)
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, TypeVar

_T = TypeVar("_T")


class PreparedThread:
    def __init__(self, name: str, setup: Callable[[], None]):
        self.name = name
        self.setup = setup
        self.jobs: queue.SimpleQueue[tuple[Future[Any], Callable[[], Any]]] = queue.SimpleQueue()
        self.thread: threading.Thread | None = None
        self.lock = threading.Lock()

    def run(self, job: Callable[[], _T]) -> _T:
        """`job()` on this thread: its result, or its exception. A failed setup fails every job
        (fail closed: nothing starts without what setup installs)."""
        with self.lock:
            if self.thread is None:
                self.thread = threading.Thread(target=self._serve, daemon=True, name=self.name)
                self.thread.start()
        done: Future[_T] = Future()
        self.jobs.put((done, job))
        return done.result()

    @property
    def native_id(self) -> int | None:
        """The kernel's id of the thread once it runs (its /proc/self/task entry)."""
        return self.thread.native_id if self.thread is not None else None

    def _serve(self) -> None:
        setup_error: BaseException | None = None
        try:
            self.setup()
        except BaseException as exc:  # handed to every caller, whatever it is
            setup_error = exc
        while True:
            done, job = self.jobs.get()
            if setup_error is not None:
                done.set_exception(setup_error)
                continue
            try:
                done.set_result(job())
            except BaseException as exc:  # handed to the caller, whatever it is
                done.set_exception(exc)
