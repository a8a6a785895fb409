"""The openai SDK imported without its API types (models/openai_import.py): a fresh interpreter
loads a fraction of the modules, a real request still works, and every type still resolves."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

from agentica_cli.testing import ScriptedModelServer, turns

CHILD = textwrap.dedent("""
    import asyncio, json, sys
    from agentica_cli.models import OpenAIChat
    model = OpenAIChat(id="scripted-model", api_key="sk-test", base_url=sys.argv[1])
    reply = asyncio.run(model.response([{"role": "user", "content": "hi"}]))
    loaded = sorted(m for m in sys.modules if m.startswith("openai"))
    import openai
    names = [openai.types.chat.ChatCompletion.__name__, openai.types.Batch.__name__,
             openai.types.responses.Response.__name__, openai.APIStatusError.__name__]
    from openai.types.chat import ChatCompletionMessageParam
    print(json.dumps({"content": reply.content, "loaded": loaded, "names": names}))
""")


def test_the_sdk_loads_lazily_and_still_works() -> None:
    with ScriptedModelServer([turns.text("hello")]) as server:
        proc = subprocess.run([sys.executable, "-c", CHILD, server.base_url], capture_output=True, text=True,
                              timeout=120)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["content"] == "hello"
    assert out["names"] == ["ChatCompletion", "Batch", "Response", "APIStatusError"]
    # The endpoints' types were not loaded for the request (a full `import openai` loads ~500 modules).
    assert "openai.types.responses.response" not in out["loaded"]
    assert "openai.types.eval_create_params" not in out["loaded"]
    assert len(out["loaded"]) < 250
