"""Real providers, as they answer: recorded streams replayed over HTTP by a server that
refuses histories the way each provider does (agentica_cli.testing.replay).

The recordings are in tests/provider_replays/ (MANIFEST.md names where each shape comes
from). Each numbered comment names the item of issue 24 the test covers.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from cli_support import cli_env, run_cli, scripted_key_file

from agentica_cli.agent import Agent
from agentica_cli.models import (
    DeepSeek,
    ModelError,
    Moonshot,
    Ollama,
    OpenAIChat,
    OpenAILike,
    OpenRouter,
    Qwen,
    ZhipuAI,
)
from agentica_cli.testing.replay import ProviderReplayServer, Recording

REPLAYS = Path(__file__).parent / "provider_replays"
FILES = {"notes.txt": "hello from the notes\n", "todo.txt": "buy milk\n"}


def rec(provider: str, name: str) -> Recording:
    return Recording.load(REPLAYS / provider / name)


def read_file(file_path: str) -> str:
    """Read a file of the test project.

    Args:
        file_path: the file's name
    """
    return FILES.get(file_path, f"Error: no such file {file_path}")


# One two-prompt session with a tool call per provider: (rules, model class, model id, options, folder).
SESSIONS = {
    "deepseek-v4-thinking": ("deepseek", DeepSeek, "deepseek-v4-flash", {}, "deepseek"),
    "kimi-k2.6-thinking": ("kimi", Moonshot, "kimi-k2.6", {}, "kimi"),
    "glm-tool-stream": ("glm", ZhipuAI, "glm-4.7", {"extra_body": {"tool_stream": True}}, "glm"),
    "qwen-parallel": ("qwen", Qwen, "qwen-plus", {}, "qwen"),
    "groq-reasoning": ("groq", OpenAILike, "openai/gpt-oss-120b", {"dialect": "groq"}, "groq"),
    "gemini-3": ("gemini", OpenAILike, "gemini-3-pro-preview", {"dialect": "gemini"}, "gemini"),
    "gemini-3-openrouter": ("openrouter-gemini", OpenRouter, "google/gemini-3-pro-preview", {}, "openrouter-gemini"),
    "ollama-parallel": ("ollama", Ollama, "qwen3:8b", {}, "ollama"),
    "vllm-reasoning": ("vllm", OpenAILike, "Qwen/Qwen3-32B", {}, "vllm"),
    "llamacpp": ("llamacpp", OpenAILike, "gpt-3.5-turbo", {}, "llamacpp"),
}


def session_recordings(folder: str) -> list[Recording]:
    return [Recording.load(path) for path in sorted((REPLAYS / folder).glob("0[123]-*.sse"))]


def model_for(server: ProviderReplayServer, cls: type, model_id: str, **options) -> OpenAIChat:
    options.setdefault("retry_base_delay", 0.01)
    return cls(id=model_id, api_key="sk-test", base_url=server.base_url, **options)


async def events_of(agent: Agent, prompt: str) -> list:
    return [event async for event in agent.run_stream(prompt)]


def run_session(agent: Agent) -> tuple[list, list]:
    async def both():
        return await events_of(agent, "Read my notes"), await events_of(agent, "Thanks!")
    return asyncio.run(both())


@pytest.mark.parametrize("name", list(SESSIONS))
def test_a_two_prompt_session_with_a_tool_call_is_accepted_by_the_provider(name):
    # Items 1-8: each provider's stream read right and its history sent back as it demands.
    rules, cls, model_id, options, folder = SESSIONS[name]
    with ProviderReplayServer(rules, session_recordings(folder)) as server:
        agent = Agent(model_for(server, cls, model_id, **options), tools=[read_file])
        first, second = run_session(agent)
    assert server.refusals == [], server.refusals[0][1].body
    assert server.pending == 0
    finished = [e for e in first + second if e.type == "turn_finished"]
    assert [e.stop_reason for e in finished] == ["completed", "completed"]
    assert finished[1].content == "You're welcome."
    calls = [e for e in first if e.type == "tool_call_finished"]
    parallel = name.endswith("parallel")
    assert [c.result for c in calls] == (["hello from the notes\n", "buy milk\n"] if parallel
                                         else ["hello from the notes\n"])
    assert len({c.call_id for c in calls}) == len(calls)


@pytest.mark.parametrize("name", ["deepseek-v4-thinking", "kimi-k2.6-thinking", "gemini-3"])
def test_the_same_session_not_streamed(name):
    # The whole-completion bodies carry the same fields (message.reasoning_content, extra_content).
    rules, cls, model_id, options, folder = SESSIONS[name]
    recordings = [Recording.load(path) for path in sorted((REPLAYS / folder / "json").glob("*.json"))]
    with ProviderReplayServer(rules, recordings) as server:
        first, second = run_session(Agent(model_for(server, cls, model_id, stream=False, **options),
                                          tools=[read_file]))
    assert server.refusals == [], server.refusals[0][1].body
    assert [e.content for e in first + second if e.type == "turn_finished"] == ["It says hello.", "You're welcome."]
    assert all(not e.estimated for e in first + second if e.type == "usage")


def test_a_model_switch_mid_session_sends_the_new_provider_only_what_it_accepts():
    # /model from DeepSeek (reasoning on every message) to Groq (refuses the field) and to Kimi.
    with ProviderReplayServer("deepseek", session_recordings("deepseek")[:2]) as deepseek:
        agent = Agent(model_for(deepseek, DeepSeek, "deepseek-v4-flash"), tools=[read_file])
        agent.run_sync("Read my notes")
    with ProviderReplayServer("groq", [rec("groq", "03-answer.sse")]) as groq:
        agent.model = model_for(groq, OpenAILike, "openai/gpt-oss-120b", dialect="groq")
        assert agent.run_sync("Thanks!").content == "You're welcome."
    with ProviderReplayServer("kimi", [rec("kimi", "03-answer.sse")]) as kimi:
        agent.model = model_for(kimi, Moonshot, "kimi-k2.6")
        assert agent.run_sync("Thanks again!").content == "You're welcome."
    assert deepseek.refusals == groq.refusals == kimi.refusals == []


def test_deepseek_gets_reasoning_content_on_every_message_of_a_tool_turn_and_none_elsewhere():
    # 1. The final answer of the tool turn carries it too; the later plain turn does not need it.
    recordings = [*session_recordings("deepseek"), rec("deepseek", "03-answer.sse")]
    with ProviderReplayServer("deepseek", recordings) as server:
        agent = Agent(model_for(server, DeepSeek, "deepseek-v4-flash"), tools=[read_file])
        run_session(agent)
        asyncio.run(events_of(agent, "And again?"))
    assert server.refusals == []
    last = server.requests[-1]["messages"]
    tool_turn = [m for m in last[1:4] if m["role"] == "assistant"]
    assert [m["reasoning_content"] for m in tool_turn] == [
        "The user wants Paris weather. I will call read_file.", "The tool says sunny."]
    plain = [m for m in last[5:] if m["role"] == "assistant"]
    assert plain and all("reasoning_content" not in m for m in plain)


def test_deepseek_reasoner_never_gets_reasoning_content_back():
    # 1. The old R1 model refused the field in input messages; it has no tools.
    recordings = [rec("deepseek-reasoner", "01-answer.sse"), rec("deepseek-reasoner", "02-answer.sse")]
    with ProviderReplayServer("deepseek-reasoner", recordings) as server:
        agent = Agent(model_for(server, DeepSeek, "deepseek-reasoner"))
        agent.run_sync("9.11 or 9.8?")
        result = agent.run_sync("How many r in strawberry?")
    assert server.refusals == [] and result.content == "There are three."
    assert agent.messages[1]["reasoning_content"] == "Compare digit by digit."  # kept in the history


FOREIGN_HISTORY = [  # from a model that sent no reasoning and no signatures (another provider, an old session)
    {"role": "user", "content": "Read my notes"},
    {"role": "assistant", "content": None,
     "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "read_file",
                                                                     "arguments": '{"file_path": "notes.txt"}'}}]},
    {"role": "tool", "tool_call_id": "call_1", "content": "hello from the notes\n"},
    {"role": "assistant", "content": ""},
]


@pytest.mark.parametrize(("rules", "cls", "model_id", "options", "answer"), [
    ("kimi", Moonshot, "kimi-k2.6", {}, rec("kimi", "03-answer.sse")),
    ("gemini", OpenAILike, "gemini-3-pro-preview", {"dialect": "gemini"}, rec("gemini", "03-answer.sse")),
    ("deepseek", DeepSeek, "deepseek-v4-pro", {}, rec("deepseek", "03-answer.sse")),
    ("groq", OpenAILike, "openai/gpt-oss-120b", {"dialect": "groq"}, rec("groq", "03-answer.sse")),
    ("openai", OpenAILike, "gpt-4o", {"dialect": "openai"}, rec("groq", "03-answer.sse")),
])
def test_a_history_from_another_provider_is_converted_to_what_this_one_accepts(rules, cls, model_id, options, answer):
    # 2, 3, 4 and 1: a resumed session or a /model switch: no reasoning, no signature, an empty answer.
    history = [dict(m) for m in FOREIGN_HISTORY]
    history[1] = history[1] | {"reasoning_content": ""} if rules == "groq" else history[1]
    with ProviderReplayServer(rules, [answer]) as server:
        agent = Agent(model_for(server, cls, model_id, **options), tools=[read_file], messages=history)
        result = agent.run_sync("Thanks!")
    assert server.refusals == [], server.refusals[0][1].body
    assert result.content == "You're welcome."
    assert agent.messages[:4] == history  # the stored history is unchanged: the request was converted


def test_gemini_thought_signatures_go_back_on_their_calls_and_survive_a_saved_session(tmp_path):
    # 4. The signature is kept in the history (and so in the session file), sent back as received.
    from agentica_cli.models.dialects import DIALECTS

    with ProviderReplayServer("gemini", session_recordings("gemini")) as server:
        agent = Agent(model_for(server, OpenAILike, "gemini-3-pro-preview", dialect="gemini"), tools=[read_file])
        run_session(agent)
    call = server.requests[1]["messages"][1]["tool_calls"][0]
    assert call["extra_content"]["google"]["thought_signature"].startswith("CtwFAdHtim9a")
    assert json.loads(json.dumps(agent.messages)) == agent.messages  # JSON-safe, as sessions store it
    assert DIALECTS["openai"].prepare(agent.messages)[1]["tool_calls"][0].keys() == {"id", "type", "function"}


def test_a_gemini_call_without_a_signature_gets_the_documented_placeholder():
    # 4. Only the first call of a step needs one; the others are left as they are.
    from agentica_cli.models.dialects import DIALECTS, GEMINI_PLACEHOLDER_SIGNATURE

    calls = [{"id": "a", "type": "function", "function": {"name": "f", "arguments": "{}"}},
             {"id": "b", "type": "function", "function": {"name": "f", "arguments": "{}"}}]
    sent = DIALECTS["gemini"].prepare([{"role": "user", "content": "x"},
                                       {"role": "assistant", "content": None, "tool_calls": calls}])
    assert sent[1]["tool_calls"][0]["extra_content"] == {"google": {"thought_signature": GEMINI_PLACEHOLDER_SIGNATURE}}
    assert sent[1]["tool_calls"][1] == calls[1]


def test_openrouter_gets_reasoning_details_back_as_received():
    # 5. Text and encrypted entries, merged from their streamed pieces, in order.
    with ProviderReplayServer("openrouter-gemini", session_recordings("openrouter-gemini")) as server:
        agent = Agent(model_for(server, OpenRouter, "google/gemini-3-pro-preview"), tools=[read_file])
        first, _ = run_session(agent)
    assert server.refusals == []
    details = server.requests[1]["messages"][1]["reasoning_details"]
    assert [d["type"] for d in details] == ["reasoning.text", "reasoning.encrypted"]
    assert details[1]["data"].startswith("CtwFAdHtim9a") and details[1]["id"] == "tool_read_file_Xo1"
    assert "".join(e.text for e in first if e.type == "reasoning_delta") == "Checking Paris weather."


def test_ollama_gets_reasoning_under_its_own_name():
    # 6. Ollama reads `reasoning` on an assistant message, not `reasoning_content`.
    with ProviderReplayServer("ollama", session_recordings("ollama")) as server:
        run_session(Agent(model_for(server, Ollama, "qwen3:8b"), tools=[read_file]))
    sent = server.requests[1]["messages"][1]
    assert sent["reasoning"] == "Two cities, two calls." and "reasoning_content" not in sent


def test_ollamas_parallel_calls_on_one_index_stay_two_calls():
    # 7. Both calls at index 0, each with its own id: two calls, two results, valid arguments.
    with ProviderReplayServer("ollama", session_recordings("ollama")) as server:
        run_session(Agent(model_for(server, Ollama, "qwen3:8b"), tools=[read_file]))
    calls = server.requests[1]["messages"][1]["tool_calls"]
    assert [(c["id"], c["function"]["arguments"]) for c in calls] == [
        ("call_p3xk1a9m", '{"file_path":"notes.txt"}'), ("call_q8ru2b0n", '{"file_path":"todo.txt"}')]


@pytest.mark.parametrize(("rules", "cls", "model_id", "options", "expected"), [
    ("kimi", Moonshot, "kimi-k2.6", {}, [(301, 27), (340, 12), (360, 5)]),  # 8. usage inside choices[0]
    ("groq", OpenAILike, "openai/gpt-oss-120b", {"dialect": "groq", "include_usage": False},
     [(180, 30), (220, 10), (240, 6)]),  # Groq's x_groq.usage
])
def test_usage_is_read_where_the_provider_puts_it(rules, cls, model_id, options, expected):
    folder = "kimi" if rules == "kimi" else "groq"
    with ProviderReplayServer(rules, session_recordings(folder)) as server:
        first, second = run_session(Agent(model_for(server, cls, model_id, **options), tools=[read_file]))
    usage = [e for e in first + second if e.type == "usage"]
    assert [(u.input_tokens, u.output_tokens, u.estimated) for u in usage] == [(i, o, False) for i, o in expected]


# -- 9, 10: how an answer ended ---------------------------------------------------------------

@pytest.mark.parametrize(("recording", "stop_reason", "words"), [
    (rec("openai", "length-empty.sse"), "truncated", "output token limit"),
    (rec("openai", "azure-content-filter.sse"), "filtered", "content filter"),
    (rec("glm", "sensitive.sse"), "filtered", "finish_reason sensitive"),
    (rec("lmstudio", "empty-reply.sse"), "empty", "empty answer"),
    (rec("openai", "refusal.sse"), "filtered", "refused"),
])
def test_an_answer_that_did_not_end_normally_is_a_notice_and_its_own_stop_reason(recording, stop_reason, words):
    with ProviderReplayServer("openai", [recording]) as server:
        events = asyncio.run(events_of(Agent(model_for(server, OpenAILike, "m")), "hi"))
    notices = [e.message for e in events if e.type == "notice" and e.kind == "warning"]
    assert len(notices) == 1 and words in notices[0]
    finished = events[-1]
    assert (finished.type, finished.stop_reason) == ("turn_finished", stop_reason)


def test_the_repl_shows_the_notice_of_a_cut_answer():
    # 9. The interactive session's renderer gets the loop's events: the warning is on screen.
    import io

    from rich.console import Console

    from agentica_cli.tui.render import EventRenderer

    with ProviderReplayServer("openai", [rec("openai", "azure-content-filter.sse")]) as server:
        events = asyncio.run(events_of(Agent(model_for(server, OpenAILike, "gpt-4o")), "hi"))
    out = io.StringIO()
    renderer = EventRenderer(Console(file=out, width=200, force_terminal=False), Path("."), markdown=False)
    for event in events:
        renderer.handle(event)
    screen = out.getvalue()
    assert "Here is" in screen and "note: The provider's content filter stopped the answer" in screen


def test_a_refusal_is_shown_as_the_answer():
    # 10. OpenAI's `refusal` text, not an empty answer.
    with ProviderReplayServer("openai", [rec("openai", "refusal.sse")]) as server:
        events = asyncio.run(events_of(Agent(model_for(server, OpenAILike, "m")), "hi"))
    assert "".join(e.text for e in events if e.type == "text_delta") == "I'm sorry, I can't help with that."
    assert events[-1].content == "I'm sorry, I can't help with that."


def test_an_answer_cut_with_no_text_is_not_an_empty_message_for_kimi():
    # 9. Kimi refuses an empty assistant message in the next request ("must not be empty").
    with ProviderReplayServer("kimi", [rec("openai", "length-empty.sse"), rec("kimi", "03-answer.sse")]) as server:
        agent = Agent(model_for(server, Moonshot, "kimi-k2.6"))
        assert agent.run_sync("hi").stop_reason == "truncated"
        assert agent.run_sync("Thanks!").content == "You're welcome."
    assert server.refusals == []


def test_a_context_window_finish_reason_is_an_overflow():
    # 9. z.ai's model_context_window_exceeded: the loop's overflow path (compact, or say so), not an answer.
    with ProviderReplayServer("zai", [rec("zai", "context-window-exceeded.sse")]) as server:
        events = asyncio.run(events_of(Agent(model_for(server, ZhipuAI, "glm-4.6")), "hi"))
    errors = [e for e in events if e.type == "error"]
    assert [e.kind for e in errors] == ["context_length"] and events[-1].stop_reason == "error"


def test_a_context_window_finish_reason_compacts_and_sends_again():
    # 9. With older turns to summarise: compacted once, then the request is sent again.
    history = []
    for n in range(4):
        history += [{"role": "user", "content": f"question {n} " + "x" * 200},
                    {"role": "assistant", "content": f"answer {n} " + "y" * 200}]
    recordings = [rec("zai", "context-window-exceeded.sse"), rec("glm", "02-answer.sse"), rec("glm", "03-answer.sse")]
    with ProviderReplayServer("zai", recordings) as server:
        agent = Agent(model_for(server, ZhipuAI, "glm-4.6"), messages=history)
        events = asyncio.run(events_of(agent, "and now?"))
    assert [e.kind for e in events if e.type == "notice"] == ["compaction"]
    assert events[-1].content == "You're welcome." and len(server.requests) == 3
    assert len(server.requests[2]["messages"]) < len(server.requests[0]["messages"])


# -- 11-14: streams and bodies ----------------------------------------------------------------

def test_content_as_a_list_of_parts_is_text_and_reasoning():
    # 11. Mistral's magistral: text deltas are strings, thinking parts are reasoning.
    with ProviderReplayServer("mistral", [rec("mistral", "content-parts.sse")]) as server:
        events = asyncio.run(events_of(Agent(model_for(server, OpenAILike, "magistral-medium-2509")), "hi"))
    texts = [e.text for e in events if e.type == "text_delta"]
    assert all(isinstance(t, str) for t in texts) and "".join(texts) == "Hello there."
    assert "".join(e.text for e in events if e.type == "reasoning_delta") == "Simple greeting."
    assert events[-1].stop_reason == "completed"


def test_done_without_a_finish_reason_is_a_complete_answer():
    # 12. Not asked again five times.
    with ProviderReplayServer("llamacpp", [rec("llamacpp", "done-without-finish.sse")] * 5) as server:
        result = Agent(model_for(server, OpenAILike, "m")).run_sync("hi")
    assert (result.content, result.stop_reason, len(server.requests)) == ("Complete answer.", "completed", 1)


def test_an_error_chunk_in_a_200_stream_is_retried_like_a_502():
    # 13. OpenRouter's mid-stream error (finish_reason "error"), then a good answer.
    with ProviderReplayServer("openrouter-gemini", [rec("openrouter-gemini", "error-mid-stream.sse"),
                                                    rec("openrouter-gemini", "03-answer.sse")]) as server:
        events = asyncio.run(events_of(Agent(model_for(server, OpenRouter, "google/gemini-3-pro-preview")), "hi"))
    retries = [e for e in events if e.type == "notice" and e.kind == "retry"]
    assert len(retries) == 1 and "Provider disconnected unexpectedly" in retries[0].message
    assert events[-1].content == "You're welcome." and len(server.requests) == 2


@pytest.mark.parametrize("stream", [True, False])
def test_a_200_with_a_json_error_body_shows_the_servers_message_at_once(stream):
    # 14. Older llama.cpp: not retried as "no choices"; its words reach the user.
    with ProviderReplayServer("llamacpp", [rec("llamacpp", "error-200.json")] * 5) as server:
        model = model_for(server, OpenAILike, "m", stream=stream)
        with pytest.raises(ModelError) as err:
            asyncio.run(model.response([{"role": "user", "content": "hi"}]))
    assert "the request exceeds the available context size" in err.value.message
    assert len(server.requests) == 1


def test_the_dialect_is_chosen_by_preset_url_and_model_and_a_setting_wins():
    from agentica_cli.models.dialects import guess_dialect

    assert OpenAIChat(api_key="k").dialect.name == "openai"
    assert DeepSeek(api_key="k").dialect.name == "deepseek"
    assert OpenAILike(base_url="http://127.0.0.1:9/v1").dialect.name == "generic"
    assert OpenAILike(base_url="http://127.0.0.1:9/v1", id="kimi-k2.6").dialect.name == "kimi"
    assert OpenAILike(base_url="http://127.0.0.1:9/v1", dialect="groq").dialect.name == "groq"
    assert guess_dialect("https://api.groq.com/openai/v1").name == "groq"
    assert guess_dialect("https://generativelanguage.googleapis.com/v1beta/openai/").name == "gemini"
    assert guess_dialect("http://192.168.1.5:11434/v1").name == "ollama"
    with pytest.raises(ValueError, match="unknown dialect"):
        OpenAILike(dialect="nonsense")


# -- the CLI (-p as a subprocess) -------------------------------------------------------------

def _project(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    project.mkdir()
    for name, text in FILES.items():
        (project / name).write_text(text)
    return project


@pytest.mark.parametrize(("rules", "provider", "model_id", "dialect", "folder"), [
    ("deepseek", "deepseek", "deepseek-v4-flash", None, "deepseek"),
    ("gemini", "openai-like", "gemini-3-pro-preview", "gemini", "gemini"),
    ("ollama", "ollama", "qwen3:8b", None, "ollama"),
    ("kimi", "moonshot", "kimi-k2.6", None, "kimi"),
])
def test_two_prompts_with_a_tool_call_in_print_mode_and_continue(tmp_path, rules, provider, model_id, dialect, folder):
    # The session file keeps what the provider needs back: `--continue` is accepted.
    home, project = tmp_path / "home", _project(tmp_path)
    home.mkdir()
    if dialect:
        (home / "config.toml").write_text(f'[model]\ndialect = "{dialect}"\n')
    with ProviderReplayServer(rules, session_recordings(folder)) as server:
        args = ["--provider", provider, "--base-url", server.base_url, "--api-key-file", scripted_key_file(),
                "--model", model_id]
        env = cli_env(home)
        first = run_cli(["-p", "Read my notes", *args], cwd=project, home=home, env=env)
        second = run_cli(["-p", "Thanks!", "--continue", *args], cwd=project, home=home, env=env)
    assert first.returncode == 0, first.stderr
    assert second.returncode == 0, second.stderr
    assert second.stdout.strip() == "You're welcome."
    assert server.refusals == []
    saved = "".join(path.read_text() for path in home.rglob("*.jsonl"))
    kept = {"deepseek": '"reasoning_content"', "gemini": '"thought_signature"', "ollama": '"reasoning_content"',
            "kimi": '"reasoning_content"'}
    assert kept[rules] in saved  # the session file keeps what the provider wants back


def test_print_mode_exits_non_zero_with_a_notice_when_the_answer_was_cut(tmp_path):
    # 9. stream-json has the notice; the json result says why; the exit code is 3.
    home, project = tmp_path / "home", _project(tmp_path)
    home.mkdir()
    cut = rec("openai", "length-empty.sse")
    with ProviderReplayServer("openai", [cut, cut]) as server:
        args = ["--provider", "openai-like", "--base-url", server.base_url, "--api-key-file", scripted_key_file(),
                "--model", "gpt-5-mini"]
        streamed = run_cli(["-p", "hi", "--output-format", "stream-json", *args], cwd=project, home=home)
        whole = run_cli(["-p", "hi", "--output-format", "json", *args], cwd=project, home=home)
    assert streamed.returncode == 3 and whole.returncode == 3
    lines = [json.loads(line) for line in streamed.stdout.splitlines()]
    assert any(line["type"] == "notice" and "output token limit" in line["message"] for line in lines)
    result = json.loads(whole.stdout)
    assert result["stop_reason"] == "truncated" and result["is_error"] and "output token limit" in result["error"]


def test_a_fresh_id_on_an_arguments_piece_does_not_start_a_new_call():
    # 7. Only a call's head (with a function name) under another id starts another call.
    from agentica_cli.models.openai_chat import ResponseAccumulator

    acc = ResponseAccumulator()
    acc.add_tool_delta({"index": 0, "id": "a", "function": {"name": "read_file", "arguments": '{"file_'}})
    acc.add_tool_delta({"index": 0, "id": "b", "function": {"arguments": 'path": "x"}'}})
    acc.add_tool_delta({"index": 0, "id": "c", "function": {"name": "read_file", "arguments": '{"file_path": "y"}'}})
    calls = acc.response().tool_calls
    assert [(c.id, c.arguments) for c in calls] == [("a", '{"file_path": "x"}'), ("c", '{"file_path": "y"}')]


def test_two_heads_of_one_function_without_ids_on_one_index_are_two_calls():
    # 7. Ollama builds without ids: the second head comes after whole arguments.
    from agentica_cli.models.openai_chat import ResponseAccumulator

    acc = ResponseAccumulator()
    acc.add_tool_delta({"index": 0, "function": {"name": "read_file", "arguments": '{"file_path": "x"}'}})
    acc.add_tool_delta({"index": 0, "function": {"name": "read_file", "arguments": '{"file_path": "y"}'}})
    assert [c.arguments for c in acc.response().tool_calls] == ['{"file_path": "x"}', '{"file_path": "y"}']


@pytest.mark.parametrize(("provider", "name", "answer", "reasoning", "stop_reason"), [
    ("openai", "refusal.json", "I'm sorry, I can't help with that.", "", "filtered"),  # 10
    ("mistral", "content-parts.json", "Hello there.", "Simple greeting.", "completed"),  # 11
])
def test_refusals_and_content_parts_in_whole_completions(provider, name, answer, reasoning, stop_reason):
    with ProviderReplayServer(provider, [rec(provider, name)]) as server:
        events = asyncio.run(events_of(Agent(model_for(server, OpenAILike, "m", stream=False)), "hi"))
    assert "".join(e.text for e in events if e.type == "text_delta") == answer
    assert "".join(e.text for e in events if e.type == "reasoning_delta") == reasoning
    assert (events[-1].content, events[-1].stop_reason) == (answer, stop_reason)


def test_a_history_that_needs_nothing_changed_is_sent_as_it_is():
    # The dialect runs before every request: an unchanged history is not copied.
    from agentica_cli.models.dialects import DIALECTS

    history = [dict(m) for m in FOREIGN_HISTORY[:3]] + [{"role": "assistant", "content": "done"}]
    for name in ("generic", "openai", "groq", "openrouter", "ollama", "zhipu", "qwen"):
        assert DIALECTS[name].prepare(history) is history, name


def test_the_stand_in_reasoning_is_not_empty_and_not_the_same_on_every_message():
    # 1, 2. DeepSeek V4 refuses "", and one text repeated everywhere degrades its answers.
    from agentica_cli.models.dialects import DIALECTS

    sent = DIALECTS["deepseek"].prepare(FOREIGN_HISTORY)
    texts = [m["reasoning_content"] for m in sent if m["role"] == "assistant"]
    assert len(texts) == 2 and all(texts) and len(set(texts)) == 2
    assert "read_file" in texts[0]
