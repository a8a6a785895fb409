"""No import circles between the package's modules, and the layout's arrows (docs/architecture.md).

An AST walk of every import statement (at module level or inside a function: a lazy import
is still a dependency), `from . import x` included; imports under `if TYPE_CHECKING:` are left
out of the arrows (they never run) but not of the circle check (two modules that name each other
for their types are still one knot). Importing `a.b.c` also runs `a/__init__` and `a/b/__init__`,
so those count too, except the importer's own parent packages (already being imported).
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("agentica_cli", "builtin_tools")


def _modules() -> dict[str, tuple[Path, bool]]:
    found: dict[str, tuple[Path, bool]] = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            is_package = parts[-1] == "__init__"
            found[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
    return found


@functools.cache
def _parsed(path: Path) -> ast.Module:
    """A source file's tree, parsed once per test process (four tests walk every module, and
    parsing is most of their time; nothing changes the sources during a run, no test changes a tree)."""
    return ast.parse(path.read_text(encoding="utf-8"))


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imported_names(tree: ast.AST, package: str, type_checking: bool = False) -> list[str]:
    names: list[str] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node) and not type_checking:
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            names.append(module)
            names.extend(f"{module}.{alias.name}" for alias in node.names)  # `from pkg import submodule`
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return names


@functools.cache  # the same graph for every test of this process (they only read it)
def import_graph(type_checking: bool = False) -> dict[str, set[str]]:
    modules = _modules()
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, (path, is_package) in modules.items():
        package = name if is_package else name.rpartition(".")[0]
        own_parents = {".".join(name.split(".")[:i]) for i in range(1, name.count(".") + 1)}
        for target in _imported_names(_parsed(path), package, type_checking):
            parts = target.split(".")
            for i in range(1, len(parts) + 1):  # the module and the packages it runs on the way
                prefix = ".".join(parts[:i])
                if prefix in modules and prefix != name and prefix not in own_parents:
                    graph[name].add(prefix)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_no_module_takes_part_in_an_import_cycle() -> None:
    graph = import_graph()
    assert len(graph) > 100  # the walk found the package
    found = cycles(graph)
    assert not found, "import cycles:\n" + "\n".join(
        " <-> ".join(c) + "\n    " + "; ".join(f"{m} -> {sorted(graph[m] & set(c))}" for m in c) for c in found
    )


def test_the_walk_sees_lazy_relative_and_package_imports() -> None:
    # The detector itself: a lazy import inside a function and `from . import x` both count,
    # TYPE_CHECKING ones do not, and importing a submodule runs its package.
    tree = ast.parse(
        "from typing import TYPE_CHECKING\n"
        "from . import sibling\n"
        "if TYPE_CHECKING:\n    from agentica_cli.cli import repl\n"
        "def f():\n    from agentica_cli.agent.events import Error\n"
    )
    names = _imported_names(tree, "agentica_cli.tools")
    assert "agentica_cli.tools.sibling" in names and "agentica_cli.agent.events" in names
    assert "agentica_cli.tui.repl" not in names
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


# The layers of docs/architecture.md, top to bottom. A module may import its own layer and any
# layer below it; the front ends (tui, headless, acp) sit side by side and never import each other.
FRONT_ENDS = ("agentica_cli.tui", "agentica_cli.headless", "agentica_cli.acp", "agentica_cli.mcp_serve")
APP_MAY_USE = ("agentica_cli.sandbox", "agentica_cli.checkpoints", "agentica_cli.extensions",
               "agentica_cli.toolkits", "builtin_tools")


def _under(module: str, *packages: str) -> bool:
    return any(module == p or module.startswith(p + ".") for p in packages)


def test_layout_arrows() -> None:
    """cli -> {tui, headless, acp} -> app -> deep -> agent -> {models, tools} (docs/architecture.md):
    tools/ never imports agent/ or builtin_tools/; agent/ never imports app/, a front end or
    builtin_tools/; app/ never imports cli/ or a front end; front ends never import each other or
    cli/; nothing below app/ imports DeepAgent's module."""
    graph = import_graph()
    upper = ("agentica_cli.cli", "agentica_cli.app", *FRONT_ENDS)
    for module, targets in graph.items():
        if _under(module, "agentica_cli.tools"):
            bad = {t for t in targets if _under(t, "agentica_cli.agent", "agentica_cli.deep", "builtin_tools", *upper)}
            assert not bad, f"{module} imports {bad}"
        if _under(module, "agentica_cli.agent"):
            bad = {t for t in targets if _under(t, "builtin_tools", "agentica_cli.deep", *upper)}
            assert not bad, f"{module} imports {bad}"
        if _under(module, "agentica_cli.app"):
            bad = {t for t in targets if _under(t, "agentica_cli.cli", *FRONT_ENDS)}
            assert not bad, f"{module} (the application core) imports {bad}"
        if _under(module, "agentica_cli.telemetry"):  # an observer of the agent's events, beside every front end
            bad = {t for t in targets if _under(t, "agentica_cli.deep", "builtin_tools", *upper)}
            assert not bad, f"{module} (telemetry) imports {bad}"
        for front in FRONT_ENDS:
            if _under(module, front):
                others = [f for f in FRONT_ENDS if f != front]
                bad = {t for t in targets if _under(t, "agentica_cli.cli", *others)}
                assert not bad, f"{module} (front end {front}) imports {bad}"
        if "agentica_cli.deep" in targets:
            assert _under(module, *upper), f"{module} imports DeepAgent"


def test_tools_and_toolkits_stand_below_the_loop() -> None:
    """builtin_tools/ imports the loop only for the task tool (a sub-agent is an Agent), never the
    application or a front end; toolkits/ never import builtin_tools/: they share the web's address
    policy and HTML-to-Markdown with fetch_url through agentica_cli.tools.web_access, and the path
    sandbox, file reading and the shell engine through agentica_cli.tools.local."""
    graph = import_graph()
    for module, targets in graph.items():
        if _under(module, "builtin_tools"):
            bad = {t for t in targets if _under(t, "agentica_cli.agent", "agentica_cli.deep", "agentica_cli.app",
                                              "agentica_cli.cli", *FRONT_ENDS)}
            assert module == "builtin_tools.task" or not bad, f"{module} imports {bad}"
        if _under(module, "agentica_cli.toolkits"):
            bad = {t for t in targets if _under(t, "builtin_tools", "agentica_cli.agent", "agentica_cli.app")}
            assert not bad, f"{module} imports {bad}"
        if _under(module, "agentica_cli.tools.local"):  # below both tool sets: neither of them, nor the loop
            bad = {t for t in targets if _under(t, "agentica_cli.toolkits", "agentica_cli.agent", "agentica_cli.app")}
            assert not bad, f"{module} imports {bad}"


def test_the_core_and_the_headless_front_ends_import_no_terminal_ui_library() -> None:
    """app/, headless/ and acp/ never import rich, prompt_toolkit or typer (even lazily); app/ not acp
    either: what the terminal shows is the REPL's business, the command line is cli/'s."""
    for package, banned in (("app", ("rich", "prompt_toolkit", "typer", "acp")),
                            ("headless", ("rich", "prompt_toolkit", "typer")),
                            ("acp", ("rich", "prompt_toolkit", "typer")),
                            ("mcp_serve", ("rich", "prompt_toolkit", "typer", "acp")),
                            ("telemetry", ("rich", "prompt_toolkit", "typer", "acp"))):
        for path in (ROOT / "agentica_cli" / package).rglob("*.py"):
            tree = _parsed(path)
            for node in ast.walk(tree):
                names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                         else [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else [])
                bad = [n for n in names if n.split(".")[0] in banned]
                assert not bad, f"{path.relative_to(ROOT)} imports {bad}"


def test_no_cycle_even_through_type_checking_imports() -> None:
    """A circle that only `if TYPE_CHECKING:` closes is still two modules that need each other;
    the callee takes a Protocol instead (ExecutorHost, ReplHost)."""
    graph = import_graph(type_checking=True)
    found = cycles(graph)
    assert not found, "import cycles (TYPE_CHECKING imports included):\n" + "\n".join(
        " <-> ".join(c) for c in found)


def test_app_package_imports_nothing_heavy() -> None:
    """app/__init__ and its sub-packages' __init__ are on the start-up path: docstrings only."""
    for init in (ROOT / "agentica_cli" / "app").rglob("__init__.py"):
        tree = ast.parse(init.read_text(encoding="utf-8"))
        assert not [n for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))], init


def test_executor_and_slash_commands_do_not_name_their_callers_even_for_type_hints() -> None:
    # They take what they need through Protocols (ExecutorHost, ReplHost): no import back at all.
    for module, caller in (("agentica_cli/agent/executor.py", "agentica_cli.agent.agent"),
                           ("agentica_cli/tui/slash.py", "agentica_cli.tui.repl"),
                           ("agentica_cli/tui/checkpoint_commands.py", "agentica_cli.tui.repl"),
                           ("agentica_cli/tui/extension_commands.py", "agentica_cli.tui.repl"),
                           ("agentica_cli/tui/init_command.py", "agentica_cli.tui.repl")):
        tree = ast.parse((ROOT / module).read_text(encoding="utf-8"))
        imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
        assert caller not in imported, f"{module} imports {caller}"


# What only AppSession (app/session.py) wires: a front end that called one of these would be
# building its own copy of the session (the drifts of issue 27 came from exactly that).
SESSION_WIRING = ("policy_from_settings", "build_agent", "from_tables")


def _wiring_calls(tree: ast.AST) -> list[str]:
    """Calls of SESSION_WIRING functions, and `.create(...)` on a SessionStore (a `SessionStore()`
    call or a name that holds a store), as `name:line`."""
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
        if name in SESSION_WIRING:
            found.append(f"{name}:{node.lineno}")
        elif name == "create" and isinstance(func, ast.Attribute):
            receiver = func.value
            is_store = (isinstance(receiver, ast.Call) and getattr(receiver.func, "id", "") == "SessionStore") or (
                "store" in (getattr(receiver, "id", "") or getattr(receiver, "attr", "")).lower())
            if is_store:
                found.append(f"SessionStore.create:{node.lineno}")
    return found


def test_no_front_end_wires_a_session_itself() -> None:
    """The REPL, -p, stream-json, the Claude SDK protocol, ACP, `mcp serve` and the command line
    get the policy, the agent, the MCP servers and the stored session from AppSession.open/start
    (docs/architecture.md, "The application core"); none builds its own."""
    for module, (path, _) in _modules().items():
        if _under(module, "agentica_cli.cli", *FRONT_ENDS):
            assert not _wiring_calls(_parsed(path)), f"{module} wires a session itself: {_wiring_calls(_parsed(path))}"


def test_the_wiring_check_finds_each_kind_of_call() -> None:
    tree = ast.parse("policy_from_settings(s, d)\nruntime.build_agent(s)\nMcpServerSet.from_tables(t)\n"
                     "SessionStore().create(d)\nself.store.create(d)\nstore.create(d)\nlisting.create(d)\n")
    assert _wiring_calls(tree) == ["policy_from_settings:1", "build_agent:2", "from_tables:3",
                                   "SessionStore.create:4", "SessionStore.create:5", "SessionStore.create:6"]
