"""OpenTelemetry: a scripted `agentica -p` run with one tool call exports its trace and metrics
over OTLP/HTTP to a receiver this test runs on 127.0.0.1 (a plain http.server that decodes the
protobuf requests with the opentelemetry-proto classes, as a collector does); without the
variables, nothing of opentelemetry is imported at all."""

from __future__ import annotations

import http.server
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cli_support import cli_env, model_args

from agentica_cli.testing import ScriptedModelServer, turns

pytest.importorskip("opentelemetry.sdk", reason="the [otel] extra is not installed")
pytest.importorskip("opentelemetry.exporter.otlp.proto.http", reason="the [otel] extra is not installed")
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
    ExportMetricsServiceResponse,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

SECRET_PATH = "notes-sk-live-0123456789.txt"  # a tool argument: must never reach the collector


class OtlpReceiver:
    """An OTLP/HTTP endpoint: POST /v1/traces and /v1/metrics, protobuf bodies, as the spec says
    (it refuses any other content type, as a collector does)."""

    def __init__(self) -> None:
        self.spans: list[Any] = []
        self.resources: list[Any] = []
        self.metrics: list[Any] = []
        self.raw: list[bytes] = []
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if self.headers.get("Content-Type") != "application/x-protobuf":
                    self.send_error(415, "application/x-protobuf only")
                    return
                receiver.raw.append(body)
                if self.path == "/v1/traces":
                    request = ExportTraceServiceRequest.FromString(body)
                    for resource_spans in request.resource_spans:
                        receiver.resources.append(resource_spans.resource)
                        for scope in resource_spans.scope_spans:
                            receiver.spans.extend(scope.spans)
                    reply = ExportTraceServiceResponse().SerializeToString()
                elif self.path == "/v1/metrics":
                    request_m = ExportMetricsServiceRequest.FromString(body)
                    for resource_metrics in request_m.resource_metrics:
                        for scope_m in resource_metrics.scope_metrics:
                            receiver.metrics.extend(scope_m.metrics)
                    reply = ExportMetricsServiceResponse().SerializeToString()
                else:
                    self.send_error(404)
                    return
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.endpoint = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> OtlpReceiver:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def receiver() -> Iterator[OtlpReceiver]:
    with OtlpReceiver() as running:
        yield running


def _attributes(item: Any) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for kv in item.attributes:
        value = kv.value
        found[kv.key] = getattr(value, value.WhichOneof("value")) if value.WhichOneof("value") else None
    return found


def _run(project: Path, home: Path, server: ScriptedModelServer, env: dict[str, str],
         *python_flags: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *python_flags, "-m", "agentica_cli.cli.app", "-p", "what do the notes say?",
         *model_args(server)],
        cwd=project, env=env, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)


def _script() -> list[dict[str, Any]]:
    return [
        turns.tool_calls(turns.call("read_file", {"file_path": SECRET_PATH}, id="call_1"),
                         usage={"prompt_tokens": 120, "completion_tokens": 7}),
        turns.text("The notes say hello.", usage={"prompt_tokens": 150, "completion_tokens": 5}),
    ]


def test_a_print_run_exports_a_trace_with_request_and_tool_spans_and_metrics(
        receiver: OtlpReceiver, home: Path, project: Path) -> None:
    (project / SECRET_PATH).write_text("hello from the notes\n")
    # Schedules far beyond the run: only the flush at exit can deliver what arrives.
    env = cli_env(home, OTEL_TRACES_EXPORTER="otlp", OTEL_METRICS_EXPORTER="otlp",
                  OTEL_EXPORTER_OTLP_ENDPOINT=receiver.endpoint, OTEL_BSP_SCHEDULE_DELAY="600000",
                  OTEL_METRIC_EXPORT_INTERVAL="600000")
    with ScriptedModelServer(_script()) as server:
        proc = _run(project, home, server, env)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "The notes say hello.\n"
    # Flushed at exit: everything is there once the process has ended, nothing waited for.
    by_name: dict[str, list[Any]] = {}
    for span in receiver.spans:
        by_name.setdefault(span.name, []).append(span)
    assert sorted(by_name) == ["chat scripted-model", "execute_tool read_file", "invoke_agent agentica"]
    (turn,) = by_name["invoke_agent agentica"]
    requests = sorted(by_name["chat scripted-model"], key=lambda s: s.start_time_unix_nano)
    (tool,) = by_name["execute_tool read_file"]
    assert len(requests) == 2
    assert turn.parent_span_id == b""  # the root of its own trace
    for child in (*requests, tool):
        assert child.trace_id == turn.trace_id
        assert child.parent_span_id == turn.span_id
    # In the order they happened: request 1, the tool call, request 2, all inside the turn.
    assert requests[0].end_time_unix_nano <= tool.start_time_unix_nano
    assert tool.end_time_unix_nano <= requests[1].start_time_unix_nano
    assert turn.start_time_unix_nano <= requests[0].start_time_unix_nano
    assert requests[1].end_time_unix_nano <= turn.end_time_unix_nano

    first, second = (_attributes(r) for r in requests)
    assert first["gen_ai.request.model"] == "scripted-model"
    assert (first["gen_ai.usage.input_tokens"], first["gen_ai.usage.output_tokens"]) == (120, 7)
    assert (second["gen_ai.usage.input_tokens"], second["gen_ai.usage.output_tokens"]) == (150, 5)
    assert first["agentica.request.retries"] == 0 and first["agentica.request.step"] == 1
    assert first["agentica.request.latency_ms"] >= 0
    tool_attrs = _attributes(tool)
    assert tool_attrs["gen_ai.tool.name"] == "read_file" and tool_attrs["gen_ai.tool.call.id"] == "call_1"
    assert tool_attrs["agentica.tool.status"] == "ok" and tool_attrs["agentica.tool.duration_ms"] >= 0
    turn_attrs = _attributes(turn)
    assert (turn_attrs["gen_ai.usage.input_tokens"], turn_attrs["gen_ai.usage.output_tokens"]) == (270, 12)
    assert turn_attrs["agentica.stop_reason"] == "completed"
    service = {kv.key: kv.value.string_value for kv in receiver.resources[0].attributes}
    assert service["service.name"] == "agentica"
    # Arguments, results, prompts and answers stay on the machine.
    for body in receiver.raw:
        for private in (SECRET_PATH.encode(), b"hello from the notes", b"what do the notes say", b"say hello"):
            assert private not in body

    metrics = {m.name: m for m in receiver.metrics}
    tokens = {(_attributes(p)["gen_ai.token.type"]): p.as_int for p in metrics["agentica.tokens"].sum.data_points}
    assert tokens == {"input": 270, "output": 12}
    (calls,) = metrics["agentica.tool_calls"].sum.data_points
    assert _attributes(calls) == {"gen_ai.tool.name": "read_file", "agentica.tool.status": "ok"} and calls.as_int == 1
    assert sum(p.count for p in metrics["gen_ai.client.operation.duration"].histogram.data_points) == 2


def test_a_failed_request_is_an_error_span_and_an_error_metric(receiver: OtlpReceiver, home: Path,
                                                                project: Path) -> None:
    env = cli_env(home, OTEL_TRACES_EXPORTER="otlp", OTEL_METRICS_EXPORTER="otlp",
                  OTEL_EXPORTER_OTLP_ENDPOINT=receiver.endpoint)
    with ScriptedModelServer([turns.error(401, "bad key")]) as server:
        proc = _run(project, home, server, env)
    assert proc.returncode != 0
    (request,) = [s for s in receiver.spans if s.name == "chat scripted-model"]
    assert _attributes(request)["error.type"] == "auth"
    assert request.status.code == 2  # STATUS_CODE_ERROR
    errors = {m.name: m for m in receiver.metrics}["agentica.errors"]
    assert [(_attributes(p)["error.type"], p.as_int) for p in errors.sum.data_points] == [("auth", 1)]


def test_without_the_variables_nothing_of_opentelemetry_is_imported(home: Path, project: Path) -> None:
    with ScriptedModelServer(_script()) as server:
        proc = _run(project, home, server, cli_env(home), "-X", "importtime")
    assert proc.returncode == 0, proc.stderr
    imported = [line for line in proc.stderr.splitlines() if line.startswith("import time:")]
    assert any("agentica_cli.agent.agent" in line for line in imported)  # the walk saw the run's imports
    assert not [line for line in imported if "opentelemetry" in line or "agentica_cli.telemetry" in line]


def test_the_variables_are_read_as_the_specification_says() -> None:
    from agentica_cli.telemetry import Request, requested

    endpoint = {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}
    assert requested({}) == Request()
    on = requested({"OTEL_TRACES_EXPORTER": "console,otlp", **endpoint})
    assert (on.traces, on.metrics) == (True, False)
    only_metrics = requested({"OTEL_METRICS_EXPORTER": "otlp",
                              "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": "http://127.0.0.1:4318/v1/metrics"})
    assert (only_metrics.traces, only_metrics.metrics) == (False, True)
    no_endpoint = requested({"OTEL_TRACES_EXPORTER": "otlp"})
    assert not no_endpoint.traces and "OTEL_EXPORTER_OTLP_ENDPOINT" in no_endpoint.problem
    disabled = requested({"OTEL_TRACES_EXPORTER": "otlp", "OTEL_SDK_DISABLED": "true", **endpoint})
    assert not disabled.traces and not disabled.problem
    grpc = requested({"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc", **endpoint})
    assert not grpc.traces and "grpc" in grpc.problem


# -- in process: what the recorder makes of a run's events ---------------------------------------------


@pytest.fixture
def recorded() -> Iterator[tuple[Any, Any]]:
    """Spans and metrics of the runs in this test, in memory (no global provider touched)."""
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from agentica_cli.agent.observers import add_run_observer, remove_run_observer
    from agentica_cli.telemetry.recorder import Instruments, TurnRecorder

    spans, reader = InMemorySpanExporter(), InMemoryMetricReader()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(spans))
    meter_provider = MeterProvider(metric_readers=[reader])
    instruments = Instruments.create(tracer_provider.get_tracer("t"), meter_provider.get_meter("t"))

    def observe(agent: Any) -> TurnRecorder | None:
        return None if agent.is_subagent else TurnRecorder(instruments, agent)

    add_run_observer(observe)
    try:
        yield spans, reader
    finally:
        remove_run_observer(observe)


def test_a_sub_agents_spans_nest_under_its_task_call_and_retries_are_counted(
        recorded: tuple[Any, Any], scripted: Any, project: Path) -> None:
    import asyncio

    from conftest import scripted_model

    from agentica_cli.deep import DeepAgent

    spans, _ = recorded
    server = scripted(
        turns.tool_calls(turns.call("task", {"description": "look", "prompt": "read the notes"}, id="call_t")),
        turns.error(500, "overloaded"),  # the sub-agent's first request fails once, then is sent again
        turns.text("the notes say hello", usage={"prompt_tokens": 30, "completion_tokens": 4}),
        turns.text("Done.", usage={"prompt_tokens": 50, "completion_tokens": 2}),
    )
    agent = DeepAgent(scripted_model(server), work_dir=str(project))
    result = asyncio.run(agent.run("delegate it"))
    assert result.content == "Done."
    finished = {s.name: s for s in spans.get_finished_spans() if s.name != "chat scripted-model"}
    chats = [s for s in spans.get_finished_spans() if s.name == "chat scripted-model"]
    turn, task = finished["invoke_agent agentica"], finished["execute_tool task"]
    assert task.parent.span_id == turn.context.span_id
    parents = sorted((s.parent.span_id == task.context.span_id, s.attributes["agentica.request.retries"])
                     for s in chats)
    # two requests of the parent (under the turn), one of the sub-agent under the task call, retried once
    assert parents == [(False, 0), (False, 0), (True, 1)]
    assert all(s.context.trace_id == turn.context.trace_id for s in spans.get_finished_spans())
    assert len([s for s in spans.get_finished_spans() if s.name == "invoke_agent agentica"]) == 1  # one trace per turn


def test_a_cancelled_turn_still_ends_its_spans(recorded: tuple[Any, Any], scripted: Any, project: Path) -> None:
    import asyncio

    from conftest import scripted_model

    from agentica_cli.agent import Agent

    spans, _ = recorded
    server = scripted(turns.text("slow", delay=30))

    async def run() -> None:
        agent = Agent(scripted_model(server))
        async def consume() -> None:
            async for event in agent.run_stream("hi"):
                if event.type == "model_request_started":
                    task.cancel()
        task = asyncio.ensure_future(consume())
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(run())
    names = sorted(s.name for s in spans.get_finished_spans())
    assert names == ["chat scripted-model", "invoke_agent agentica"]
    turn = next(s for s in spans.get_finished_spans() if s.name == "invoke_agent agentica")
    assert turn.attributes["agentica.stop_reason"] == "cancelled"


def test_with_the_variables_set_version_still_imports_nothing_of_it(receiver: OtlpReceiver, home: Path) -> None:
    env = cli_env(home, OTEL_TRACES_EXPORTER="otlp", OTEL_EXPORTER_OTLP_ENDPOINT=receiver.endpoint)
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "agentica_cli.cli.app", "--version"], env=env,
                          capture_output=True, text=True, timeout=30)
    assert proc.returncode == 0 and proc.stdout.startswith("agentica ")
    assert "opentelemetry" not in proc.stderr  # the SDK is set up when a run starts, not before
    assert receiver.raw == []


def test_an_acp_prompt_is_traced_while_the_editor_keeps_the_agent_open(
        receiver: OtlpReceiver, home: Path, project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The same spans from another front end: ACP consumes the same event stream. An editor keeps
    # the agent running, so the spans go out on the batch processor's schedule, not at exit.
    import asyncio
    import time

    import acp_support
    from acp import text_block

    monkeypatch.setattr(acp_support, "agent_env", lambda h: cli_env(
        h, OTEL_TRACES_EXPORTER="otlp", OTEL_EXPORTER_OTLP_ENDPOINT=receiver.endpoint, OTEL_BSP_SCHEDULE_DELAY="100"))
    script = [turns.text("It says hello.", usage={"prompt_tokens": 60, "completion_tokens": 4})]

    async def scenario() -> list[str]:
        with ScriptedModelServer(script) as server:
            client = acp_support.EditorClient()
            async with acp_support.editor_session(client, server, project, home) as conn:
                session = await conn.new_session(cwd=str(project), mcp_servers=[])
                await conn.prompt(session_id=session.session_id, prompt=[text_block("read the notes")])
                deadline = time.monotonic() + 20
                while not any(s.name == "invoke_agent agentica" for s in receiver.spans):
                    assert time.monotonic() < deadline, "no turn span arrived"
                    await asyncio.sleep(0.05)
                return [session.session_id]

    (session_id,) = asyncio.run(scenario())
    names = sorted(s.name for s in receiver.spans)
    assert names == ["chat scripted-model", "invoke_agent agentica"]
    turn = next(s for s in receiver.spans if s.name == "invoke_agent agentica")
    attrs = _attributes(turn)
    assert attrs["gen_ai.conversation.id"] == session_id  # the editor's session id
    assert (attrs["gen_ai.usage.input_tokens"], attrs["gen_ai.usage.output_tokens"]) == (60, 4)


def test_exit_waits_a_bounded_time_for_a_collector_that_never_answers(monkeypatch: pytest.MonkeyPatch) -> None:
    import socket
    import time

    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    from agentica_cli.telemetry import setup
    from agentica_cli.telemetry.recorder import Instruments

    hole = socket.socket()  # accepts connections (the backlog does) and never answers
    hole.bind(("127.0.0.1", 0))
    hole.listen(8)
    try:
        provider = TracerProvider(shutdown_on_exit=False)
        exporter = OTLPSpanExporter(endpoint=f"http://127.0.0.1:{hole.getsockname()[1]}/v1/traces", timeout=8)
        provider.add_span_processor(BatchSpanProcessor(exporter))
        provider.get_tracer("t").start_span("pending").end()
        telemetry = setup.Telemetry(provider, None, Instruments(provider.get_tracer("t")))
        monkeypatch.setattr(setup, "EXIT_BUDGET", 0.5)
        started = time.monotonic()
        telemetry.shutdown()
        waited = time.monotonic() - started
    finally:
        hole.close()
    assert waited < 4  # the budget (0.5 s), not the exporter's 8 s
    telemetry.shutdown()  # a second call does nothing


def test_each_repl_turn_is_a_trace_of_its_own_flushed_when_the_repl_ends(
        receiver: OtlpReceiver, start_repl: Any) -> None:
    script = [turns.text("First answer.", usage={"prompt_tokens": 10, "completion_tokens": 2}),
              turns.text("Second answer.", usage={"prompt_tokens": 20, "completion_tokens": 3})]
    with ScriptedModelServer(script) as server:
        repl = start_repl(server, OTEL_TRACES_EXPORTER="otlp", OTEL_EXPORTER_OTLP_ENDPOINT=receiver.endpoint,
                          OTEL_BSP_SCHEDULE_DELAY="600000")  # nothing goes out before the REPL ends
        repl.send_line("one")
        repl.expect("First answer.")
        repl.expect_prompt()
        repl.send_line("two")
        repl.expect("Second answer.")
        repl.expect_prompt()
        assert receiver.spans == []
        assert repl.exit() == 0
    turns_seen = sorted((s for s in receiver.spans if s.name == "invoke_agent agentica"),
                        key=lambda s: s.start_time_unix_nano)
    assert [(_attributes(t)["gen_ai.usage.input_tokens"]) for t in turns_seen] == [10, 20]
    assert turns_seen[0].trace_id != turns_seen[1].trace_id  # a trace per turn
    assert len({_attributes(t)["gen_ai.conversation.id"] for t in turns_seen}) == 1  # one session
    chats = [s for s in receiver.spans if s.name == "chat scripted-model"]
    assert sorted(c.trace_id for c in chats) == sorted(t.trace_id for t in turns_seen)
