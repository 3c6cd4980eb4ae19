"""The ``activity`` collector: the ``agent_efficiency_*`` families (issue 32), read incrementally.

Each collection lists the threads (``ah.session``) with a change marker — (``rolled_up_at``, the
thread's source file and its indexed offset): the post-pass sets ``rolled_up_at`` when a
thread's rows change, the loader moves the offset when its file grows — and reads the model
calls, tool calls and messages of the threads whose marker changed since the last collection
only, in batches of :data:`BATCH` threads, for at most :data:`PARSE_BUDGET_S` seconds (checked
between batches; a batch of the corpus's threads takes well under 1 s), under the runner's 20 s
round budget, so a long first read delays the counts, never the freshness of the other families.
The threads left over are counted in ``agent_efficiency_backlog_threads`` and read by the next
collections. Each thread's figures come from the pure `agent_history.classify.activity`
(SQL twin ``ah.agent_efficiency``) and are kept in the context between collections; ``role``
(``ah.session.thread_role``) and ``loop`` (view ``ah.thread_loop``) are joined at every
collection, since a parent becomes a root and a loop gains lanes without the thread changing.

A record with a time PostgreSQL holds as ±infinity cannot be placed in time: it is counted in
``agent_efficiency_unreadable_records`` (per agent) and skipped, as ``ah.agent_efficiency``
skips it. Nothing is exported for a signal no thread shows (no 0 for unknown). The statements
are :mod:`agent_history.read.thread_activity`'.
"""

from __future__ import annotations

import math
import time
from collections import Counter
from dataclasses import dataclass, field

import psycopg

from agent_history.classify.activity import Call, Key, Message, Tool, thread_figures
from agent_history.read import thread_activity
from agent_history.telemetry.families import MAX_LOOP_LABELS
from agent_history.telemetry.policy import Sample

PARSE_BUDGET_S = 10.0
"""Seconds one collection may spend reading changed threads (the seed's bound is 20 s; half the
runner's round budget keeps the collector from being reported late)."""
BATCH = 50
"""Threads read per query round trip."""
PREFIX = "agent_efficiency_"
NO_LOOP, OTHER_LOOP = "none", "other"
FAMILIES_WITH_ROLE = frozenset({"model_calls", "tokens", "thread_state_seconds"})


@dataclass
class ThreadCache:
    """Per thread id: the change marker read, its figures and its unreadable-record count."""

    marker: dict[int, str] = field(default_factory=dict)
    figures: dict[int, Counter[Key]] = field(default_factory=dict)
    unreadable: dict[int, int] = field(default_factory=dict)


def _pos(source_id: int, offset: int | None) -> tuple[int, int] | None:
    return None if offset is None else (source_id, offset)


def _ok(*times: float | None) -> bool:
    return all(t is None or math.isfinite(t) for t in times)


def read_threads(conn: psycopg.Connection, threads: dict[int, tuple[str, bool]]) -> dict[int, tuple[Counter[Key], int]]:
    """Thread id → (figures, unreadable records) for `threads` (id → (agent, in_worker))."""
    ids = list(threads)
    calls: dict[int, list[Call]] = {i: [] for i in ids}
    tools: dict[int, list[Tool]] = {i: [] for i in ids}
    messages: dict[int, list[Message]] = {i: [] for i in ids}
    bad: Counter[int] = Counter()
    for sid, uid, src, off, ts, trig, api_err, *tokens in thread_activity.calls_of(conn, ids):
        if not _ok(ts):
            bad[sid] += 1
            continue
        calls[sid].append(Call(uid, _pos(src, off), ts, trig, api_err, tuple(tokens)))
    for sid, uid, name, inp, out, err, code, cls, started, ended, ms, src, off in thread_activity.tools_of(conn, ids):
        if not _ok(started, ended):
            bad[sid] += 1
            continue
        tools[sid].append(Tool(uid, name, inp, out, err, code, cls, started, ended, ms, _pos(src, off)))
    for sid, uid, cls, role, text, rtype, origin, ts, src, off in thread_activity.messages_of(conn, ids):
        if not _ok(ts):
            bad[sid] += 1
            continue
        messages[sid].append(Message(uid, cls, role, text, rtype, origin, ts, _pos(src, off)))
    return {
        i: (thread_figures(agent, worker, calls[i], tools[i], messages[i]), bad[i])
        for i, (agent, worker) in threads.items()
    }


def loop_labels(conn: psycopg.Connection) -> dict[int, str]:
    """Thread id → ``loop`` label for the threads a loop owns (``ah.thread_loop``): the
    :data:`MAX_LOOP_LABELS` most recently started loops by name, older ones ``other``."""
    rows = thread_activity.thread_loops(conn)
    recent = sorted({(r[2] is not None, r[2], r[1]) for r in rows}, reverse=True)[:MAX_LOOP_LABELS]
    kept = {loop_id for _, _, loop_id in recent}
    return {sid: (loop if loop_id in kept else OTHER_LOOP) for sid, loop_id, _, loop in rows}


def collect_activity(conn: psycopg.Connection, ctx, *, budget_s: float = PARSE_BUDGET_S) -> list[Sample]:
    """The ``agent_efficiency_*`` samples (module doc); the cache lives in ``ctx.extra``."""
    deadline = time.monotonic() + budget_s
    cache: ThreadCache = ctx.extra.setdefault("activity", ThreadCache())
    listed = thread_activity.threads(conn)
    current = {r[0] for r in listed}
    for gone in set(cache.marker) - current:
        cache.marker.pop(gone), cache.figures.pop(gone, None), cache.unreadable.pop(gone, None)
    changed = [r for r in listed if cache.marker.get(r[0]) != r[4]]
    done = 0
    while done < len(changed) and time.monotonic() < deadline:
        batch = changed[done : done + BATCH]
        for sid, (figures, bad) in read_threads(conn, {r[0]: (r[1], r[2]) for r in batch}).items():
            cache.figures[sid], cache.unreadable[sid] = figures, bad
        for r in batch:
            cache.marker[r[0]] = r[4]
        done += len(batch)
    roles = {r[0]: r[3] for r in listed}
    agents = {r[0]: r[1] for r in listed}
    loops = loop_labels(conn)
    totals: Counter[tuple[str, tuple[tuple[str, str], ...]]] = Counter()
    for sid, figures in cache.figures.items():
        role, loop = roles.get(sid), loops.get(sid, NO_LOOP)
        for (family, labels), value in figures.items():
            extra = (("loop", loop),)
            if family in FAMILIES_WITH_ROLE:
                if role is None:
                    continue  # a thread the classifier has not given a role yet
                extra += (("role", role),)
            totals[(PREFIX + family, tuple(sorted(labels + extra)))] += value
    unreadable: Counter[str] = Counter()
    for sid, n in cache.unreadable.items():  # a known count, 0 included, per agent with threads read
        unreadable[agents[sid]] += n
    out = [Sample(family, float(v), labels) for (family, labels), v in sorted(totals.items())]
    out += [Sample.of(PREFIX + "unreadable_records", n, agent=a) for a, n in sorted(unreadable.items())]
    out.append(Sample.of(PREFIX + "backlog_threads", len(changed) - done))
    return out
