"""The collector thread: runs every collector each interval, bounded in time, and keeps the
latest admitted samples for the exporter (issue 13).

Each collection runs on a daemon thread of its own with the collector's own database connection, so a slow
or failing one never delays the others nor the pass the process exists for. A round waits at
most ``budget`` seconds (≤ 20); a collector still running then is reported late (success 0,
one error) and is not started again until it returns; its samples arrive when it does. A
collector that raises reports no samples and success 0 until it succeeds again. The ``self``
samples (each collector's health and the label guard's drop counts) are rebuilt after every
round.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import Future, wait
from dataclasses import dataclass

import psycopg

from agent_history.telemetry.collectors import CollectContext, Collector
from agent_history.telemetry.families import BY_NAME
from agent_history.telemetry.policy import LabelGuard, Sample

#: Upper bound of one round's wait for its collectors (issue 13: "bounded ≤ 20 s").
MAX_BUDGET_S = 20.0
SELF = "self"


@dataclass
class Health:
    """One collector's outcome so far. Times are Unix seconds, durations seconds."""

    success: bool | None = None  # None: not finished once yet
    last_success_at: float | None = None
    duration_s: float | None = None
    errors: int = 0
    late: bool = False
    last_error: str | None = None


class CollectorRunner:
    """Runs `collectors` every `interval` seconds on a thread of its own (see module doc).

    `connect()` returns a new autocommit connection (one is kept per collector and replaced
    after an error); `warn(line)` reports a collector that starts failing, once per change.
    Thread-safe: :meth:`samples` may be called from any thread (the exporter's).
    """

    def __init__(
        self,
        collectors: Mapping[str, Collector],
        ctx: CollectContext,
        connect: Callable[[], psycopg.Connection],
        guard: LabelGuard,
        *,
        interval: float,
        budget: float = MAX_BUDGET_S,
        warn: Callable[[str], None] | None = None,
    ):
        self.collectors = dict(collectors)
        self.ctx = ctx
        self.connect = connect
        self.guard = guard
        self.interval = interval
        self.budget = min(budget, MAX_BUDGET_S)
        self.warn = warn or (lambda line: None)
        self.health: dict[str, Health] = {name: Health() for name in [*self.collectors, SELF]}
        self._samples: dict[str, list[Sample]] = {}
        self._conns: dict[str, psycopg.Connection] = {}
        self._inflight: dict[str, Future] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    # -- lifecycle --------------------------------------------------------------------------------
    def start(self) -> None:
        """Start the thread: a round now, then one every `interval` seconds."""
        self._thread = threading.Thread(target=self._loop, name="ah-metrics", daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        while True:  # the first round runs even when close() comes at once
            self.collect_round()
            if self._stop.wait(self.interval):
                return

    def close(self, *, final_round: bool = True) -> None:
        """Stop the thread (after its round in flight), run one last round, release connections."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        if final_round:
            self.collect_round()
        with self._lock:
            idle = [n for n in self._conns if n not in self._inflight]
            conns = [self._conns.pop(n) for n in idle]
        for conn in conns:
            conn.close()

    # -- one round --------------------------------------------------------------------------------
    def collect_round(self) -> None:
        """Start every collector not still running, wait ≤ budget, mark the late ones, rebuild
        the ``self`` samples. Never raises."""
        started: dict[str, Future] = {}
        with self._lock:
            for name, fn in self.collectors.items():
                if name not in self._inflight:
                    self._inflight[name] = started[name] = self._spawn(name, fn)
        if started:
            wait(list(started.values()), timeout=self.budget)
        late = []
        with self._lock:
            for name, fut in started.items():
                if not fut.done() and not self.health[name].late:
                    h = self.health[name]
                    h.late, h.success, h.errors = True, False, h.errors + 1
                    h.last_error = f"still running after {self.budget:g} s"
                    late.append(name)
        for name in late:
            self.warn(f"metrics: collector {name} still running after {self.budget:g} s (reported late)")
        try:
            self._rebuild_self()
        except Exception as exc:  # never let the metrics thread die
            with self._lock:
                self.health[SELF].success, self.health[SELF].errors = False, self.health[SELF].errors + 1
                self._samples[SELF] = []
            self.warn(f"metrics: collector self failed: {type(exc).__name__}: {exc}")

    def _spawn(self, name: str, fn: Collector) -> Future:
        """Run one collection on a daemon thread of its own (a collector stuck in the
        filesystem never holds up the process's exit) and return its Future."""
        fut: Future = Future()

        def run() -> None:
            try:
                self._run_one(name, fn)
            finally:
                fut.set_result(None)

        threading.Thread(target=run, name=f"ah-collect-{name}", daemon=True).start()
        return fut

    def _conn(self, name: str) -> psycopg.Connection:
        conn = self._conns.get(name)
        if conn is None or conn.closed:
            conn = self.connect()
            # no statement outlives the round's budget by much
            conn.execute(f"SET statement_timeout = {int(self.budget * 1000)}")
            self._conns[name] = conn
        return conn

    def _run_one(self, name: str, fn: Collector) -> None:
        t0 = time.monotonic()
        try:
            samples = self.guard.admit(fn(self._conn(name), self.ctx))
        except Exception as exc:  # a failing collector never fails the process or the others
            conn = self._conns.pop(name, None)
            if conn is not None:
                conn.close()
            line = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            with self._lock:
                h = self.health[name]
                changed = h.success is not False or h.late
                h.success, h.duration_s, h.last_error = False, time.monotonic() - t0, line
                if not h.late:
                    h.errors += 1
                h.late = False
                self._samples[name] = []
                del self._inflight[name]
            if changed:
                self.warn(f"metrics: collector {name} failed: {line}")
            return
        with self._lock:
            h = self.health[name]
            h.success, h.late, h.last_error = True, False, None
            h.duration_s, h.last_success_at = time.monotonic() - t0, time.time()
            self._samples[name] = samples
            del self._inflight[name]

    def _rebuild_self(self) -> None:
        t0 = time.monotonic()
        with self._lock:
            health = {n: Health(**vars(h)) for n, h in self.health.items()}
        out: list[Sample] = []
        for name, h in health.items():
            if h.success is not None:
                out.append(Sample.of("ah_collector_success", 1 if h.success else 0, collector=name))
            if h.duration_s is not None:
                out.append(Sample.of("ah_collector_duration_seconds", h.duration_s, collector=name))
            if h.last_success_at is not None:
                out.append(Sample.of("ah_collector_last_success_timestamp_seconds", h.last_success_at, collector=name))
            out.append(Sample.of("ah_collector_errors_total", h.errors, collector=name))
        dropped = {name: 0 for name in BY_NAME} | self.guard.dropped
        out += [Sample.of("ah_telemetry_dropped_samples_total", n, family=f) for f, n in sorted(dropped.items())]
        with self._lock:
            h = self.health[SELF]
            h.success, h.duration_s, h.last_success_at = True, time.monotonic() - t0, time.time()
            self._samples[SELF] = self.guard.admit(out)

    def settle(self, timeout: float) -> bool:
        """Wait up to `timeout` seconds for the collectors still running; True when none is."""
        with self._lock:
            pending = list(self._inflight.values())
        done, not_done = wait(pending, timeout=timeout)
        return not not_done

    # -- reading ----------------------------------------------------------------------------------
    def samples(self) -> list[Sample]:
        """The latest admitted samples of every collector (a copy)."""
        with self._lock:
            return [s for group in self._samples.values() for s in group]
