"""acp/schema_import.py: the ACP SDK's models imported without their attribute docstrings are
the same models, but for the descriptions those docstrings would have given their fields."""

from __future__ import annotations

import json
import subprocess
import sys

# Run in a fresh interpreter: every model of acp.schema, its JSON schema with the descriptions
# taken out and the number of descriptions; a request validated and dumped; and whether
# pydantic's extraction is pydantic's own again.
PROBE = """
import json, sys
if sys.argv[1] == "hooked":
    from agentica_cli.acp.schema_import import import_protocol_schema
    import_protocol_schema()
import acp.schema as schema
from pydantic import BaseModel
from pydantic._internal import _fields

def strip(node):
    global described
    if isinstance(node, dict):
        described += "description" in node
        return {k: strip(v) for k, v in node.items() if k != "description"}
    if isinstance(node, list):
        return [strip(v) for v in node]
    return node

described = 0
models = {name: strip(cls.model_json_schema()) for name, cls in sorted(vars(schema).items())
          if isinstance(cls, type) and issubclass(cls, BaseModel) and cls.__module__ == schema.__name__}
request = schema.InitializeRequest.model_validate(
    {"protocolVersion": 1, "clientCapabilities": {"fs": {"readTextFile": True}, "terminal": True}})
print(json.dumps({"models": models, "described": described, "request": request.model_dump(by_alias=True),
                  "restored": _fields.extract_docstrings_from_cls.__name__}))
"""


def probe(mode: str) -> dict:
    done = subprocess.run([sys.executable, "-c", PROBE, mode], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_the_models_are_the_same_but_for_the_docstrings_descriptions() -> None:
    plain, hooked = probe("plain"), probe("hooked")
    assert len(plain["models"]) > 200
    assert hooked["models"] == plain["models"]
    assert hooked["request"] == plain["request"]
    # Attribute docstrings are where most descriptions come from; the class docstrings remain.
    assert plain["described"] > hooked["described"] * 2 > 0
    assert hooked["restored"] == "extract_docstrings_from_cls"
