"""Bash itself as the oracle for the permission check's shell parsing.

`random_command(rng)` builds a command line from pieces of shell (quotes, `$'...'`, escapes,
`#`, `;`, `&&`, `|`, `&`, blanks including non-ASCII ones, here-documents, substitutions,
assignments, subshells ...). `bash_runs(text)` runs it in bash with no command reachable: PATH
is an empty folder and `command_not_found_handle` (which bash calls with the argv of every
simple command it cannot find) writes that argv to a file instead. Every command name the
generator uses is a made-up `zq...` word, so nothing but that handler runs; the fuzzed line's
own effects stay inside a temporary folder.

`compare(text)` returns None when the parser and bash agree, else a description:
- every command bash ran must be one the parser reported, with the same words (the security
  direction: nothing runs that a rule or grant was not checked against);
- when the line is "exact" (no `||`, no mutation), every command the parser reported ran.
The check only applies when the parser claims to understand the line (not opaque, every word
literal); an opaque line is refused by allow rules and grants anyway.

Run longer from the command line:  SHELL_FUZZ_CASES=20000 .venv/bin/python tests/shell_oracle.py
"""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

from agentica_cli.app.permissions.shell_grammar import parse_shell

NAMES = ["zq", "zqa", "zq1", "'zq'b", 'z"q"', "z\\q", "zq\\ x", "zq-x", "zq.y", "zq=", "zq\\#"]
WORD_PIECES = [
    "a", "b1", "-f", "--opt=v", "x=y", "'a b'", "'a\"b'", "''", '"a b"', '"a\\"b"', '"a\\\\b"', '"a\\$b"',
    "\"a'b\"", '""', '"x\\y"', '"#"', "'#'", "\\ ", "\\;", "\\#", "\\'", '\\"', "\\\\", "\\a", "\\&", "\\|",
    "$'a\\'b'", "$'\\x41'", "$'x'", '$"t"', "#", "a#b", "$x", "${x}", "$(zqs)", "`zqs`", "<(zqs)", "$((1+2))",
    "*", "?", "[ab]", "~", "~/d", "a~b", "x:~/d", "HEAD~1", "{a,b}", "{1..2}", "{}", "=", "a=", "%",
    "@", "!", ":", ",", "^", "+", "]",
    "'", '"', "$", "\\", "(", ")", "{", "}", "é", "日本",
]
BLANKS = [" ", " ", " ", "  ", "\t", " \t", "\u00a0", "\u2003", "\u3000", "\u200b", "\r", "\f", "\v", "\u2028"]
SEPARATORS = [";", " ; ", " && ", "&&", " | ", "|", " & ", "\n", " || ", ";;", " |& "]
REDIRECTS = [">/dev/null", " 2>&1", " >../out/r", " 2>../out/e", " <<<w", " >>../out/r", " &>/dev/null"]
HEREDOCS = ["<<EOF\nzq\nEOF\n", "<<'EOF'\n$(zqs)\nEOF\n", "<<-EOF\n\tq\n\tEOF\n"]
COMMENTS = [" # c", " #c; zqc", "#c", " # zqc && zqd", "\t# x"]
PRELUDE = (
    'command_not_found_handle() { printf "%s\\0" "$@" > "$ZQ_OUT/$BASHPID.$RANDOM"; return 0; }\n'
    "trap wait EXIT\n"
)


def _word(rng: random.Random) -> str:
    return "".join(rng.choice(WORD_PIECES) for _ in range(rng.choice((1, 1, 1, 2, 2, 3))))


def _simple(rng: random.Random) -> str:
    blank = rng.choice(BLANKS[:6]) if rng.random() < 0.85 else rng.choice(BLANKS)
    parts = []
    if rng.random() < 0.15:
        parts.append(rng.choice(["A=1", "A='x y'", 'B="q"', "C=", "A=$x"]))
    parts.append(rng.choice(NAMES))
    parts += [_word(rng) for _ in range(rng.randint(0, 4))]
    text = blank.join(parts)
    roll = rng.random()
    if roll < 0.15:
        text += rng.choice(REDIRECTS)
    elif roll < 0.2:
        text += " " + rng.choice(HEREDOCS)
    return text


def random_command(rng: random.Random) -> tuple[str, bool]:
    """(a command line, whether every command in it should run: no `||`, no mutation)."""
    pieces = [_simple(rng)]
    exact = True
    for _ in range(rng.choice((0, 0, 1, 1, 2, 3))):
        separator = rng.choice(SEPARATORS)
        exact = exact and "||" not in separator
        pieces.append(separator)
        roll = rng.random()
        if roll < 0.08:
            pieces.append(f"( {_simple(rng)} )")
        elif roll < 0.14:
            pieces.append(f"{{ {_simple(rng)}; }}")
        elif roll < 0.18:
            pieces.append(f"if {_simple(rng)}; then {_simple(rng)}; fi")
        elif roll < 0.2:
            pieces.append(f"! {_simple(rng)}")
        elif roll < 0.22:
            pieces.append(f"case {_word(rng)} in *) {_simple(rng)};; esac")
        elif roll < 0.24:
            pieces.append(f"for v in {_word(rng)}; do {_simple(rng)}; done")
            exact = False  # the list may expand to no word, or several
        elif roll < 0.26:
            pieces.append(f"zqf() {{ {_simple(rng)}; }}; zqf")
            exact = False  # zqf is a function: bash runs its body, not a command named zqf
        else:
            pieces.append(_simple(rng))
    if rng.random() < 0.2:
        pieces.append(rng.choice(COMMENTS))
    text = "".join(pieces)
    if rng.random() < 0.25:  # a mutation: one odd character somewhere
        at = rng.randrange(len(text) + 1)
        text = text[:at] + rng.choice(["'", '"', "\\", "#", "$", "`", ";", " ", "\u00a0", "&", "|", "(", ")", "\n",
                                        "{", "}", "<", ">"]) + text[at:]
        exact = False
    return text, exact


class Bash:
    """Runs command lines in bash with nothing reachable but the argv-recording handler."""

    def __init__(self) -> None:
        self.bash = shutil.which("bash")
        self.root = Path(tempfile.mkdtemp(prefix="shell-oracle-"))
        (self.root / "out").mkdir()
        (self.root / "empty-path").mkdir()

    def close(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)

    def runs(self, text: str) -> list[tuple[str, ...]] | None:
        """The argv of every simple command bash ran for `text`; None when that cannot be compared."""
        record = Path(tempfile.mkdtemp(dir=self.root))
        work = record / "cwd"
        work.mkdir()
        (record / "out").mkdir()
        env = {"PATH": str(self.root / "empty-path"), "HOME": str(work), "LC_ALL": "C.UTF-8", "ZQ_OUT": str(record)}
        try:
            subprocess.run([self.bash, "--norc", "--noprofile", "-c", PRELUDE + text], cwd=work, env=env,
                           stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           timeout=10, check=False)
        except subprocess.TimeoutExpired:
            pass
        if any(work.iterdir()):
            shutil.rmtree(record, ignore_errors=True)
            return None  # a redirection made a file here: a glob may have matched it (bash expands, we do not)
        commands = []
        for path in sorted(record.iterdir()):
            if path.is_file() and path.name[0].isdigit():
                data = path.read_bytes().decode("utf-8", errors="surrogateescape")
                commands.append(tuple(data.split("\0")[:-1]))
        shutil.rmtree(record, ignore_errors=True)
        return commands


def understood(text: str) -> list[tuple[str, ...]] | None:
    """The argv the parser says each command gets (assignments left out: bash does not pass
    them), or None when it does not claim to understand the line."""
    parsed = parse_shell(text)
    if parsed.opaque or any(not c.is_literal for c in parsed.commands):
        return None
    commands = [tuple(c.words[c.assignments:]) for c in parsed.commands if c.kind == "command"]
    if any(not words or "/" in words[0] or not words[0].startswith("z") for words in commands):
        # bash runs a name with a slash as a path, `%1` as a job, `:` as a builtin: the handler
        # would not see them; only the generator's made-up names are compared
        return None
    return commands


def compare(bash: Bash, text: str, exact: bool) -> str | None:
    ours = understood(text)
    if ours is None:
        return None
    theirs = bash.runs(text)
    if theirs is None:
        return None
    exact = exact and "!" not in text  # `! cmd` fails, and `&&` then skips what follows
    unseen = set(theirs) - set(ours)  # a loop runs a command more than once: which ones ran is what counts
    if unseen:
        return f"bash ran {sorted(unseen)} that the parser did not report (it reported {ours})"
    if exact and Counter(ours) != Counter(theirs):
        return f"the parser reported {ours}, bash ran {theirs}"
    return None


def fuzz(cases: int, seed: int) -> tuple[int, int, list[tuple[str, str]]]:
    """(cases generated, cases the parser claimed to understand and bash checked, failures)."""
    rng = random.Random(seed)
    bash = Bash()
    checked = 0
    failures = []
    try:
        for _ in range(cases):
            text, exact = random_command(rng)
            if understood(text) is None:
                continue
            checked += 1
            problem = compare(bash, text, exact)
            if problem:
                failures.append((text, problem))
    finally:
        bash.close()
    return cases, checked, failures


if __name__ == "__main__":
    count = int(os.environ.get("SHELL_FUZZ_CASES", "5000"))
    seed = int(os.environ.get("SHELL_FUZZ_SEED", str(random.randrange(1 << 30))))
    total, checked, failed = fuzz(count, seed)
    print(f"seed {seed}: {total} generated, {checked} understood and checked against bash, {len(failed)} differ")
    for text, problem in failed[:30]:
        print(repr(text), "->", problem)
    sys.exit(1 if failed else 0)
