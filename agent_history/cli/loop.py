"""Long-running command plumbing shared by `index --every` and `embed --every`."""

from __future__ import annotations

import math
import signal
import threading
import time
from collections.abc import Callable


class Stop(threading.Event):
    """A stop event that remembers the signal that set it (`signum`, None until then)."""

    signum: int | None = None


def stop_on_signals() -> Stop:
    """An event set by SIGTERM or SIGINT, so a pass can finish its batch in flight and exit;
    its ``signum`` says which signal it was (Ctrl-C → exit 130: `INTERRUPTED_EXIT`)."""
    stop = Stop()

    def handler(signum, _frame) -> None:
        stop.signum = signum
        stop.set()

    signal.signal(signal.SIGTERM, handler)
    signal.signal(signal.SIGINT, handler)
    return stop


def every_seconds(value: float | None) -> float | None:
    """The ``--every`` option's check beyond its ``min=1.0`` (a typer callback): ``nan`` passes a
    range check (every comparison with it is false) and made the loop run passes back to back,
    never waiting; ``inf`` (or ``1e400``) ran one pass and then waited forever. Both are a usage
    error (exit 2). Returns `value`."""
    if value is not None and not math.isfinite(value):
        import typer

        raise typer.BadParameter(f"{value} is not a number of seconds (1 or more)")
    return value


INTERRUPTED_EXIT = 128 + signal.SIGINT
"""Exit status after Ctrl-C (the shell's 128 + SIGINT), once the work done is committed. SIGTERM
(a service manager stopping a loop) stays an ordinary exit 0."""


BUSY_EXIT = 75
"""Exit status when another pass holds the lock (`index`, `rebuild`, `archive`, `embed`): sysexits.h's EX_TEMPFAIL —
nothing was done, try again later — so cron and scripts can tell it from a pass that ran (0)."""


def run_every(every: float | None, stop: threading.Event, one_pass: Callable[[], bool], db=None) -> None:
    """Run `one_pass` now, then every `every` seconds until `stop` is set or it returns False.

    `every` None (or 0) runs it once. Waiting wakes within a second of a stop signal. A loop
    (`every` set) on `db`'s embedded server keeps it from idle-stopping (`Database.keep_alive`).
    """
    if every and db is not None:
        with db.keep_alive():
            _repeat(every, stop, one_pass)
    else:
        _repeat(every, stop, one_pass)


def _repeat(every: float | None, stop: threading.Event, one_pass: Callable[[], bool]) -> None:
    while one_pass() and every and not stop.is_set():
        deadline = time.monotonic() + every
        while time.monotonic() < deadline and not stop.is_set():
            stop.wait(min(1.0, deadline - time.monotonic()))
        if stop.is_set():  # a signal while waiting: exit, no pass after it
            break


def start_metrics(service: str, db, sources):
    """The OTLP metrics pipeline of a periodic service (`index` | `embed`), or None when no
    endpoint is configured (then nothing of OpenTelemetry is imported). Collector trouble is
    reported on stderr, one line per change. Raises ConfigError for a bad endpoint or timeout."""
    from agent_history.cli.output import err_console
    from agent_history.telemetry.otlp import start_metrics as start

    def warn(line: str) -> None:
        err_console.print(line, highlight=False, markup=False, soft_wrap=True)

    return start(service, db, sources, warn=warn)
