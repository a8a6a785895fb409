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
from dataclasses import dataclass

from opentelemetry import metrics, trace
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

from agentica_cli.agent.observers import ObservedAgent, add_run_observer, remove_run_observer
from agentica_cli.telemetry.recorder import Instruments, TurnRecorder

# Without an explicit OTEL_EXPORTER_OTLP_TIMEOUT, a collector that does not answer costs a short
# run at most this long at exit (the SDK's default is 10 s per export, with retries).
DEFAULT_EXPORT_TIMEOUT = 5.0
FLUSH_TIMEOUT_MS = 5_000


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

            tracer_provider = TracerProvider(resource=resource)
            tracer_provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(timeout=_timeout())))
            trace.set_tracer_provider(tracer_provider)
        if metrics:
            from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter

            reader = PeriodicExportingMetricReader(OTLPMetricExporter(timeout=_timeout()))
            meter_provider = MeterProvider(resource=resource, metric_readers=[reader])
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
        """Flush and stop; a second call does nothing."""
        remove_run_observer(self.observe)
        providers, self.tracer_provider, self.meter_provider = (self.tracer_provider, self.meter_provider), None, None
        for provider in providers:
            if provider is None:
                continue
            try:
                provider.force_flush(FLUSH_TIMEOUT_MS)
                provider.shutdown()
            except Exception:
                pass  # an unreachable collector must not turn a finished run into a failure


def _set_meter_provider(provider: MeterProvider) -> None:
    metrics.set_meter_provider(provider)
