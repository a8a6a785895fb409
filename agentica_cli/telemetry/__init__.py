"""OpenTelemetry for agentica, opt-in through the standard variables only.

    OTEL_TRACES_EXPORTER=otlp  and/or  OTEL_METRICS_EXPORTER=otlp
    OTEL_EXPORTER_OTLP_ENDPOINT=http://collector:4318   (or the per-signal *_TRACES_/*_METRICS_ENDPOINT)

turn it on (with `pip install "agentica-cli[otel]"`): a trace per turn, with a span for each
model request and each tool call, and metrics (tokens, tool calls, errors), exported over
OTLP/HTTP (protobuf). docs/configuration.md (Telemetry) lists the span and attribute names.

This module is stdlib-only and tiny: `agentica` imports it only when one of the two variables is
set, and the SDK is set up when the first run starts (`install_on_first_run`), so a process
without the variables never imports opentelemetry (startup unchanged), and `agentica --version`
with them does not either.
The spans come from the agent's event stream (agentica_cli/agent/observers.py), so the REPL, -p,
ACP, batch and `mcp serve` are traced alike.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agentica_cli.agent.observers import ObservedAgent, RunObserver
    from agentica_cli.telemetry.setup import Telemetry

EXPORTER_VARIABLES = ("OTEL_TRACES_EXPORTER", "OTEL_METRICS_EXPORTER")

_installed: Telemetry | None = None  # the exporters in use


@dataclass(frozen=True)
class Request:
    """What the environment asks for: which signals go out over OTLP, or why none do."""

    traces: bool = False
    metrics: bool = False
    problem: str = ""  # said once on stderr when the variables ask for something we cannot do


def _exporters(value: str | None) -> set[str]:
    return {part.strip().lower() for part in (value or "").split(",") if part.strip()}


def requested(environ: Mapping[str, str] | None = None) -> Request:
    """Read the standard variables: an exporter `otlp` and an endpoint for that signal."""
    env = os.environ if environ is None else environ
    if env.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return Request()
    general = bool(env.get("OTEL_EXPORTER_OTLP_ENDPOINT", "").strip())
    wants_traces = "otlp" in _exporters(env.get("OTEL_TRACES_EXPORTER"))
    wants_metrics = "otlp" in _exporters(env.get("OTEL_METRICS_EXPORTER"))
    traces = wants_traces and (general or bool(env.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "").strip()))
    metrics = wants_metrics and (general or bool(env.get("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "").strip()))
    problem = ""
    if (wants_traces and not traces) or (wants_metrics and not metrics):
        problem = "OTEL_*_EXPORTER=otlp is set but no OTEL_EXPORTER_OTLP_ENDPOINT: telemetry is off"
    protocol = (env.get("OTEL_EXPORTER_OTLP_PROTOCOL") or "http/protobuf").strip().lower()
    if (traces or metrics) and protocol != "http/protobuf":
        return Request(problem=f"OTEL_EXPORTER_OTLP_PROTOCOL={protocol} is not supported (agentica exports "
                               "http/protobuf): telemetry is off")
    return Request(traces, metrics, problem)


def install_from_env(environ: Mapping[str, str] | None = None) -> bool:
    """Start exporting when the variables ask for it; True when telemetry is on. Safe to call
    twice. A missing SDK or a bad setting is one line on stderr, never a failed run."""
    global _installed
    if _installed is not None:
        return True
    wanted = requested(environ)
    if wanted.problem:
        _warn(wanted.problem)
    if not (wanted.traces or wanted.metrics):
        return False
    try:
        from agentica_cli.telemetry.setup import Telemetry
    except ImportError as err:
        _warn(f"telemetry is off: {err.name or err} is not installed (pip install \"agentica-cli[otel]\")")
        return False
    try:
        _installed = Telemetry.start(traces=wanted.traces, metrics=wanted.metrics)
    except Exception as exc:  # a bad OTEL_* value: the run goes on without telemetry
        _warn(f"telemetry is off: {type(exc).__name__}: {exc}")
        return False
    return True


def install_on_first_run() -> None:
    """Set up telemetry when the first run starts, not before: `agentica --version`, `--help`
    and `sessions list` never pay for importing the SDK, whatever the environment says."""
    from agentica_cli.agent.observers import add_run_observer

    add_run_observer(_first_run)


def _first_run(agent: ObservedAgent) -> RunObserver | None:
    from agentica_cli.agent.observers import remove_run_observer

    remove_run_observer(_first_run)
    if _installed is None and not install_from_env():
        return None
    # Registered during this run's start: the new observer sees the runs after it, so this one
    # is handed over here.
    return _installed.observe(agent) if _installed is not None else None


def shutdown() -> None:
    """Flush what is pending and stop the exporters (at exit; short -p runs need it)."""
    global _installed
    telemetry, _installed = _installed, None
    if telemetry is not None:
        telemetry.shutdown()


def _warn(message: str) -> None:
    sys.stderr.write(f"agentica: {message}\n")
