"""Type hints + docstring -> JSON Schema, and argument validation from the same source.

One source of truth: the function's signature. `build_signature_spec` reads it once and
gives both the JSON Schema the model sees and a pydantic model that validates (and
coerces) the arguments the model sends back, so the two can never disagree.
"""

from __future__ import annotations

import dataclasses
import enum
import inspect
import json
import sys
import types
import typing
import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, Any, Literal, Union, cast, get_args, get_origin

from agentica_cli.tools.context import ToolContext

if TYPE_CHECKING:
    from pydantic import BaseModel, ValidationError

JsonSchema = dict[str, Any]

_PRIMITIVES: dict[Any, str] = {str: "string", int: "integer", float: "number", bool: "boolean"}
_NONE_TYPES = (type(None), None)


@dataclass
class ParsedDocstring:
    description: str = ""
    params: dict[str, str] = field(default_factory=dict)


def parse_docstring(doc: str | None) -> ParsedDocstring:
    """Summary (everything before the parameter section) and per-parameter descriptions.

    Google, NumPy and reST styles are understood through `docstring_parser`.
    """
    if not doc or not doc.strip():
        return ParsedDocstring()
    import docstring_parser  # local: only needed the first time a schema is built

    parsed = docstring_parser.parse(inspect.cleandoc(doc))
    parts = [p.strip() for p in (parsed.short_description, parsed.long_description) if p and p.strip()]
    params = {p.arg_name: " ".join(p.description.split()) for p in parsed.params if p.description}
    return ParsedDocstring(description="\n\n".join(parts), params=params)


# ----------------------------------------------------------------------------------------
# Type -> JSON Schema
# ----------------------------------------------------------------------------------------


# pydantic costs ~60 ms to import. A schema needs it only when an annotation is a pydantic
# type, and then pydantic is already imported (the annotation's module did it), so the
# checks below look in sys.modules instead of importing it. The validator imports it on
# the first call of a tool.
def _is_pydantic_model(tp: Any) -> bool:
    pydantic = sys.modules.get("pydantic")
    return pydantic is not None and isinstance(tp, type) and issubclass(tp, pydantic.BaseModel)


def _is_field_info(value: Any) -> bool:
    fields = sys.modules.get("pydantic.fields")
    return fields is not None and isinstance(value, fields.FieldInfo)


def _is_none(tp: Any) -> bool:
    return tp in _NONE_TYPES


def _is_union(tp: Any) -> bool:
    origin = get_origin(tp)
    return origin is Union or origin is types.UnionType


def _strip_annotated(tp: Any) -> Any:
    return get_args(tp)[0] if get_origin(tp) is Annotated else tp


def _strip_optional(tp: Any) -> tuple[Any, bool]:
    """`Optional[X]` -> (X, True); anything else -> (tp, False)."""
    if _is_union(tp):
        args = [a for a in get_args(tp) if not _is_none(a)]
        if len(args) != len(get_args(tp)):
            inner = args[0] if len(args) == 1 else Union[tuple(args)]
            return inner, True
    return tp, False


def _is_typeddict(tp: Any) -> bool:
    return isinstance(tp, type) and issubclass(tp, dict) and hasattr(tp, "__total__")


def _literal_schema(values: Sequence[Any]) -> JsonSchema:
    kinds = {_PRIMITIVES.get(type(v)) for v in values if v is not None}
    schema: JsonSchema = {}
    if len(kinds) == 1 and None not in kinds:
        schema["type"] = kinds.pop()
    schema["enum"] = list(values)
    return schema


def _object_schema(hints: Mapping[str, Any], required: Sequence[str], docs: Mapping[str, str]) -> JsonSchema:
    properties = {}
    for name, hint in hints.items():
        prop = type_to_schema(hint)
        if name in docs and "description" not in prop:
            prop = {**prop, "description": docs[name]}
        properties[name] = prop
    schema: JsonSchema = {"type": "object", "properties": properties}
    if required:
        schema["required"] = list(required)
    return schema


def _model_schema(model: type[BaseModel]) -> JsonSchema:
    hints, required, docs = {}, [], {}
    for name, info in model.model_fields.items():
        key = info.alias or name
        hints[key] = info.annotation if not info.metadata else Annotated[(info.annotation, *info.metadata)]
        if info.description:
            docs[key] = info.description
        if info.is_required():
            required.append(key)
    schema = _object_schema(hints, required, docs)
    doc = parse_docstring(model.__doc__).description
    if doc and model.__doc__ != sys.modules["pydantic"].BaseModel.__doc__:
        schema["description"] = doc
    return schema


def _dataclass_schema(cls: type) -> JsonSchema:
    type_hints = typing.get_type_hints(cls, include_extras=True)
    docs = parse_docstring(cls.__doc__).params
    hints, required = {}, []
    for f in dataclasses.fields(cls):
        hints[f.name] = type_hints.get(f.name, Any)
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            required.append(f.name)
    return _object_schema(hints, required, docs)


def _typeddict_schema(cls: type) -> JsonSchema:
    hints = typing.get_type_hints(cls, include_extras=True)
    baseline = getattr(cls, "__required_keys__", set(hints))
    plain, required = {}, []
    for key, hint in hints.items():
        wrapper = _required_wrapper(hint)
        plain[key] = get_args(hint)[0] if wrapper else hint
        # An explicit (Not)Required wins: older `typing.TypedDict`s ignore typing_extensions' wrappers.
        if wrapper == "Required" or (wrapper != "NotRequired" and key in baseline):
            required.append(key)
    return _object_schema(plain, required, parse_docstring(cls.__doc__).params)


def _required_wrapper(tp: Any) -> str | None:
    origin = get_origin(tp)
    name = getattr(origin, "_name", None) or getattr(origin, "__name__", None)
    return name if name in {"Required", "NotRequired"} else None


def type_to_schema(tp: Any) -> JsonSchema:
    """JSON Schema for one annotation, inlined (no `$ref`) and without `title` noise."""
    if tp is inspect.Parameter.empty or tp is Any or tp is object:
        return {}
    origin = get_origin(tp)

    if origin is Annotated:
        base, *extras = get_args(tp)
        schema = dict(type_to_schema(base))
        for extra in extras:
            if _is_field_info(extra) and extra.description:
                schema["description"] = extra.description
            elif isinstance(extra, str):
                schema["description"] = extra
        return schema

    if _is_union(tp):
        inner, optional = _strip_optional(tp)
        if optional:
            return type_to_schema(inner)
        return {"anyOf": [type_to_schema(a) for a in get_args(tp)]}

    if origin is Literal:
        return _literal_schema(get_args(tp))

    if tp in _PRIMITIVES:
        return {"type": _PRIMITIVES[tp]}

    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return _literal_schema([m.value for m in tp])

    if tp in (list, tuple, set, frozenset) or origin in (list, tuple, set, frozenset, Sequence):
        items = [a for a in get_args(tp) if a is not Ellipsis]
        schema = {"type": "array"}
        if origin is tuple and len(items) > 1 and Ellipsis not in get_args(tp):
            schema["prefixItems"] = [type_to_schema(a) for a in items]
            schema["minItems"] = schema["maxItems"] = len(items)
        elif items:
            schema["items"] = type_to_schema(items[0])
        if tp is set or origin in (set, frozenset):
            schema["uniqueItems"] = True
        return schema

    if tp is dict or origin in (dict, Mapping):
        args = get_args(tp)
        schema = {"type": "object"}
        if len(args) == 2 and args[1] is not Any:
            schema["additionalProperties"] = type_to_schema(args[1])
        return schema

    if isinstance(tp, type):
        if _is_pydantic_model(tp):
            return _model_schema(tp)
        if dataclasses.is_dataclass(tp):
            return _dataclass_schema(tp)
        if _is_typeddict(tp):
            return _typeddict_schema(tp)

    # Anything else (a custom class): let pydantic say what it can.
    try:
        from pydantic import TypeAdapter

        return TypeAdapter(tp).json_schema()
    except Exception:
        return {}


# ----------------------------------------------------------------------------------------
# Signature -> schema + validator
# ----------------------------------------------------------------------------------------


class SignatureSpec:
    """What one function's signature says: description, JSON Schema, and (lazily) a validator."""

    def __init__(
        self,
        description: str,
        parameters: JsonSchema,
        fields: dict[str, tuple[Any, Any]],
        context_param: str | None,
        accepts_extra: bool,
        name: str,
    ):
        self.description = description
        self.parameters = parameters
        self.context_param = context_param  # name of a `ToolContext` parameter to inject, if any
        self.accepts_extra = accepts_extra  # the function takes **kwargs
        self._fields = fields
        self._name = name
        self._validator: type[BaseModel] | None = None

    def copy(self) -> SignatureSpec:
        """The same spec with a JSON Schema of its own (the validator, built from the same
        fields, is built again on first use)."""
        import copy

        return SignatureSpec(self.description, copy.deepcopy(self.parameters), dict(self._fields),
                             self.context_param, self.accepts_extra, self._name)

    @property
    def validator(self) -> type[BaseModel]:
        """A pydantic model of the arguments, built on first use (schemas alone do not need it)."""
        if self._validator is None:
            self._validator = self._build_validator()
        return self._validator

    def _build_validator(self) -> type[BaseModel]:
        from pydantic import BaseModel, ConfigDict, create_model

        config = ConfigDict(extra="allow" if self.accepts_extra else "forbid", arbitrary_types_allowed=True)

        class _Arguments(BaseModel):  # a class statement, not type(...): mypy sees a BaseModel subclass
            model_config = config

        base = _Arguments
        # cast: mypy checks a **dict's values against each of create_model's own keyword parameters
        # (__config__, __doc__...) too; here the keys are the function's parameter names, fields all
        make_model = cast("Callable[..., type[BaseModel]]", create_model)
        try:
            return make_model(f"{self._name}_arguments", __base__=base, **self._fields)
        except Exception:
            # Some annotation pydantic cannot validate (e.g. typing.TypedDict before 3.12):
            # validate the others and pass that one through as given.
            fields = {}
            for name, (annotation, default) in self._fields.items():
                try:
                    create_model("_probe", __base__=base, x=(annotation, default))
                    fields[name] = (annotation, default)
                except Exception:
                    fields[name] = (Any, default)
            return make_model(f"{self._name}_arguments", __base__=base, **fields)


def _is_context_type(hint: Any) -> bool:
    return isinstance(hint, type) and issubclass(hint, ToolContext)


def _resolve_hints(fn: Callable[..., Any], sig: inspect.Signature) -> dict[str, Any]:
    try:
        return typing.get_type_hints(fn, include_extras=True)
    except Exception:
        pass
    # One unresolvable forward reference must not cost the other parameters their types.
    namespace = getattr(inspect.unwrap(fn), "__globals__", {})
    hints: dict[str, Any] = {}
    for name, param in sig.parameters.items():
        annotation = param.annotation
        if isinstance(annotation, str):
            try:
                annotation = eval(annotation, namespace)
            except Exception:
                annotation = Any
        hints[name] = annotation
    return hints


# A function's spec depends on nothing but the function (its signature, hints and docstring),
# so it is read once per function, not once per tool object: every session and subagent builds
# its own tools (bound to its folder), and the batch zygote's sessions find the schemas its
# warm-up built (~4 ms of CPU in each forked session otherwise). Weak keys: a function defined
# at run time (a closure) does not stay alive because it once had a schema.
_SPECS: weakref.WeakKeyDictionary[Any, SignatureSpec] = weakref.WeakKeyDictionary()
_BOUND_SPECS: weakref.WeakKeyDictionary[Any, SignatureSpec] = weakref.WeakKeyDictionary()


def build_signature_spec(fn: Callable[..., Any]) -> SignatureSpec:
    """The spec of `fn`'s signature, from the cache where `fn` is a function or a method bound
    to an object (a bound method's signature leaves out its first parameter, a function's does
    not: two caches). Each call gets a spec of its own with its own copy of the JSON Schema,
    which callers may change (the skill tool adds its names as an enum)."""
    if isinstance(fn, types.MethodType) and isinstance(fn.__func__, types.FunctionType):
        cache, key = _BOUND_SPECS, fn.__func__
    elif isinstance(fn, types.FunctionType):
        cache, key = _SPECS, fn
    else:  # a partial, a callable object, a builtin: read each time
        return _read_signature_spec(fn)
    spec = cache.get(key)
    if spec is None:
        spec = cache[key] = _read_signature_spec(fn)
    return spec.copy()


def _read_signature_spec(fn: Callable[..., Any]) -> SignatureSpec:
    sig = inspect.signature(fn)
    hints = _resolve_hints(fn, sig)
    doc = parse_docstring(inspect.getdoc(fn))

    properties: dict[str, JsonSchema] = {}
    required: list[str] = []
    fields: dict[str, tuple[Any, Any]] = {}
    context_param = None
    accepts_extra = False
    for name, param in sig.parameters.items():
        if name in ("self", "cls"):
            continue
        if param.kind is inspect.Parameter.VAR_POSITIONAL:
            continue
        if param.kind is inspect.Parameter.VAR_KEYWORD:
            accepts_extra = True
            continue
        hint = hints.get(name, param.annotation)
        if _is_context_type(hint) or (hint is inspect.Parameter.empty and name == "tool_context"):
            context_param = name
            continue
        schema = dict(type_to_schema(hint))
        if name in doc.params and "description" not in schema:
            schema["description"] = doc.params[name]
        properties[name] = schema
        annotation = Any if hint is inspect.Parameter.empty else hint
        if param.default is not inspect.Parameter.empty:
            fields[name] = (annotation, param.default)
        elif _strip_optional(_strip_annotated(hint))[1]:
            fields[name] = (annotation, None)  # Optional means the model may leave it out
        else:
            required.append(name)
            fields[name] = (annotation, ...)

    parameters: JsonSchema = {"type": "object", "properties": properties}
    if required:
        parameters["required"] = required
    name = getattr(fn, "__name__", "tool")
    return SignatureSpec(doc.description, parameters, fields, context_param, accepts_extra, name)


def format_validation_error(tool_name: str, err: ValidationError) -> str:
    """A message a model can act on: which argument, what is wrong, what it sent."""
    lines = []
    for e in err.errors():
        loc = ".".join(str(p) for p in e["loc"]) or "arguments"
        if e["type"] == "missing":
            lines.append(f"- {loc}: missing required argument")
        elif e["type"] == "extra_forbidden":
            lines.append(f"- {loc}: unexpected argument")
        else:
            got = json.dumps(e.get("input"), ensure_ascii=False, default=str)
            if len(got) > 80:
                got = got[:77] + "..."
            lines.append(f"- {loc}: {e['msg']} (got {got})")
    return f"Invalid arguments for tool '{tool_name}':\n" + "\n".join(lines)
