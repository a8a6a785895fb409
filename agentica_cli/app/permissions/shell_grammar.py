"""A command line read with bash's grammar (tree-sitter-bash), for permission decisions.

What a rule or grant is checked against must be what bash will run. tree-sitter-bash gives
the syntax tree; this module walks it and accepts only the nodes it fully understands. Every
word is turned into the argument bash would pass (quotes removed, escapes applied), or marked
as *not literal* when its value is only known when it runs (`$x`, `${x}`, `~`, `{a,b}`).

Anything else makes the whole command *opaque*: a parse error, an ANSI-C `$'...'` or a
`$"..."` quote, a here-document, a command or process substitution, arithmetic, `[[ ... ]]`,
a line continuation, a non-ASCII space, a control or invisible character, or a node type this
walker does not know. An opaque command is matched by no allow rule and no grant, and by every
deny and ask rule (see permission_rules.py): the check fails closed.

tree-sitter is imported on the first parse only (not on the --help or first-paint path).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

# Node types this walker reads. Any other node type anywhere in the tree: opaque.
_LIST_NODES = frozenset({"program", "list", "pipeline"})
_COMPOUND_NODES = frozenset(
    {"subshell", "compound_statement", "if_statement", "elif_clause", "else_clause", "while_statement",
     "for_statement", "do_group", "case_statement", "case_item", "negated_command", "function_definition"}
)
_SEPARATOR_TOKENS = frozenset({";", "&", "&&", "||", "|", "|&", "\n"})  # not `;;`: only inside case
# Named nodes that mean "this cannot be accounted for", with the reason shown to the user.
_OPAQUE_NODES = {
    "ansi_c_string": "an ANSI-C $'...' quote",
    "translated_string": "a $\"...\" quote",
    "command_substitution": "a command substitution",
    "process_substitution": "a process substitution",
    "heredoc_redirect": "a here-document",
    "heredoc_body": "a here-document",
    "arithmetic_expansion": "arithmetic",
    "c_style_for_statement": "arithmetic",
    "subscript": "an array subscript (arithmetic)",
    "brace_expression": "a brace expansion",
}
# Characters bash's lexer does not treat as blanks but a reader takes for spaces (or does not
# see at all): a rule checked against what the text looks like would be fooled.
_BLANKS = " \t\n"


class Opaque(Exception):
    """The command holds something the permission check cannot account for."""


@dataclass
class SimpleCommand:
    """One simple command: its words as bash passes them (`known` of them literal, from the start)."""

    words: list[str]
    literal: list[bool]
    redirects: list[str] = field(default_factory=list)  # targets of redirections to/from files
    kind: str = "command"  # or "assignment" (X=1 alone), "declaration" (export, local, unset ...)
    assignments: int = 0  # how many leading words are NAME=value assignments

    @property
    def known(self) -> int:
        """How many words, from the first, have a value known before the command runs."""
        for index, literal in enumerate(self.literal):
            if not literal:
                return index
        return len(self.words)

    @property
    def is_literal(self) -> bool:
        return all(self.literal)


@dataclass
class ParsedCommand:
    commands: list[SimpleCommand] = field(default_factory=list)
    hazards: list[str] = field(default_factory=list)  # why no grant or allow rule may cover it
    opaque: str = ""  # non-empty: why the check cannot account for the command at all


def unusual_characters(text: str) -> list[str]:
    """Characters in a command that are neither printable ASCII nor a plain blank nor a
    visible non-ASCII letter: non-ASCII spaces, controls, format/invisible characters."""
    found = []
    for char in text:
        if char in _BLANKS or " " < char < "\x7f":
            continue
        category = unicodedata.category(char)
        if category[0] in ("Z", "C") or char == "\x7f":
            found.append(char)
    return found


@lru_cache(maxsize=1)
def _parser() -> Any:
    import tree_sitter
    import tree_sitter_bash

    return tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))


def parse_shell(command: str) -> ParsedCommand:
    """`command` read as bash reads it; see the module docstring for what makes it opaque."""
    result = ParsedCommand()
    odd = unusual_characters(command)
    if odd:
        shown = ", ".join(sorted({f"U+{ord(c):04X}" for c in odd}))
        result.opaque = f"unusual whitespace or invisible characters ({shown})"
        return result
    if "\\\n" in command:
        result.opaque = "a line continuation"  # bash joins the lines before splitting words
        return result
    try:
        source = command.encode("utf-8")
    except UnicodeEncodeError:
        result.opaque = "text that is not valid UTF-8"
        return result
    tree = _parser().parse(source)
    root = tree.root_node
    try:
        _check_tree(root, source)
        walker = _Walker(result)
        walker.statement(root)
    except Opaque as why:
        result.commands = []
        result.hazards = []
        result.opaque = str(why)
        return result
    result.hazards = sorted(set(result.hazards))
    return result


# Nodes that make one word: their pieces touch, with nothing between them.
_WORD_NODES = frozenset({"concatenation", "string", "command_name", "simple_expansion", "expansion", "raw_string",
                         "word", "number", "variable_assignment"})
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# After these a `#` starts a comment (bash: only at the start of a word).
_BEFORE_COMMENT = frozenset(b" \t\n;&|")


def _check_tree(root: Any, source: bytes) -> None:
    """Refuse a tree with errors, a node that means "cannot be accounted for", or text the
    tree does not cover: tree-sitter skips what it cannot read (`\\ x` after a `;`), and only
    blanks, newlines and comments may lie between the nodes it made."""
    if root.has_error:
        raise Opaque("text the shell grammar cannot parse")
    if source[: root.start_byte].strip(b" \t\n") or source[root.end_byte :].strip(b" \t\n"):
        raise Opaque("text the shell grammar did not read")
    nodes = []
    stack = [root]
    while stack:
        node = stack.pop()
        nodes.append(node)
        stack.extend(node.children)
    for node in nodes:
        _check_node(node, source)
    for node in nodes:  # what the tree left out, once every node is known to be one this reads
        covered = node.start_byte
        previous = None
        for child in [*node.children, None] if node.child_count else ():
            end = child.start_byte if child is not None else node.end_byte
            gap = source[covered:end]
            if gap and (node.type in _WORD_NODES or gap.strip(b" \t\n")):
                raise Opaque("text the shell grammar did not read")
            if b"\n" in gap and not _newline_may_follow(node, previous):
                raise Opaque("a command the shell grammar continues over a line break")  # bash ends it there
            if child is not None:
                covered = child.end_byte
                previous = child


def _check_node(node: Any, source: bytes) -> None:
    """Refuse a node that cannot be accounted for, with the reason shown to the user."""
    if node.is_missing or node.type == "ERROR":
        raise Opaque("text the shell grammar cannot parse")
    reason = _OPAQUE_NODES.get(node.type)
    if reason:
        raise Opaque(reason)
    if not node.is_named and node.text != node.type.encode():
        raise Opaque("text the shell grammar did not read")  # a token that swallowed more (`" "` -> ' "')
    if node.type == "comment" and node.start_byte and source[node.start_byte - 1] not in _BEFORE_COMMENT:
        raise Opaque("a # that bash does not read as a comment")
    if node.type == "negated_command" and node.parent is not None and node.parent.type == "pipeline":
        raise Opaque("a ! inside a pipeline")  # bash takes `!` only at a pipeline's start
    first = node.children[0].type if node.child_count else ""
    if node.type == "test_command" and first == "[[":
        raise Opaque("a [[ ... ]] test (arithmetic and pattern matching)")
    if node.type == "compound_statement" and first == "((":
        raise Opaque("arithmetic")
    if node.type == "compound_statement" and not _is_brace_group(node, source):
        raise Opaque("a { that bash does not read as a group")  # `{}` is a command to bash
    if node.type == "test_command" and not _is_bracket_test(node, source):
        raise Opaque("a [ that bash does not read as a test")  # `[ab]` is a command (a glob) to bash


def _is_bracket_test(node: Any, source: bytes) -> bool:
    """`[ WORDS ]`: the `[` and `]` stand alone, as bash needs them to run the `[` builtin."""
    children = node.children
    if len(children) < 2 or children[0].type != "[" or children[-1].type != "]":
        return False
    after_open = source[children[0].end_byte : children[0].end_byte + 1]
    before_close = source[children[-1].start_byte - 1 : children[-1].start_byte]
    return after_open in (b" ", b"\t") and before_close in (b" ", b"\t")


def _is_brace_group(node: Any, source: bytes) -> bool:
    """`{ LIST; }`: a blank after `{`, and `}` where a command may start (after `;`, `&`, a newline)."""
    children = node.children
    if len(children) < 2 or children[0].type != "{" or children[-1].type != "}":
        return False
    after_open = source[children[0].end_byte : children[0].end_byte + 1]
    before_close = source[children[0].end_byte : children[-1].start_byte].rstrip(b" \t")
    return after_open in (b" ", b"\t", b"\n") and before_close[-1:] in (b";", b"&", b"\n")


def _newline_may_follow(node: Any, previous: Any) -> bool:
    """Whether bash reads on past a line break after `previous` inside `node`: between the
    statements of a program or compound, and after `|`, `&&`, `||` (but a simple command ends)."""
    if node.type in ("program", "compound_statement", "subshell", "do_group", "if_statement", "elif_clause",
                     "else_clause", "while_statement", "for_statement", "case_statement", "case_item",
                     "function_definition"):
        return True
    if node.type in ("pipeline", "list"):
        return previous is not None and not previous.is_named and previous.type in ("|", "|&", "&&", "||")
    return False


def _text(node: Any) -> str:
    return node.text.decode("utf-8")


class _Walker:
    def __init__(self, result: ParsedCommand):
        self.result = result

    def hazard(self, reason: str) -> None:
        self.result.hazards.append(reason)

    # -- statements -------------------------------------------------------------------------

    def statement(self, node: Any) -> None:
        kind = node.type
        if kind in _LIST_NODES:
            for child in node.children:
                if child.is_named:
                    self.statement(child)
                elif child.type not in _SEPARATOR_TOKENS:
                    raise Opaque(f"a shell construct the permission check does not know ({child.type!r})")
            return
        if kind == "comment":
            return
        if kind == "command":
            self.command(node)
            return
        if kind in ("variable_assignment", "variable_assignments"):
            assignments = [node] if kind == "variable_assignment" else [c for c in node.children if c.is_named]
            words, literal = [], []
            for assignment in assignments:
                value, is_literal = self.assignment(assignment)
                words.append(value)
                literal.append(is_literal)
            self.result.commands.append(SimpleCommand(words, literal, kind="assignment", assignments=len(words)))
            return
        if kind in ("declaration_command", "unset_command"):
            self.declaration(node)
            return
        if kind == "redirected_statement":
            self.redirected(node)
            return
        if kind == "test_command":  # [ ... ]: the words of the test, no command runs
            self.hazard("a compound statement or subshell")
            return
        if kind in _COMPOUND_NODES:
            self.hazard("a compound statement or subshell")
            for child in node.children:
                if child.is_named and child.type in _STATEMENT_NODES:
                    self.statement(child)
                elif child.is_named:
                    self.words_of(child)  # `for x in WORDS`, `case WORD`: values checked, not commands
            return
        raise Opaque(f"a shell construct the permission check does not know ({kind})")

    def redirected(self, node: Any) -> None:
        body = None
        redirects = []
        for child in node.children:
            if child.type in ("file_redirect", "herestring_redirect"):
                redirects.append(child)
            elif child.is_named and body is None:
                body = child
            elif child.is_named:
                raise Opaque(f"a shell construct the permission check does not know ({child.type})")
        if body is not None:
            before = len(self.result.commands)
            self.statement(body)
            target = self.result.commands[before] if len(self.result.commands) > before else None
        else:
            target = None
        for redirect in redirects:
            self.redirect(redirect, target)

    def command(self, node: Any) -> None:
        words: list[str] = []
        literal: list[bool] = []
        made = SimpleCommand(words, literal)
        redirects = []
        previous_word = None
        for child in node.children:
            kind = child.type
            if kind not in ("file_redirect", "herestring_redirect", "comment"):
                if previous_word is not None and child.start_byte <= previous_word.end_byte:
                    # two words with no blank between: bash reads one word there (`a\\|`)
                    raise Opaque("words the shell grammar splits differently from bash")
                previous_word = child
            if not child.is_named:
                raise Opaque(f"a shell construct the permission check does not know ({kind!r})")
            if kind == "variable_assignment":
                value, is_literal = self.assignment(child)
                if len(words) == made.assignments:
                    made.assignments += 1
            elif kind == "command_name":
                named = [c for c in child.children if c.is_named]
                if len(named) != 1:
                    raise Opaque("a command name the permission check cannot read")
                value, is_literal = self.word(named[0])
                if is_literal and _has_unquoted_glob(named[0]):
                    is_literal = False  # the name bash runs depends on the files there
            elif kind in ("file_redirect", "herestring_redirect"):
                redirects.append(child)
                continue
            elif kind == "comment":
                continue
            else:
                value, is_literal = self.word(child)
            words.append(value)
            literal.append(is_literal)
        self.result.commands.append(made)
        for redirect in redirects:
            self.redirect(redirect, made)

    def declaration(self, node: Any) -> None:
        words: list[str] = []
        literal: list[bool] = []
        for child in node.children:
            if not child.is_named:
                if child.type in ("export", "declare", "typeset", "local", "readonly", "unset", "unsetenv"):
                    words.append(child.type)
                    literal.append(True)
                    continue
                raise Opaque(f"a shell construct the permission check does not know ({child.type!r})")
            if child.type == "variable_assignment":
                value, is_literal = self.assignment(child)
            elif child.type == "variable_name":
                value, is_literal = _text(child), True
            else:
                value, is_literal = self.word(child)
            words.append(value)
            literal.append(is_literal)
        self.hazard("a variable declaration")  # declare -i, local -n... change what later words mean
        self.result.commands.append(SimpleCommand(words, literal, kind="declaration"))

    def assignment(self, node: Any) -> tuple[str, bool]:
        """NAME=value (or NAME+=value) as one word; an array value `(a b)` is read word by word."""
        name = ""
        operator = ""
        value, is_literal = "", True
        for child in node.children:
            if child.type == "variable_name" and not name:
                name = _text(child)
                if not _NAME.fullmatch(name):
                    raise Opaque("an assignment the permission check cannot read")
            elif not child.is_named and child.type in ("=", "+="):
                operator = child.type
            elif child.type == "array":
                values = [self.word(c) for c in child.children if c.is_named and c.type != "comment"]
                value = "(" + " ".join(v for v, _ in values) + ")"
                is_literal = all(lit for _, lit in values)
                self.hazard("an array assignment")
            elif child.is_named:
                value, is_literal = self.word(child)
            else:
                raise Opaque(f"a shell construct the permission check does not know ({child.type!r})")
        if not name or not operator:
            raise Opaque("an assignment the permission check cannot read")
        return f"{name}{operator}{value}", is_literal

    def redirect(self, node: Any, target: SimpleCommand | None) -> None:
        operator = ""
        destination = None
        for child in node.children:
            if child.type == "file_descriptor":
                continue
            if not child.is_named:
                operator += child.type
            elif destination is None:
                destination = child
            else:
                raise Opaque("a redirection the permission check cannot read")
        if destination is None:
            raise Opaque("a redirection the permission check cannot read")
        value, is_literal = self.word(destination)
        if node.type == "herestring_redirect":
            self.hazard("a here-string")
            return
        if operator in (">&", "<&") and is_literal and (value.isdigit() or value == "-"):
            return  # 2>&1, >&2, <&0: descriptor duplication
        if operator in (">", ">>", ">|", "&>", "&>>", "<", ">&") and is_literal and value == "/dev/null":
            return
        self.hazard("a redirection to or from a file")
        if target is not None:
            target.redirects.append(value)

    # -- words ----------------------------------------------------------------------------

    def words_of(self, node: Any) -> None:
        """Values that are not commands (a `for` list, a `case` word): read them so that
        whatever cannot be accounted for still makes the command opaque."""
        if node.type in ("word", "string", "raw_string", "number", "concatenation", "simple_expansion", "expansion"):
            self.word(node)
            return
        if node.type in ("variable_name", "comment", "extglob_pattern"):
            return
        for child in node.children:
            if child.is_named:
                if child.type in _STATEMENT_NODES:
                    self.statement(child)
                else:
                    self.words_of(child)

    def word(self, node: Any) -> tuple[str, bool]:
        """(the argument bash passes, whether it is known before the command runs)."""
        kind = node.type
        if kind == "word":
            return _unescape_word(_text(node))
        if kind == "number":
            text = _text(node)
            if not text.isascii() or not text.replace("-", "").isalnum():
                raise Opaque("a number the permission check cannot read")
            return text, True
        if kind == "raw_string":
            text = _text(node)
            if len(text) < 2 or text[0] != "'" or text[-1] != "'":
                raise Opaque("a quote the permission check cannot read")
            return text[1:-1], True
        if kind == "string":
            return self.double_quoted(node)
        if kind == "concatenation":
            parts = []
            literal = True
            for child in node.children:
                if not child.is_named:
                    raise Opaque(f"a shell construct the permission check does not know ({child.type!r})")
                value, is_literal = self.word(child)
                parts.append(value)
                literal = literal and is_literal
            joined = "".join(parts)
            if literal and _brace_expands(node):
                literal = False
            return joined, literal
        if kind in ("simple_expansion", "expansion"):
            _check_expansion(node)
            return _text(node), False
        raise Opaque(f"a shell construct the permission check does not know ({kind})")

    def double_quoted(self, node: Any) -> tuple[str, bool]:
        children = node.children
        if len(children) < 2 or children[0].type != '"' or children[-1].type != '"':
            raise Opaque("a quote the permission check cannot read")
        parts = []
        literal = True
        for child in children[1:-1]:
            if child.type == "string_content":
                parts.append(_unescape_double_quoted(_text(child)))
            elif child.type in ("simple_expansion", "expansion"):
                _check_expansion(child)
                parts.append(_text(child))
                literal = False
            else:
                raise Opaque(f"a shell construct the permission check does not know ({child.type})")
        # tree-sitter leaves out the text between children it did not name (e.g. a lone `$`):
        # the pieces must add up to the whole quote, or something was not read.
        covered = children[0].end_byte
        for child in children[1:]:
            if child.start_byte != covered:
                raise Opaque("a quote the permission check cannot read")
            covered = child.end_byte
        return "".join(parts), literal


_STATEMENT_NODES = frozenset(
    {*_LIST_NODES, *_COMPOUND_NODES, "command", "variable_assignment", "variable_assignments",
     "declaration_command", "unset_command", "redirected_statement", "test_command"}
)


def _check_expansion(node: Any) -> None:
    """`$x`, `$1`, `$@`, `${x}`: a value read when the command runs. Anything more
    (`${x:-...}`, `${x/...}`, `${!x}`) can hold words of its own: opaque."""
    named = [c for c in node.children if c.is_named]
    anonymous = [c.type for c in node.children if not c.is_named]
    if len(named) != 1 or named[0].type not in ("variable_name", "special_variable_name"):
        raise Opaque("a parameter expansion the permission check cannot read")
    if node.type == "simple_expansion" and anonymous != ["$"]:
        raise Opaque("a parameter expansion the permission check cannot read")
    if node.type == "expansion" and anonymous != ["${", "}"]:
        raise Opaque("a parameter expansion the permission check cannot read")


def _unescape_word(text: str) -> tuple[str, bool]:
    """An unquoted word: backslash escapes removed. Not literal when bash would expand it
    (a leading `~`, an unquoted `$`, `{a,b}`)."""
    out = []
    literal = True
    i = 0
    unquoted = []
    while i < len(text):
        char = text[i]
        if char == "\\" and i + 1 < len(text):
            out.append(text[i + 1])
            unquoted.append(" ")  # an escaped character expands nothing
            i += 2
            continue
        if char == "\\":
            raise Opaque("a trailing backslash")
        if char in " \t\n;&|<>()'\"":
            raise Opaque("a word the shell grammar reads differently from bash")  # bash ends a word there
        if char in "$`" or (char == "~" and (i == 0 or text[i - 1] in "=:")):
            literal = False  # `~` expands at a word's start and after = or : (a=~/x), not in HEAD~1
        out.append(char)
        unquoted.append(char)
        i += 1
    if _braces_in("".join(unquoted)):
        literal = False
    return "".join(out), literal


def _unescape_double_quoted(text: str) -> str:
    """Inside "...": a backslash escapes only $ ` " \\ (and newline)."""
    out = []
    i = 0
    while i < len(text):
        char = text[i]
        if char == "\\" and i + 1 < len(text) and text[i + 1] in '$`"\\\n':
            if text[i + 1] != "\n":
                out.append(text[i + 1])
            i += 2
            continue
        if char in "$`":
            raise Opaque("an expansion inside quotes the permission check cannot read")
        out.append(char)
        i += 1
    return "".join(out)


def _braces_in(unquoted: str) -> bool:
    """Whether unquoted text could brace-expand: a `{` with a `,` or `..` somewhere before a
    later `}` (bash pairs braces further than it seems: `{a},b}` is `a}` and `b`)."""
    start = unquoted.find("{")
    end = unquoted.rfind("}")
    if start < 0 or end < start:
        return False
    inner = unquoted[start + 1 : end]
    return "," in inner or ".." in inner


def _brace_expands(node: Any) -> bool:
    """A concatenation such as `{a,b}` or `x{1..3}`: tree-sitter splits it into words."""
    pieces = []
    for child in node.children:
        if child.type == "word":
            pieces.append(_unescaped_skeleton(_text(child)))
        else:
            pieces.append("_")  # a quoted part: no brace in it counts
    return _braces_in("".join(pieces))


def _unescaped_skeleton(text: str) -> str:
    out = []
    i = 0
    while i < len(text):
        if text[i] == "\\":
            out.append("_")
            i += 2
            continue
        out.append(text[i])
        i += 1
    return "".join(out)


def _has_unquoted_glob(node: Any) -> bool:
    if node.type == "word":
        return any(c in _unescaped_skeleton(_text(node)) for c in "*?[")
    if node.type == "concatenation":
        return any(_has_unquoted_glob(c) for c in node.children)
    return False
