"""Tool, Function, FunctionCall and the two flow-control exceptions."""

from __future__ import annotations

import asyncio
import contextvars
import functools
import inspect
import json
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Literal

from agentica_cli.tools.context import ToolContext

__all__ = [
    "Function",
    "FunctionCall",
    "RetryAgentRun",
    "StopAgentRun",
    "Tool",
    "ToolContext",
    "format_tool_error",
]


class StopAgentRun(Exception):
    """Raised by a tool to end the whole run; `message` becomes the final answer."""

    def __init__(self, message: str = "Agent run stopped by tool."):
        super().__init__(message)
        self.message = message


class RetryAgentRun(Exception):
    """Raised by a tool to hand `message` to the model as the tool result and go on."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


FLAG_NAMES = (
    "concurrency_safe",
    "is_read_only",
    "is_destructive",
    "stop_after_tool_call",
    "show_result",
    "sanitize_arguments",
)


@dataclass(frozen=True)
class ToolSpec:
    """What `@tool` attaches to a function: overrides and flags, read by `Function.from_callable`."""

    name: str | None = None
    description: str | None = None
    concurrency_safe: bool = False
    is_read_only: bool = False
    is_destructive: bool = False
    stop_after_tool_call: bool = False
    show_result: bool = False
    sanitize_arguments: bool = True


TOOL_SPEC_ATTR = "__agentica_tool__"


_TOOL_THREADS: ThreadPoolExecutor | None = None
_TOOL_THREADS_LOCK = threading.Lock()
# The default executor has min(32, cores + 4) threads: 6 on a 2-core machine, which would
# serialise a reply of 16 concurrency-safe sync calls (mostly I/O wait) into three waves.
MAX_TOOL_THREADS = 64


def _tool_threads() -> ThreadPoolExecutor:
    global _TOOL_THREADS
    with _TOOL_THREADS_LOCK:
        if _TOOL_THREADS is None:
            _TOOL_THREADS = ThreadPoolExecutor(max_workers=MAX_TOOL_THREADS, thread_name_prefix="agentica-tool")
        return _TOOL_THREADS


def format_tool_error(exc: BaseException) -> str:
    message = str(exc).strip()
    return f"Error: {type(exc).__name__}: {message}" if message else f"Error: {type(exc).__name__}"


def stringify_result(value: Any) -> str:
    """Tool results go to the model as text; structured values as JSON."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        value = dump(mode="json")
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(value)


class Function:
    """One callable the model can use: name, description, JSON Schema, entrypoint and flags.

    The schema and the validator are built lazily from the entrypoint's signature the first
    time either is needed, then cached.
    """

    def __init__(
        self,
        name: str,
        entrypoint: Callable[..., Any] | None = None,
        description: str | None = None,
        parameters: dict[str, Any] | None = None,
        *,
        concurrency_safe: bool = False,
        is_read_only: bool = False,
        is_destructive: bool = False,
        stop_after_tool_call: bool = False,
        show_result: bool = False,
        sanitize_arguments: bool = True,
        validate_arguments: bool = True,
    ):
        self.name = name
        self.entrypoint = entrypoint
        self._description = description
        self._parameters = parameters
        self.concurrency_safe = concurrency_safe
        self.is_read_only = is_read_only
        self.is_destructive = is_destructive
        self.stop_after_tool_call = stop_after_tool_call
        self.show_result = show_result
        self.sanitize_arguments = sanitize_arguments
        # An explicit schema (e.g. an MCP server's inputSchema) is validated by its owner.
        self.validate_arguments = validate_arguments and parameters is None
        self._spec: Any = None
        # The keyword a ToolContext is passed as to an entrypoint with an explicit schema
        # (e.g. an MCP tool reporting progress); signature-based functions find their own.
        self.context_param: str | None = None

    @classmethod
    def from_callable(cls, fn: Callable[..., Any], **overrides: Any) -> Function:
        """A Function from a plain, async, `@tool`-decorated or bound-method callable.

        Keyword overrides (`name`, `description` and the flags) win over what `@tool` set.
        """
        spec: ToolSpec | None = getattr(fn, TOOL_SPEC_ATTR, None)
        if spec is None and isinstance(fn, functools.partial):
            spec = getattr(fn.func, TOOL_SPEC_ATTR, None)
        settings: dict[str, Any] = {}
        if spec is not None:
            settings = {k: getattr(spec, k) for k in ("name", "description", *FLAG_NAMES)}
        settings.update({k: v for k, v in overrides.items() if v is not None})
        unknown = set(settings) - {"name", "description", *FLAG_NAMES}
        if unknown:
            raise TypeError(f"unknown tool option(s): {', '.join(sorted(unknown))}")
        name = settings.pop("name", None) or getattr(fn, "__name__", None)
        if not name:
            raise ValueError(f"cannot infer a tool name for {fn!r}; pass name=")
        return cls(name=name, entrypoint=fn, description=settings.pop("description", None), **settings)

    # -- schema -------------------------------------------------------------------------

    @property
    def spec(self) -> Any:
        if self._spec is None:
            if self.entrypoint is None:
                raise ValueError(f"function {self.name!r} has no entrypoint")
            from agentica_cli.tools.schema import build_signature_spec

            self._spec = build_signature_spec(self.entrypoint)
        return self._spec

    @property
    def description(self) -> str:
        if self._description is None:
            self._description = self.spec.description if self.entrypoint is not None else ""
        return self._description

    @description.setter
    def description(self, value: str) -> None:
        self._description = value

    @property
    def parameters(self) -> dict[str, Any]:
        if self._parameters is None:
            self._parameters = self.spec.parameters
        return self._parameters

    @parameters.setter
    def parameters(self, value: dict[str, Any]) -> None:
        self._parameters = value
        self.validate_arguments = False

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description, "parameters": self.parameters}

    def to_openai(self) -> dict[str, Any]:
        return {"type": "function", "function": self.to_dict()}

    @property
    def is_async(self) -> bool:
        fn = self.entrypoint
        while isinstance(fn, functools.partial):
            fn = fn.func
        return inspect.iscoroutinefunction(fn)

    def __repr__(self) -> str:
        flags = [f for f in FLAG_NAMES if f != "sanitize_arguments" and getattr(self, f)]
        return f"Function({self.name!r}{', ' + ', '.join(flags) if flags else ''})"


ControlSignal = Literal["stop", "retry"]


class FunctionCall:
    """One call of a Function: raw arguments in, a result string (never an exception) out."""

    def __init__(self, function: Function, call_id: str = "", arguments: str | dict[str, Any] | None = None):
        self.function = function
        self.call_id = call_id
        self.arguments = arguments  # as the model sent them
        self.args: dict[str, Any] | None = None  # parsed and validated
        self.result: str | None = None
        self.error: str | None = None
        self.control: ControlSignal | None = None  # StopAgentRun / RetryAgentRun was raised
        self.images: list[Any] = []  # agentica_cli.images.Image a tool returned (ImageResult)
        self.started_at: float | None = None
        self.ended_at: float | None = None
        self._parsed = False

    @property
    def name(self) -> str:
        return self.function.name

    @property
    def elapsed(self) -> float:
        if self.started_at is None:
            return 0.0
        return (self.ended_at or time.monotonic()) - self.started_at

    def fail(self, message: str) -> FunctionCall:
        """Record an error the model will read as this call's result."""
        self.error = message
        self.result = message
        return self

    def parse_arguments(self) -> bool:
        """Parse and validate the arguments; on failure the error is already the result.

        Kept apart from `execute` so that approvals and guardrails see validated arguments.
        """
        if self._parsed:
            return self.error is None
        self._parsed = True
        from agentica_cli.tools.arguments import ArgumentParseError, drop_null_optionals, parse_arguments

        try:
            raw = parse_arguments(self.arguments, sanitize=self.function.sanitize_arguments)
        except ArgumentParseError as err:
            self.fail(f"Error: could not parse arguments for tool '{self.name}': {err}")
            return False
        raw = drop_null_optionals(raw, self.function.parameters)  # null for an optional: its default
        if not self.function.validate_arguments:
            self.args = raw
            return True
        from pydantic import ValidationError

        from agentica_cli.tools.schema import format_validation_error

        try:
            model = self.function.spec.validator.model_validate(raw)
        except ValidationError as err:
            self.fail("Error: " + format_validation_error(self.name, err))
            return False
        args = {name: getattr(model, name) for name in type(model).model_fields}
        args.update(model.model_extra or {})
        self.args = args
        return True

    def replace_arguments(self, arguments: dict[str, Any]) -> bool:
        """New arguments (a hook rewrote them), validated again; False with the error as result."""
        self.arguments, self.args, self.error, self.result = arguments, None, None, None
        self._parsed = False
        return self.parse_arguments()

    async def execute(self, context: ToolContext | None = None) -> FunctionCall:
        """Validate and run. Tool errors become `Error: <Type>: <message>`; never raises for them.

        `asyncio.CancelledError` propagates: the caller decides how a cancelled call is recorded.
        """
        self.started_at = time.monotonic()
        try:
            if not self.parse_arguments():
                return self
            await self._invoke(context)
        except StopAgentRun as stop:
            self.control = "stop"
            self.result = stop.message
        except RetryAgentRun as retry:
            self.control = "retry"
            self.result = retry.message
        except Exception as exc:
            self.fail(format_tool_error(exc))
        finally:
            self.ended_at = time.monotonic()
        return self

    async def _invoke(self, context: ToolContext | None) -> None:
        fn = self.function.entrypoint
        if fn is None:
            raise RuntimeError(f"tool {self.name!r} has no entrypoint")
        kwargs = dict(self.args or {})
        ctx_param = self.function.context_param or (
            self.function.spec.context_param if self.function.validate_arguments else None)
        if ctx_param:
            kwargs[ctx_param] = context or ToolContext(call_id=self.call_id)
        if self.function.is_async:
            value = await fn(**kwargs)
        else:
            # Sync tools run in a worker thread so the event loop (and other tools) keep going.
            context_copy = contextvars.copy_context()
            call = functools.partial(context_copy.run, fn, **kwargs)
            value = await asyncio.get_running_loop().run_in_executor(_tool_threads(), call)
        if inspect.isawaitable(value):
            value = await value
        images = getattr(value, "images", None)
        if isinstance(images, list) and isinstance(getattr(value, "text", None), str):  # an ImageResult
            self.images, value = images, value.text
        self.result = stringify_result(value)

    def __repr__(self) -> str:
        return f"FunctionCall({self.name!r}, id={self.call_id!r}, args={self.args or self.arguments!r})"


class Tool:
    """A named group of Functions, optionally with guidance for the system prompt.

    Subclass it and `register` bound methods in `__init__`, or build one ad hoc.
    """

    def __init__(self, name: str = "tool", description: str | None = None):
        self.name = name
        self.description = description
        self.functions: dict[str, Function] = {}

    def register(self, fn: Callable[..., Any] | Function, *, name: str | None = None, **flags: Any) -> Function:
        function = fn if isinstance(fn, Function) else Function.from_callable(fn, name=name, **flags)
        if isinstance(fn, Function) and name:
            function.name = name
        self.functions[function.name] = function
        return function

    def get_system_prompt(self) -> str | None:
        """Guidance on using this tool, assembled into the agent's system prompt."""
        return None

    def get_functions(self) -> Iterable[Function]:
        return self.functions.values()

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r}, functions={list(self.functions)})"
