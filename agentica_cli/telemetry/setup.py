"""The OpenTelemetry SDK, set up from the standard variables: OTLP/HTTP exporters for traces
and metrics, registered as the global providers (so the MCP SDK's own spans go out too), and a
run observer that turns each run's events into spans and metrics (recorder.py).

The exporters read the standard OTEL_EXPORTER_OTLP_* variables themselves (endpoint, headers,
timeout, compression, certificates); the resource reads OTEL_SERVICE_NAME and
OTEL_RESOURCE_ATTRIBUTES ("agentica" is the service name when neither names one).
"""

from __future__ import annotations

import atexit
import os
import threading
import time
from dataclasses import dataclass

from opentelemetry import metrics, trace
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

from agentica_cli.agent.observers import ObservedAgent, add_run_observer, remove_run_observer
from agentica_cli.telemetry.recorder import Instruments, TurnRecorder

# Without an explicit OTEL_EXPORTER_OTLP_TIMEOUT, one export (its retries included) gives up after
# this long (the SDK's default is 10 s); and the exit waits for the last exports at most
# EXIT_BUDGET seconds, traces and metrics together: a collector that is down or never answers
# must not hold a finished `-p` run (the SDK alone took 8-16 s then).
DEFAULT_EXPORT_TIMEOUT = 3.0
EXIT_BUDGET = 4.0


def _resource() -> Resource:
    from agentica_cli import __version__

    attributes: dict[str, str] = {"service.version": __version__}
    named = os.environ.get("OTEL_SERVICE_NAME") or "service.name=" in os.environ.get("OTEL_RESOURCE_ATTRIBUTES", "")
    if not named:
        attributes["service.name"] = "agentica"
    # create() merges OTEL_RESOURCE_ATTRIBUTES and OTEL_SERVICE_NAME over the SDK's defaults;
    # the attributes given here are merged last, so they leave out what the user named.
    return Resource.create(attributes)


def _timeout() -> float | None:
    names = ("OTEL_EXPORTER_OTLP_TIMEOUT", "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "OTEL_EXPORTER_OTLP_METRICS_TIMEOUT")
    return None if any(os.environ.get(n) for n in names) else DEFAULT_EXPORT_TIMEOUT


@dataclass
class Telemetry:
    tracer_provider: TracerProvider | None
    meter_provider: MeterProvider | None
    instruments: Instruments

    @classmethod
    def start(cls, *, traces: bool, metrics: bool) -> Telemetry:
        resource = _resource()
        tracer_provider = meter_provider = None
        if traces:
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

            # shutdown_on_exit=False: our shutdown() runs at exit instead, with a bounded wait
            tracer_provider = TracerProvider(resource=resource, shutdown_on_exit=False)
            tracer_provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(timeout=_timeout())))
            trace.set_tracer_provider(tracer_provider)
        if metrics:
            from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter

            reader = PeriodicExportingMetricReader(OTLPMetricExporter(timeout=_timeout()))
            meter_provider = MeterProvider(resource=resource, metric_readers=[reader], shutdown_on_exit=False)
            _set_meter_provider(meter_provider)
        instruments = Instruments.create(
            tracer_provider.get_tracer("agentica") if tracer_provider is not None else None,
            meter_provider.get_meter("agentica") if meter_provider is not None else None,
        )
        telemetry = cls(tracer_provider, meter_provider, instruments)
        add_run_observer(telemetry.observe)
        atexit.register(telemetry.shutdown)
        return telemetry

    def observe(self, agent: ObservedAgent) -> TurnRecorder | None:
        # A sub-agent's events reach its parent's stream too (with a source): traced there,
        # under the task call that ran it, not as a trace of their own.
        if agent.is_subagent:
            return None
        return TurnRecorder(self.instruments, agent)

    def shutdown(self) -> None:
        """Export what is pending and stop, waiting at most EXIT_BUDGET seconds; a second call
        does nothing. Each provider shuts down in a daemon thread of its own: one that is still
        exporting when the budget runs out is left behind, and the process exits anyway."""
        remove_run_observer(self.observe)
        providers = [p for p in (self.tracer_provider, self.meter_provider) if p is not None]
        self.tracer_provider = self.meter_provider = None
        threads = [threading.Thread(target=_quiet_shutdown, args=(p,), name="agentica-otel-shutdown", daemon=True)
                   for p in providers]
        for thread in threads:
            thread.start()
        deadline = time.monotonic() + EXIT_BUDGET
        for thread in threads:
            thread.join(max(0.0, deadline - time.monotonic()))


def _quiet_shutdown(provider: TracerProvider | MeterProvider) -> None:
    try:
        provider.shutdown()  # exports what is pending first
    except Exception:
        pass  # an unreachable collector must not turn a finished run into a failure


def _set_meter_provider(provider: MeterProvider) -> None:
    metrics.set_meter_provider(provider)
