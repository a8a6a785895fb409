"""Turning the raw argument string a model sent into a dict, repairing only what is safe."""

from __future__ import annotations

import json
import re
from typing import Any

_FENCE = re.compile(r"^\s*```[\w-]*\s*\n?(.*?)\n?\s*```\s*$", re.DOTALL)
_PREVIEW = 200


class ArgumentParseError(ValueError):
    """The model's arguments are not a JSON object we can safely read."""


def _preview(raw: str) -> str:
    return raw if len(raw) <= _PREVIEW else raw[:_PREVIEW] + f"... ({len(raw)} chars)"


def _is_truncated(text: str) -> bool:
    """True when a string or bracket is still open at the end: the model's output was cut.

    Repairing such text would invent an ending (e.g. close a half-written file's content),
    which is never safe, so it is refused instead.
    """
    depth, quote, escaped = 0, "", False
    for ch in text:
        if quote:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == quote:
                quote = ""
        elif ch in "\"'":
            quote = ch
        elif ch in "{[":
            depth += 1
        elif ch in "}]":
            depth -= 1
    return bool(quote) or depth > 0


def _string_values(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in (*_string_values(k), *_string_values(v))]
    if isinstance(value, list):
        return [s for v in value for s in _string_values(v)]
    return []


def _unchanged_strings(repaired: Any, source: str) -> bool:
    """Every string the repair produced stands in the source text, as written or JSON-escaped."""
    for s in _string_values(repaired):
        escaped = json.dumps(s, ensure_ascii=False)[1:-1]
        if s not in source and escaped not in source and escaped.replace('\\"', '"') not in source:
            return False
    return True


def parse_arguments(raw: str | dict[str, Any] | None, *, sanitize: bool = True) -> dict[str, Any]:
    """Parse a tool call's arguments into a dict or raise `ArgumentParseError`.

    With `sanitize`, fixes code fences, trailing commas, single quotes, Python literals and
    a JSON object nested in a JSON string; string contents are never altered.
    """
    if raw is None:
        return {}
    if isinstance(raw, dict):
        return raw
    text = raw.strip()
    if not text:
        return {}
    try:
        value = json.loads(text)
    except json.JSONDecodeError as err:
        if not sanitize:
            raise ArgumentParseError(f"arguments are not valid JSON ({err}): {_preview(raw)}") from None
        value = _repair(text, err)
    if isinstance(value, str) and sanitize:
        # A JSON object the model serialised twice: '"{\"a\": 1}"'.
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            pass
    if not isinstance(value, dict):
        raise ArgumentParseError(f"arguments must be a JSON object, got {type(value).__name__}: {_preview(raw)}")
    return value


def _repair(text: str, err: json.JSONDecodeError) -> Any:
    fenced = _FENCE.match(text)
    if fenced:
        text = fenced.group(1).strip()
        try:
            return json.loads(text)
        except json.JSONDecodeError:
            pass
    failure = ArgumentParseError(
        f"arguments are not valid JSON ({err}) and could not be repaired "
        f"safely: {_preview(text)}"
    )
    if _is_truncated(text):
        raise failure
    import json_repair  # local: only malformed arguments pay for it

    try:
        value = json_repair.loads(text)
    except Exception:
        raise failure from None
    if not isinstance(value, (dict, str)) or (value in ({}, "") and text not in ("{}", '""')):
        raise failure
    if not _unchanged_strings(value, text):
        raise failure
    return value


def _allows_null(schema: Any) -> bool:
    """Whether a JSON Schema accepts null (an unconstrained schema does)."""
    if not isinstance(schema, dict):
        return True
    kind = schema.get("type")
    if kind == "null" or (isinstance(kind, list) and "null" in kind):
        return True
    if "enum" in schema:
        return None in schema["enum"]
    if "const" in schema:
        return schema["const"] is None
    for key in ("anyOf", "oneOf"):
        if key in schema:
            return any(_allows_null(part) for part in schema[key])
    if "allOf" in schema:
        return all(_allows_null(part) for part in schema["allOf"])
    return kind is None and "$ref" not in schema


def drop_null_optionals(args: dict[str, Any], parameters: dict[str, Any] | None) -> dict[str, Any]:
    """`args` without the nulls a model sent for optional parameters that do not take null.

    Real models send `"times": null` for an optional `times: int = 1`; leaving the key out
    lets the parameter take its default instead of failing validation.
    """
    if not args or not isinstance(parameters, dict):
        return args
    properties = parameters.get("properties")
    if not isinstance(properties, dict):
        return args
    required = set(parameters.get("required") or ())
    return {k: v for k, v in args.items()
            if not (v is None and k in properties and k not in required and not _allows_null(properties[k]))}
