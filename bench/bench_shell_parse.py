"""What reading a command with bash's grammar costs each permission check (issue 25, item 1).

Every execute call is parsed (tree-sitter-bash, then the walker in cli/shell_grammar.py) when
rules, grants and the "always" offer are checked; a deny rule also walks wrappers and
`bash -c` code. Measured in-process over typical command lines, after the first parse (which
loads the grammar: shown apart).

    .venv/bin/python bench/bench_shell_parse.py [--rounds 2000]

Prints the figures, then one `RESULT {json}` line.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import emit_result, median, print_machine

COMMANDS = [
    "pytest -q tests/test_x.py -k 'slow and not flaky'",
    "git status --short",
    "git diff HEAD~1 -- src/ | head -50",
    "cd build && make -j4 2>&1 | tail -20",
    'grep -rn "def main" --include=*.py . > /dev/null; echo $?',
    "FOO=1 python -m pytest -x --maxfail=1 tests/",
    "ls -la; cat notes.txt && wc -l notes.txt",
    "git status $'\\''; echo X > PWNED; rm -rf important #'",
]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=2000)
    args = parser.parse_args()
    print_machine("shell parsing for permission checks")
    start = time.perf_counter()
    from agentica_cli.app.permissions.permission_rules import PermissionRule
    from agentica_cli.app.permissions.shell_parts import parse_command

    parse_command("true")
    first_ms = (time.perf_counter() - start) * 1000
    deny = PermissionRule.parse("deny", "execute(rm -rf *)")
    parse_us: list[float] = []
    deny_us: list[float] = []
    for _ in range(args.rounds):
        for command in COMMANDS:
            t0 = time.perf_counter()
            parse_command(command)
            t1 = time.perf_counter()
            deny.matches("execute", {"command": command}, Path("."))
            t2 = time.perf_counter()
            parse_us.append((t1 - t0) * 1e6)
            deny_us.append((t2 - t1) * 1e6)
    figures = {"first_parse_ms": round(first_ms, 1), "parse_us": round(median(parse_us), 1),
               "parse_p99_us": round(sorted(parse_us)[int(len(parse_us) * 0.99)], 1),
               "deny_rule_us": round(median(deny_us), 1)}
    print(f"first parse (imports tree-sitter, loads the grammar): {figures['first_parse_ms']} ms")
    print(f"parse per command line: median {figures['parse_us']} us, p99 {figures['parse_p99_us']} us")
    print(f"one deny rule checked (parse + wrappers): median {figures['deny_rule_us']} us")
    emit_result("shell", figures)


if __name__ == "__main__":
    main()
