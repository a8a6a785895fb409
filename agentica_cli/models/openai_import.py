"""`import openai` without loading every API type it ships.

`openai/__init__.py` runs `openai/types/__init__.py`, which imports the pydantic models of
every endpoint (responses, evals, graders, realtime, ...): most of the ~0.8 s `import openai`
costs on a 2-core machine, before a `-p` run can send its first request. agentica uses the
client, its streaming and its exceptions, none of those types.

`import_openai()` imports the SDK with the packages under `openai.types` made lazy: such a
package's `__init__` runs only when one of its names is actually looked up; until then its
submodules import on their own (`from openai.types.chat import completion_create_params`
loads that one module). Nothing is faked: every name resolves to the SDK's own object, just
later; a look-up of a name the package's `__init__` defines runs that `__init__` in full.
When `openai` was imported before (by the user's code), it is used as it is.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import os
import re
import sys
import threading
import types
from typing import Any

LAZY_ROOT = "openai.types"
_lock = threading.RLock()


class _LazyPackage(types.ModuleType):
    """A package whose `__init__` runs on the first look-up of a name it does not have yet."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        state = self.__dict__
        submodule = f"{self.__name__}.{name}"
        path = state.get("__path__") or []
        if _is_submodule(path, name):
            return importlib.import_module(submodule)  # the import machinery sets the attribute
        # The SDK's layout: ChatCompletionFunctionToolParam lives in chat_completion_function_tool_param.py.
        guess = _snake(name)
        if guess != name and _is_submodule(path, guess):
            value = getattr(importlib.import_module(f"{self.__name__}.{guess}"), name, _MISSING)
            if value is not _MISSING:
                state[name] = value
                return value
        with _lock:
            if not state.get("_agentica_init_done"):
                state["_agentica_init_done"] = True  # before running it: its own imports look names up
                _run_init(self)
        if name in state:
            return state[name]
        raise AttributeError(f"module {self.__name__!r} has no attribute {name!r}")


_MISSING = object()


def _snake(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()


def _is_submodule(path: list[str], name: str) -> bool:
    return any(os.path.isfile(os.path.join(p, name + ".py")) or os.path.isdir(os.path.join(p, name)) for p in path)


def _run_init(module: types.ModuleType) -> None:
    origin = module.__dict__.get("_agentica_init_file")
    if origin:
        with open(origin, "rb") as fh:
            code = compile(fh.read(), origin, "exec")
        exec(code, module.__dict__)


class _LazyInitLoader(importlib.abc.Loader):
    def __init__(self, origin: str):
        self.origin = origin

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        module = _LazyPackage(spec.name)
        module.__dict__["_agentica_init_file"] = self.origin
        return module

    def exec_module(self, module: types.ModuleType) -> None:
        pass  # the real __init__ runs on demand (_LazyPackage.__getattr__)


class _LazyTypesFinder(importlib.abc.MetaPathFinder):
    """Finds `openai.types` and its subpackages as lazy packages; everything else as usual."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        if fullname != LAZY_ROOT and not fullname.startswith(LAZY_ROOT + "."):
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is None:
                continue
            if spec.submodule_search_locations is None or not spec.origin or not spec.origin.endswith("__init__.py"):
                return spec  # a plain module: imported as usual
            lazy = importlib.machinery.ModuleSpec(fullname, _LazyInitLoader(spec.origin), origin=spec.origin,
                                                  is_package=True)
            lazy.submodule_search_locations = list(spec.submodule_search_locations)
            lazy.has_location = True
            return lazy
        return None


def import_openai() -> types.ModuleType:
    """The `openai` module, imported the lazy way unless it was already imported."""
    module = sys.modules.get("openai")
    if module is not None:
        return module
    with _lock:
        if not any(isinstance(f, _LazyTypesFinder) for f in sys.meta_path):
            sys.meta_path.insert(0, _LazyTypesFinder())
        import openai

    return openai
