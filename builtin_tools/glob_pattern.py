"""Glob patterns (`*`, `?`, `[...]`, `{a,b}`, `**`) compiled to regular expressions over
'/'-separated relative paths."""

from __future__ import annotations

import functools
import re


def _translate(pattern: str) -> str:
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "*":
            if pattern.startswith("**", i):
                at_segment_start = i == 0 or pattern[i - 1] == "/"
                after = i + 2
                if at_segment_start and pattern.startswith("/", after):
                    out.append("(?:[^/]*/)*")  # "**/": zero or more folders
                    i = after + 1
                    continue
                if at_segment_start and after == n:
                    out.append(".*")  # trailing "**": everything below
                    i = after
                    continue
                out.append("[^/]*")  # "**" inside a name is just "*"
                i = after
                continue
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            end = pattern.find("]", i + 2)
            if end == -1:
                out.append(re.escape(c))
            else:
                body = pattern[i + 1 : end]
                if body.startswith("!"):
                    body = "^" + body[1:]
                out.append("[" + body.replace("\\", "\\\\") + "]")
                i = end
        elif c == "{":
            end = pattern.find("}", i)
            if end == -1:
                out.append(re.escape(c))
            else:
                options = pattern[i + 1 : end].split(",")
                out.append("(?:" + "|".join(_translate(option) for option in options) + ")")
                i = end
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


@functools.lru_cache(maxsize=256)
def compile_glob(pattern: str) -> re.Pattern[str]:
    """A regex matching whole relative paths. A leading "./" in the pattern is ignored."""
    while pattern.startswith("./"):
        pattern = pattern[2:]
    return re.compile(_translate(pattern) + r"\Z", re.DOTALL)


def has_magic(segment: str) -> bool:
    return any(ch in segment for ch in "*?[{")
