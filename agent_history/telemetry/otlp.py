"""The exporter bridge: the collector runner's samples as OpenTelemetry instruments, pushed
over OTLP/HTTP (protobuf) by the OpenTelemetry SDK (docs/design.md §11, issue 13).

Enabled only when ``OTEL_EXPORTER_OTLP_METRICS_ENDPOINT`` or ``OTEL_EXPORTER_OTLP_ENDPOINT``
is set, or the config's ``[metrics] endpoint`` (in that order of precedence). Without one,
:func:`start_metrics` returns None before importing anything of OpenTelemetry, so no other
command pays for it and no socket is opened. Nothing listens on a port.

- Temporality: cumulative for every instrument kind (whatever
  ``OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE`` says).
- Export timeout: ``OTEL_EXPORTER_OTLP_METRICS_TIMEOUT`` / ``OTEL_EXPORTER_OTLP_TIMEOUT``
  (seconds), default and maximum 10 s.
- Resource: exactly ``service.name`` (``agent-history-index``, ``-embed``, ``-journal-sync``)
  and ``service.version``; no detector runs, ``OTEL_RESOURCE_ATTRIBUTES`` is ignored (it
  could carry a host name).
- The SDK's own log lines go to stderr as one line each (no traceback), a repeat of the
  previous line suppressed.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Callable, Mapping

from agent_history import __version__
from agent_history.config import ConfigError, Settings
from agent_history.ingest.discovery import Source
from agent_history.telemetry.families import FAMILIES, Family
from agent_history.telemetry.policy import LabelGuard, ModelLabels, resolve_label_values

#: service.name per periodic service (issue 13).
SERVICE_NAMES: dict[str, str] = {
    "index": "agent-history-index",
    "embed": "agent-history-embed",
    "journal_sync": "agent-history-journal-sync",
    "collect": "agent-history-collect",
}
#: Upper bound of one export, seconds (issue 13: "export timeout ≤ 10 s").
MAX_EXPORT_TIMEOUT_S = 10.0
METRICS_PATH = "/v1/metrics"


def metrics_endpoint(settings: Settings, environ: Mapping[str, str] = os.environ) -> str | None:
    """The full OTLP/HTTP metrics URL, or None when export is off.

    ``OTEL_EXPORTER_OTLP_METRICS_ENDPOINT`` is used as is (the OTel convention: a signal URL);
    ``OTEL_EXPORTER_OTLP_ENDPOINT`` and ``[metrics] endpoint`` are base URLs to which
    ``/v1/metrics`` is appended. ``OTEL_SDK_DISABLED=true`` turns export off whatever is set.
    Raises ConfigError for a value that is not an http(s) URL.
    """
    if environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return None
    for var, base in (("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", False), ("OTEL_EXPORTER_OTLP_ENDPOINT", True)):
        value = environ.get(var, "").strip()
        if value:
            if not value.startswith(("http://", "https://")):
                raise ConfigError(f"{var} must be an http:// or https:// URL, got {value!r}")
            return value.rstrip("/") + METRICS_PATH if base else value
    if settings.metrics.endpoint:
        return settings.metrics.endpoint.rstrip("/") + METRICS_PATH
    return None


def export_timeout_s(environ: Mapping[str, str] = os.environ) -> float:
    """Seconds one export may take: the OTEL_EXPORTER_OTLP_(METRICS_)TIMEOUT value capped at
    10, default 10. Raises ConfigError for a value that is not a positive number."""
    for var in ("OTEL_EXPORTER_OTLP_METRICS_TIMEOUT", "OTEL_EXPORTER_OTLP_TIMEOUT"):
        raw = environ.get(var, "").strip()
        if raw:
            try:
                value = float(raw)
            except ValueError:
                value = -1.0
            if not value > 0:
                raise ConfigError(f"{var} must be a positive number of seconds, got {raw!r}")
            return min(value, MAX_EXPORT_TIMEOUT_S)
    return MAX_EXPORT_TIMEOUT_S


class _OneLine(logging.Formatter):
    """The SDK's log records as one line, without the traceback it attaches."""

    def format(self, record: logging.LogRecord) -> str:
        first = (record.getMessage().strip().splitlines() or [""])[0]
        exc = record.exc_info[1] if record.exc_info else None
        detail = f": {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}" if exc else ""
        return f"metrics: {first}{detail}"


class _NoRepeat(logging.Filter):
    """Drop a record whose message repeats the previous one (an unreachable receiver would
    otherwise log the same line every interval)."""

    def __init__(self) -> None:
        super().__init__()
        self._last: str | None = None

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        repeat, self._last = message == self._last, message
        return not repeat


def _quiet_sdk_logging() -> None:
    log = logging.getLogger("opentelemetry")
    if not any(isinstance(h.formatter, _OneLine) for h in log.handlers):
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(_OneLine())
        handler.addFilter(_NoRepeat())
        log.addHandler(handler)
        log.propagate = False
        log.setLevel(logging.WARNING)


class Metrics:
    """A running metrics pipeline: the collector runner and the SDK's periodic reader.

    :meth:`close` runs one last collection round, exports once and stops (at most about two
    export timeouts)."""

    def __init__(self, runner, provider, timeout_s: float):
        self.runner = runner
        self._provider = provider
        self._timeout_s = timeout_s

    def close(self) -> None:
        """Final round, one flush, shutdown. Never raises."""
        try:
            self.runner.close()
        finally:
            self._provider.shutdown(timeout_millis=(2 * self._timeout_s + 1) * 1000)


def _instruments(meter, samples: Callable[[], list]) -> None:
    from opentelemetry.metrics import Observation

    def callback_for(family: Family):
        def callback(_options):
            return [Observation(s.value, dict(s.labels)) for s in samples() if s.family == family.name]

        return callback

    for family in FAMILIES:
        make = meter.create_observable_counter if family.kind == "counter" else meter.create_observable_gauge
        make(family.name, callbacks=[callback_for(family)], unit=family.unit, description=family.meaning)


def start_metrics(
    service: str,
    db,
    hot: list[Source],
    *,
    warn: Callable[[str], None] | None = None,
    collectors: Mapping | None = None,
) -> Metrics | None:
    """Start collecting and exporting for `service` (a key of :data:`SERVICE_NAMES`), or return
    None (importing nothing) when no endpoint is configured.

    `db` is the process's :class:`agent_history.db.connection.Database`; `hot` its hot sources
    (their namespaces, the configured cold ones and ``[sources]`` form the namespace label
    set). `collectors` replaces the default set (tests). Raises ConfigError for a bad
    endpoint or timeout and the database errors of `db.connect()`.
    """
    settings: Settings = db.settings
    endpoint = metrics_endpoint(settings)
    if endpoint is None:
        return None
    timeout = export_timeout_s()

    from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
    from opentelemetry.sdk.metrics import (
        Counter,
        Histogram,
        MeterProvider,
        ObservableCounter,
        ObservableGauge,
        ObservableUpDownCounter,
        UpDownCounter,
    )
    from opentelemetry.sdk.metrics.export import AggregationTemporality, PeriodicExportingMetricReader
    from opentelemetry.sdk.resources import Resource

    from agent_history.db.prices import priced_model_ids
    from agent_history.ingest.sources import cold_sources
    from agent_history.telemetry.collectors import COLLECTORS, CollectContext
    from agent_history.telemetry.runner import CollectorRunner

    _quiet_sdk_logging()
    with db.connect() as conn:
        aliases = priced_model_ids(conn)
    models = ModelLabels((), settings.metrics.models, aliases=aliases)
    cold = cold_sources(settings)
    namespaces = {s.namespace for s in [*hot, *cold]} | set(settings.sources) | set(settings.cold_sources)
    guard = LabelGuard(resolve_label_values(namespaces, models))
    ctx = CollectContext(settings, list(hot), cold, models, runs=(service,))
    runner = CollectorRunner(
        collectors if collectors is not None else COLLECTORS,
        ctx,
        lambda: db.connect(autocommit=True),
        guard,
        interval=settings.metrics.interval,
        warn=warn,
    )
    cumulative = AggregationTemporality.CUMULATIVE
    kinds = (Counter, UpDownCounter, Histogram, ObservableCounter, ObservableUpDownCounter, ObservableGauge)
    exporter = OTLPMetricExporter(
        endpoint=endpoint, timeout=timeout, preferred_temporality={k: cumulative for k in kinds}
    )
    reader = PeriodicExportingMetricReader(
        exporter,
        export_interval_millis=settings.metrics.interval * 1000,
        export_timeout_millis=timeout * 1000,
    )
    resource = Resource({"service.name": SERVICE_NAMES[service], "service.version": __version__})
    provider = MeterProvider(metric_readers=[reader], resource=resource)
    _instruments(provider.get_meter("agent_history", __version__), runner.samples)
    runner.start()
    return Metrics(runner, provider, timeout)
