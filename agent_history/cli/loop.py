"""Long-running command plumbing shared by `index --every` and `embed --every`."""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable


def stop_on_signals() -> threading.Event:
    """An event set by SIGTERM or SIGINT, so a pass can finish its batch in flight and exit."""
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    return stop


def run_every(every: float | None, stop: threading.Event, one_pass: Callable[[], bool]) -> None:
    """Run `one_pass` now, then every `every` seconds until `stop` is set or it returns False.

    `every` None (or 0) runs it once. Waiting wakes within a second of a stop signal.
    """
    while one_pass() and every and not stop.is_set():
        deadline = time.monotonic() + every
        while time.monotonic() < deadline and not stop.is_set():
            stop.wait(min(1.0, deadline - time.monotonic()))
        if stop.is_set():  # stopped while waiting: no further pass
            return


def start_metrics(service: str, db, sources):
    """The OTLP metrics pipeline of a periodic service (`index` | `embed`), or None when no
    endpoint is configured (then nothing of OpenTelemetry is imported). Collector trouble is
    reported on stderr, one line per change. Raises ConfigError for a bad endpoint or timeout."""
    from agent_history.cli.output import err_console
    from agent_history.telemetry.otlp import start_metrics as start

    def warn(line: str) -> None:
        err_console.print(line, highlight=False, markup=False, soft_wrap=True)

    return start(service, db, sources, warn=warn)
