"""JSON Schema generation from type hints and docstrings: whole dicts asserted exactly."""

from __future__ import annotations

import asyncio
import dataclasses
import enum
import time
from typing import Annotated, Any, Dict, List, Literal, Optional, Set, Tuple, TypedDict, Union

import pytest
from pydantic import BaseModel, Field
from typing_extensions import NotRequired

from agentica_cli.tools import Function, FunctionCall, Tool, ToolContext, tool


def process_data(
    input_text: str,
    max_items: int = 10,
    include_meta: bool = False,
    format: Literal["json", "csv", "txt"] = "json",
    tags: Optional[List[str]] = None,
) -> str:
    """Process data and return the result."""
    return input_text


def params_of(fn: Any) -> dict[str, Any]:
    return Function.from_callable(fn).parameters


def test_process_data_example_schema_exactly() -> None:
    assert Function.from_callable(process_data).to_openai() == {
        "type": "function",
        "function": {
            "name": "process_data",
            "description": "Process data and return the result.",
            "parameters": {
                "type": "object",
                "properties": {
                    "input_text": {"type": "string"},
                    "max_items": {"type": "integer"},
                    "include_meta": {"type": "boolean"},
                    "format": {"type": "string", "enum": ["json", "csv", "txt"]},
                    "tags": {"type": "array", "items": {"type": "string"}},
                },
                "required": ["input_text"],
            },
        },
    }


def test_primitives_and_required() -> None:
    def f(a: str, b: int, c: float, d: bool = True) -> None: ...

    assert params_of(f) == {
        "type": "object",
        "properties": {
            "a": {"type": "string"},
            "b": {"type": "integer"},
            "c": {"type": "number"},
            "d": {"type": "boolean"},
        },
        "required": ["a", "b", "c"],
    }


def test_no_parameters_gives_empty_object() -> None:
    def f() -> str:
        """Nothing to pass."""
        return ""

    assert params_of(f) == {"type": "object", "properties": {}}


class Color(enum.Enum):
    RED = "red"
    GREEN = "green"


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


def test_literal_types_and_enums() -> None:
    def f(mode: Literal[1, 2, 3], color: Color, level: Level, mixed: Literal["a", 1]) -> None: ...

    assert params_of(f)["properties"] == {
        "mode": {"type": "integer", "enum": [1, 2, 3]},
        "color": {"type": "string", "enum": ["red", "green"]},
        "level": {"type": "integer", "enum": [1, 2]},
        "mixed": {"enum": ["a", 1]},
    }


def test_collections() -> None:
    def f(
        a: list[int],
        b: List[str],
        c: tuple[int, ...],
        d: Tuple[str, int],
        e: set[str],
        f: Set[int],
        g: dict[str, int],
        h: Dict[str, List[str]],
        i: dict,
        j: list,
    ) -> None: ...

    assert params_of(f)["properties"] == {
        "a": {"type": "array", "items": {"type": "integer"}},
        "b": {"type": "array", "items": {"type": "string"}},
        "c": {"type": "array", "items": {"type": "integer"}},
        "d": {
            "type": "array",
            "prefixItems": [{"type": "string"}, {"type": "integer"}],
            "minItems": 2,
            "maxItems": 2,
        },
        "e": {"type": "array", "items": {"type": "string"}, "uniqueItems": True},
        "f": {"type": "array", "items": {"type": "integer"}, "uniqueItems": True},
        "g": {"type": "object", "additionalProperties": {"type": "integer"}},
        "h": {"type": "object", "additionalProperties": {"type": "array", "items": {"type": "string"}}},
        "i": {"type": "object"},
        "j": {"type": "array"},
    }


def test_optional_and_union() -> None:
    def f(a: Optional[int] = None, b: int | None = None, c: Union[int, str] = 0, d: str | list[str] = "") -> None: ...

    assert params_of(f) == {
        "type": "object",
        "properties": {
            "a": {"type": "integer"},
            "b": {"type": "integer"},
            "c": {"anyOf": [{"type": "integer"}, {"type": "string"}]},
            "d": {"anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]},
        },
    }


def test_optional_without_default_is_not_required_and_defaults_to_none() -> None:
    def f(a: Optional[str], b: Annotated[int | None, "how many"], c: str) -> str:
        return f"{a}/{b}/{c}"

    fn = Function.from_callable(f)
    assert fn.parameters == {
        "type": "object",
        "properties": {
            "a": {"type": "string"},
            "b": {"type": "integer", "description": "how many"},
            "c": {"type": "string"},
        },
        "required": ["c"],
    }
    call = FunctionCall(fn, "c1", '{"c": "x"}')
    assert asyncio.run(call.execute()).result == "None/None/x"


class Address(BaseModel):
    """A postal address."""

    street: str = Field(description="Street and number")
    city: str
    zip_code: Optional[str] = None


@dataclasses.dataclass
class Point:
    """A point.

    Args:
        x: horizontal
        y: vertical
    """

    x: float
    y: float = 0.0


class Movie(TypedDict):
    title: str
    year: NotRequired[int]


def test_nested_objects_are_inlined_without_refs_or_titles() -> None:
    def f(address: Address, points: list[Point], movie: Movie, maybe: Optional[Address] = None) -> None: ...

    address_schema = {
        "type": "object",
        "properties": {
            "street": {"type": "string", "description": "Street and number"},
            "city": {"type": "string"},
            "zip_code": {"type": "string"},
        },
        "required": ["street", "city"],
        "description": "A postal address.",
    }
    assert params_of(f) == {
        "type": "object",
        "properties": {
            "address": address_schema,
            "points": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "x": {"type": "number", "description": "horizontal"},
                        "y": {"type": "number", "description": "vertical"},
                    },
                    "required": ["x"],
                },
            },
            "movie": {
                "type": "object",
                "properties": {"title": {"type": "string"}, "year": {"type": "integer"}},
                "required": ["title"],
            },
            "maybe": address_schema,
        },
        "required": ["address", "points", "movie"],
    }


def test_annotated_field_description_wins_over_docstring() -> None:
    def f(
        query: Annotated[str, Field(description="What to look for")],
        limit: Annotated[int, "How many"] = 5,
        other: str = "",
    ) -> None:
        """Search.

        Args:
            query: ignored because Annotated says it
            other: from the docstring
        """

    assert params_of(f)["properties"] == {
        "query": {"type": "string", "description": "What to look for"},
        "limit": {"type": "integer", "description": "How many"},
        "other": {"type": "string", "description": "from the docstring"},
    }


def test_self_args_kwargs_and_injected_context_are_not_in_schema() -> None:
    class Thing:
        def method(self, a: int, *rest: int, ctx: ToolContext, **extra: Any) -> str:
            """Do it."""
            return ""

    fn = Function.from_callable(Thing().method)
    assert fn.parameters == {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}
    assert fn.spec.context_param == "ctx"


def test_google_docstring() -> None:
    def get_weather(city: str, unit: str = "celsius") -> str:
        """Get the current weather for a city.

        Uses the national service; slow on Mondays.

        Args:
            city: City name, e.g. "Beijing"
            unit: "celsius" or
                "fahrenheit"

        Returns:
            A sentence.
        """
        return ""

    fn = Function.from_callable(get_weather)
    assert fn.description == "Get the current weather for a city.\n\nUses the national service; slow on Mondays."
    assert fn.parameters["properties"] == {
        "city": {"type": "string", "description": 'City name, e.g. "Beijing"'},
        "unit": {"type": "string", "description": '"celsius" or "fahrenheit"'},
    }


def test_numpy_docstring() -> None:
    def scale(value: float, factor: float = 2.0) -> float:
        """Scale a value.

        Parameters
        ----------
        value : float
            The number to scale.
        factor : float
            Multiplier.
        """
        return value * factor

    fn = Function.from_callable(scale)
    assert fn.description == "Scale a value."
    assert fn.parameters["properties"] == {
        "value": {"type": "number", "description": "The number to scale."},
        "factor": {"type": "number", "description": "Multiplier."},
    }


def test_rest_docstring() -> None:
    def greet(name: str) -> str:
        """Greet someone.

        :param name: Who to greet.
        :returns: the greeting
        """
        return name

    fn = Function.from_callable(greet)
    assert fn.description == "Greet someone."
    assert fn.parameters["properties"] == {"name": {"type": "string", "description": "Who to greet."}}


def test_tool_decorator_overrides_and_flags() -> None:
    @tool(name="search_code", description="Search the codebase.", concurrency_safe=True, is_read_only=True)
    def search_in_codebase(pattern: str, path: str = ".") -> str:
        """Original doc.

        Args:
            pattern: regex
            path: where
        """
        return f"{pattern} in {path}"

    # Still callable exactly as before.
    assert search_in_codebase("x", path="src") == "x in src"
    fn = Function.from_callable(search_in_codebase)
    assert (fn.name, fn.description) == ("search_code", "Search the codebase.")
    assert (fn.concurrency_safe, fn.is_read_only, fn.is_destructive) == (True, True, False)
    assert fn.sanitize_arguments is True
    assert fn.parameters["required"] == ["pattern"]


def test_bare_tool_decorator_keeps_defaults() -> None:
    @tool
    def ping() -> str:
        """Ping."""
        return "pong"

    fn = Function.from_callable(ping)
    assert ping() == "pong"
    assert (fn.name, fn.description) == ("ping", "Ping.")
    flags = (fn.concurrency_safe, fn.is_read_only, fn.is_destructive, fn.stop_after_tool_call, fn.show_result)
    assert flags == (False, False, False, False, False)


class DatabaseTool(Tool):
    def __init__(self, dsn: str):
        super().__init__(name="database")
        self.dsn = dsn
        self.register(self.query, is_read_only=True, concurrency_safe=True)
        self.register(self.insert, is_destructive=True)
        self.register(self.list_tables, is_read_only=True, concurrency_safe=True)

    def query(self, sql: str, limit: int = 100) -> str:
        """Run a SQL query and return the rows.

        Args:
            sql: A SELECT statement
            limit: Maximum number of rows
        """
        return f"rows for {sql} (limit {limit}) from {self.dsn}"

    def insert(self, table: str, data: dict) -> str:
        """Insert one row into a table.

        Args:
            table: Table name
            data: Column values
        """
        return f"inserted into {table}: {data}"

    def list_tables(self) -> str:
        """List all tables."""
        return "users, orders"

    def get_system_prompt(self) -> str:
        return "## Database\n- SELECT before INSERT"


def test_class_based_tool_schema_snapshot() -> None:
    db = DatabaseTool("sqlite:///app.db")
    assert db.get_system_prompt() == "## Database\n- SELECT before INSERT"
    assert [f.to_openai() for f in db.functions.values()] == [
        {
            "type": "function",
            "function": {
                "name": "query",
                "description": "Run a SQL query and return the rows.",
                "parameters": {
                    "type": "object",
                    "properties": {
                        "sql": {"type": "string", "description": "A SELECT statement"},
                        "limit": {"type": "integer", "description": "Maximum number of rows"},
                    },
                    "required": ["sql"],
                },
            },
        },
        {
            "type": "function",
            "function": {
                "name": "insert",
                "description": "Insert one row into a table.",
                "parameters": {
                    "type": "object",
                    "properties": {
                        "table": {"type": "string", "description": "Table name"},
                        "data": {"type": "object", "description": "Column values"},
                    },
                    "required": ["table", "data"],
                },
            },
        },
        {
            "type": "function",
            "function": {
                "name": "list_tables",
                "description": "List all tables.",
                "parameters": {"type": "object", "properties": {}},
            },
        },
    ]
    flags = {n: (f.is_read_only, f.concurrency_safe, f.is_destructive) for n, f in db.functions.items()}
    assert flags == {
        "query": (True, True, False),
        "insert": (False, False, True),
        "list_tables": (True, True, False),
    }


def test_tool_register_rejects_unknown_option() -> None:
    t = Tool("x")
    try:
        t.register(process_data, concurrent=True)
    except TypeError as err:
        assert "concurrent" in str(err)
    else:
        raise AssertionError("an unknown option must be refused")


def test_schema_is_cached_per_function() -> None:
    fn = Function.from_callable(process_data)
    assert fn.parameters is fn.parameters
    assert fn.spec is fn.spec


def test_schemas_of_the_builtin_tools_cost_well_under_50_ms() -> None:
    from builtin_tools import get_builtin_tools

    timings = []
    for _ in range(3):  # the best of three fresh sets
        functions = [f for t in get_builtin_tools(".") for f in t.functions.values()]
        assert len(functions) == 14
        assert all(f._parameters is None for f in functions)  # fresh: nothing generated yet
        # This thread's CPU time, not the wall clock: other processes busy on the machine do not count.
        start = time.thread_time()
        schemas = [f.to_openai() for f in functions]
        timings.append(time.thread_time() - start)
        assert all(s["function"]["parameters"]["type"] == "object" for s in schemas)
    # The first set also pays for loading the docstring parser: it counts too.
    assert timings[0] < 0.05, f"first schema generation for the 14 builtin tools took {timings[0] * 1000:.1f} ms"
    assert min(timings) < 0.025, f"schema generation for the 14 builtin tools took {min(timings) * 1000:.1f} ms"


def test_unresolvable_annotation_costs_only_that_parameter() -> None:
    def f(a: int, b: NoSuchType) -> None:  # type: ignore[name-defined]  # noqa: F821
        ...

    assert params_of(f) == {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {}},
        "required": ["a", "b"],
    }


def test_a_functions_spec_is_read_once_and_each_tool_gets_its_own_schema(monkeypatch: pytest.MonkeyPatch) -> None:
    from agentica_cli.tools import schema

    class Files:
        def read(self, path: str, limit: int = 10) -> str:
            """Read a file.

            Args:
                path: where it is
            """
            return path

    def grep(this: str, pattern: str) -> str:
        """Search."""
        return pattern

    reads: list[object] = []
    real = schema._read_signature_spec
    monkeypatch.setattr(schema, "_read_signature_spec", lambda fn: reads.append(fn) or real(fn))
    first, second = Files(), Files()
    one = schema.build_signature_spec(first.read)
    two = schema.build_signature_spec(second.read)
    assert len(reads) == 1  # two tool objects, one read of their method
    assert one.parameters == two.parameters
    assert one.parameters["properties"]["path"]["description"] == "where it is"
    one.parameters["properties"]["path"]["enum"] = ["a"]  # as the skill tool does with its names
    assert "enum" not in two.parameters["properties"]["path"]
    assert "enum" not in schema.build_signature_spec(Files().read).parameters["properties"]["path"]
    # a function's first parameter is a parameter; bound, the same function's is not
    assert list(schema.build_signature_spec(grep).parameters["properties"]) == ["this", "pattern"]
    bound = grep.__get__("x")
    assert list(schema.build_signature_spec(bound).parameters["properties"]) == ["pattern"]
    assert two.validator.model_validate({"path": "p"}).model_dump() == {"path": "p", "limit": 10}
