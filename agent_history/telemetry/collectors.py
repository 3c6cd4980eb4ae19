"""The collectors (docs/design.md §11, issue 13): what is on disk, in the catalogue, in the run
records, in the classifier and loops tables, each thread's activity (``activity``: the
``agent_efficiency_*`` families, :mod:`agent_history.telemetry.activity`), and the collectors'
own health.

A collector is ``fn(conn, ctx) -> list[Sample]``: it reads (never writes), inspects text only
inside the process and returns counts labelled from the closed sets. Families are declared in
:mod:`agent_history.telemetry.families`; the label guard drops anything else. The ``self``
collector is built by :mod:`agent_history.telemetry.runner` from the others' outcomes. The
statements they run are :mod:`agent_history.read.metrics`' (the embed pass record's upsert is
:mod:`agent_history.db.tables.chunks`').

The classifier's and loops' tables (``ah.model_call.trigger``, ``ah.session.thread_role``,
view ``ah.efficiency``: migration 0006 and sql/35_efficiency.sql; ``ah.loops``: migration 0007)
are part of the schema: a missing one is a collector failure, not an empty family. Unknown
stays absent, never 0: no poll-share series for a role with nothing classified, no idle series
without a running loop (loop counts per status are counts, 0 included).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import psycopg

from agent_history.config import Settings
from agent_history.db.tables import chunks
from agent_history.ingest.discovery import Source, iter_files
from agent_history.read import metrics
from agent_history.telemetry.activity import collect_activity
from agent_history.telemetry.families import LABEL_VALUES
from agent_history.telemetry.policy import ModelLabels, Sample

S = Sample.of

#: ah.meta key holding the embed passes' record (written by :func:`record_embed_pass`).
EMBED_RUN_KEY = "embed_run"

#: ah.index_run.status → outcome label; `running` and `interrupted` (a stop signal, not a
#: failure) are neither (source: agent_history.ingest.loader.Loader.run sets these).
INDEX_OUTCOME: dict[str, str] = {"ok": "success", "ok_with_errors": "failure", "failed": "failure"}


@dataclass
class CollectContext:
    """What the collectors may look at: settings, the hot and cold sources of this process and
    the ``model`` label mapping."""

    settings: Settings
    hot: list[Source]
    cold: list[Source]
    models: ModelLabels
    runs: tuple[str, ...] = ("index", "embed", "journal_sync", "collect")
    extra: dict = field(default_factory=dict)


Collector = Callable[[psycopg.Connection, CollectContext], list[Sample]]


# --- archive -------------------------------------------------------------------------------------
def _used_ratio(path: os.PathLike) -> float | None:
    try:
        st = os.statvfs(path)
    except OSError:
        return None
    used = st.f_blocks - st.f_bfree
    total = used + st.f_bavail
    return used / total if total else None


def collect_archive(conn: psycopg.Connection, ctx: CollectContext) -> list[Sample]:
    """Per namespace and tier: files, bytes, newest mtime, files missing (catalogued but gone),
    tier available; per namespace with a cold source: hot files without a cold copy."""
    out: list[Sample] = []
    catalogued: dict[tuple[str, str], list[str]] = {}
    for ns, tier, path in metrics.catalogued_paths(conn):
        catalogued.setdefault((ns, tier), []).append(path)
    rel_by_tier: dict[tuple[str, str], set[str]] = {}
    for source in [*ctx.hot, *ctx.cold]:
        key = (source.namespace, source.tier)
        labels = {"namespace": source.namespace, "tier": source.tier}
        available = source.home.is_dir() and os.access(source.home, os.R_OK | os.X_OK)
        out.append(S("ah_archive_tier_available", 1 if available else 0, **labels))
        if not available:
            continue
        files = size = 0
        newest: float | None = None
        seen: set[str] = set()
        rels = rel_by_tier.setdefault(key, set())
        for ref in iter_files(source):
            try:
                st = os.stat(ref.path)
            except OSError:
                continue
            files += 1
            size += st.st_size
            newest = st.st_mtime if newest is None else max(newest, st.st_mtime)
            seen.add(ref.path)
            rels.add(ref.rel_path)
        missing = sum(1 for p in catalogued.get(key, ()) if p not in seen and not os.path.isfile(p))
        out += [
            S("ah_archive_files", files, **labels),
            S("ah_archive_bytes", size, **labels),
            S("ah_archive_files_missing", missing, **labels),
        ]
        if newest is not None:
            out.append(S("ah_archive_newest_mtime_timestamp_seconds", newest, **labels))
        ratio = _used_ratio(source.home)
        if ratio is not None:
            out.append(S("ah_filesystem_used_ratio", ratio, **labels))
    archived = _archive_tier(conn, ctx, out)
    for ns in sorted({c.namespace for c in ctx.cold} | set(archived)):
        hot, copied = rel_by_tier.get((ns, "hot")), rel_by_tier.get((ns, "cold"))
        if hot is not None and (copied is not None or ns in archived):
            out.append(
                S("ah_archive_uncopied_files", len(hot - (copied or set()) - archived.get(ns, set())), namespace=ns)
            )
    return out


def _archive_tier(conn: psycopg.Connection, ctx: CollectContext, out: list[Sample]) -> dict[str, set[str]]:
    """The ``archive`` tier (`agent-history archive`, ``[archive] path``) per namespace with copies in
    the manifest: transcripts with a good copy on disk, their compressed bytes, the newest archived
    mtime, catalogued files without a good copy, availability and the filesystem's used ratio.
    Appends to `out`; returns namespace → home-relative paths with a good copy (nothing when the
    archive was never used: no series for a tier nobody runs)."""
    if not metrics.table_exists(conn, "archive_copy"):
        return {}
    rows = metrics.manifest_rows(conn, ctx.settings.archive_host)
    if not rows:
        return {}
    root = ctx.settings.archive_root
    available = root.is_dir() and os.access(root, os.R_OK | os.X_OK)
    good: dict[str, set[str]] = {}
    size: dict[str, int] = {}
    newest: dict[str, int] = {}
    for ns, rel, name, compressed, mtime_ns, error in rows:
        good.setdefault(ns, set())
        if not available or error is not None or not (root / name).is_file():
            continue
        good[ns].add(rel)
        size[ns] = size.get(ns, 0) + compressed
        newest[ns] = max(newest.get(ns, 0), mtime_ns)
    ratio = _used_ratio(root) if available else None
    rels: dict[str, set[str]] = {}
    for ns, rel in metrics.catalogued_rel_paths(conn):
        rels.setdefault(ns, set()).add(rel)
    for ns in sorted(good):
        labels = {"namespace": ns, "tier": "archive"}
        out.append(S("ah_archive_tier_available", 1 if available else 0, **labels))
        if not available:
            continue
        out += [
            S("ah_archive_files", len(good[ns]), **labels),
            S("ah_archive_bytes", size.get(ns, 0), **labels),
            S("ah_archive_files_missing", len(rels.get(ns, set()) - good[ns]), **labels),
        ]
        if ns in newest:
            out.append(S("ah_archive_newest_mtime_timestamp_seconds", newest[ns] / 1e9, **labels))
        if ratio is not None:
            out.append(S("ah_filesystem_used_ratio", ratio, **labels))
    return good if available else {}


# --- catalogue -----------------------------------------------------------------------------------
def collect_catalogue(conn: psycopg.Connection, ctx: CollectContext) -> list[Sample]:
    """Rows per table (tables that exist), sessions per agent, dirty sessions, parse issues by
    kind (every declared kind, 0 when none; undeclared kinds as ``other``), lag bytes per
    namespace, embedding chunks by status (when ``[embedding]`` is configured)."""
    out: list[Sample] = []
    tables = metrics.existing_tables(conn, LABEL_VALUES["table"] or ())
    if tables:
        out += [S("ah_catalogue_rows", n, table=t) for t, n in metrics.table_rows(conn, tables)]
    for agent, n in metrics.sessions_per_agent(conn):
        out.append(S("ah_catalogue_sessions", n, agent=agent))
    out.append(S("ah_catalogue_dirty_sessions", metrics.dirty_sessions(conn)))
    kinds = {k: 0 for k in LABEL_VALUES["kind"] or ()}
    for kind, n in metrics.parse_issues_per_kind(conn):
        kinds[kind if kind in kinds else "other"] += n
    out += [S("ah_catalogue_parse_issues", n, kind=k) for k, n in kinds.items()]
    lag: dict[str, int] = {}
    for ns, path, offset in metrics.indexed_offsets(conn):
        try:
            size = os.stat(path).st_size
        except OSError:
            continue  # gone: counted by the archive collector as missing
        lag[ns] = lag.get(ns, 0) + max(size - offset, 0)
    out += [S("ah_catalogue_lag_bytes", n, namespace=ns) for ns, n in sorted(lag.items())]
    out += _repo_catalogue(conn)
    if ctx.settings.embedding is not None:
        from agent_history.embed import store

        model = ctx.settings.embedding.model_key
        counts = store.embedding_counts(conn, model)
        pending = store.count_pending_sources(conn, model) + counts["unembedded"]
        out += [
            S("ah_embeddings", pending, embedding_status="pending"),
            S("ah_embeddings", counts["failed"], embedding_status="failed"),
            S("ah_embeddings", counts["embedded"], embedding_status="done"),
        ]
    out += _secrets(conn)
    return out


def _secrets(conn: psycopg.Connection) -> list[Sample]:
    """Findings per detector (every detector, 0 when none) as of the last `secrets` scan (0 before
    the first scan: the family is always exported)."""
    if not metrics.table_exists(conn, "secret_finding"):
        return []
    from agent_history.embed.redact import DETECTORS

    found = metrics.secrets_per_detector(conn)
    return [S("ah_secrets_found", found.get(d, 0), detector=d) for d in DETECTORS]


# --- runs ----------------------------------------------------------------------------------------
def _index_runs(conn: psycopg.Connection) -> list[Sample]:
    from agent_history.ingest.pass_locks import INDEX_LOCK

    out = [S("ah_run_lock_held", 1 if metrics.lock_held(conn, INDEX_LOCK) else 0, run="index")]
    totals = {"success": 0, "failure": 0}
    for status, n in metrics.index_runs_per_status(conn):
        if status in INDEX_OUTCOME:
            totals[INDEX_OUTCOME[status]] += n
    out += [S("ah_runs_total", n, run="index", outcome=k) for k, n in totals.items()]
    last = metrics.last_index_run(conn, list(INDEX_OUTCOME))
    if last is not None:
        status, seconds, changed, read, rows = last
        out.append(S("ah_run_success", 1 if INDEX_OUTCOME[status] == "success" else 0, run="index"))
        out.append(S("ah_run_duration_seconds", float(seconds), run="index"))
        for family, value in (("ah_run_files_changed", changed), ("ah_run_read_bytes", read)):
            if value is not None:
                out.append(S(family, value, run="index"))
        if rows is not None:
            out.append(S("ah_run_rows_written", rows, run="index"))
    ok = metrics.last_index_success(conn)
    if ok is not None:
        out.append(S("ah_run_last_success_timestamp_seconds", float(ok), run="index"))
    return out


def record_embed_pass(
    conn: psycopg.Connection, *, ok: bool, seconds: float | None, files_changed: int | None, rows: int | None
) -> None:
    """Record one finished embed pass in ``ah.meta`` (key :data:`EMBED_RUN_KEY`, a JSON object):
    the last pass's outcome, duration (s), sources examined and rows written (None: unknown,
    e.g. a pass that failed), the pass counts by outcome and the end of the last successful
    pass (Unix seconds). One atomic upsert; `conn` must be in autocommit mode."""
    outcome = "success" if ok else "failure"
    now = time.time()
    last = {"success": ok, "seconds": seconds, "files_changed": files_changed, "rows_written": rows, "ended_at": now}
    if ok:
        last["last_success_at"] = now
    chunks.record_embed_pass(
        conn,
        EMBED_RUN_KEY,
        init=json.dumps({**last, f"{outcome}_total": 1}),
        last=json.dumps(last),
        count=f"{outcome}_total",
    )


def _embed_runs(conn: psycopg.Connection) -> list[Sample]:
    from agent_history.embed.store import EMBED_LOCK

    out = [S("ah_run_lock_held", 1 if metrics.lock_held(conn, EMBED_LOCK) else 0, run="embed")]
    value = metrics.meta_value(conn, EMBED_RUN_KEY)
    if value is None:
        return out
    rec = json.loads(value)
    out += [S("ah_runs_total", rec.get(f"{k}_total", 0), run="embed", outcome=k) for k in ("success", "failure")]
    out.append(S("ah_run_success", 1 if rec["success"] else 0, run="embed"))
    for family, key in (
        ("ah_run_duration_seconds", "seconds"),
        ("ah_run_files_changed", "files_changed"),
        ("ah_run_rows_written", "rows_written"),
    ):
        if rec.get(key) is not None:
            out.append(S(family, rec[key], run="embed"))
    if "last_success_at" in rec:
        out.append(S("ah_run_last_success_timestamp_seconds", rec["last_success_at"], run="embed"))
    return out


#: ah.journal_sync_run.status → outcome label; a pass skipped because another one held the lock
#: is neither (source: agent_history.journal.sync.SyncResult).
JOURNAL_OUTCOME: dict[str, str] = {"ok": "success", "skipped": "failure", "refused": "failure", "failed": "failure"}


def _journal_runs(conn: psycopg.Connection) -> list[Sample]:
    """journal-sync passes from ``ah.journal_sync_run`` (none before migration 0008_journal)."""
    if not metrics.table_exists(conn, "journal_sync_run"):
        return []
    from agent_history.journal.sync import JOURNAL_LOCK

    run = "journal_sync"
    out = [S("ah_run_lock_held", 1 if metrics.lock_held(conn, JOURNAL_LOCK) else 0, run=run)]
    totals = {"success": 0, "failure": 0}
    for status, n in metrics.journal_runs_per_status(conn):
        if status in JOURNAL_OUTCOME:
            totals[JOURNAL_OUTCOME[status]] += n
    out += [S("ah_runs_total", n, run=run, outcome=k) for k, n in totals.items()]
    last = metrics.last_journal_run(conn, list(JOURNAL_OUTCOME))
    if last is not None:
        status, seconds, rows = last
        out.append(S("ah_run_success", 1 if JOURNAL_OUTCOME[status] == "success" else 0, run=run))
        out.append(S("ah_run_duration_seconds", float(seconds), run=run))
        if rows is not None:
            out.append(S("ah_run_rows_written", rows, run=run))
    ok = metrics.last_journal_success(conn)
    if ok is not None:
        out.append(S("ah_run_last_success_timestamp_seconds", float(ok), run=run))
    return out


def collect_runs(conn: psycopg.Connection, ctx: CollectContext) -> list[Sample]:
    """Index passes from ``ah.index_run`` (what ``status`` shows as the last pass), embed passes
    from ``ah.meta`` (:func:`record_embed_pass`); advisory locks from ``pg_locks``. The embed
    pass reads no transcript bytes, so it has no ``ah_run_read_bytes``."""
    out: list[Sample] = []
    if "index" in ctx.runs:
        out += _index_runs(conn)
    if "embed" in ctx.runs:
        out += _embed_runs(conn)
    if "journal_sync" in ctx.runs:
        out += _journal_runs(conn)
    if "collect" in ctx.runs:
        out += _collect_runs(conn)
    return out


def _collect_runs(conn: psycopg.Connection) -> list[Sample]:
    """`collect` runs from ``ah.collect_run`` (none before migration 0022): counts by outcome, the
    last run's outcome, duration and rows written, the end of the last successful run."""
    if not metrics.table_exists(conn, "collect_run"):
        return []
    run = "collect"
    totals = metrics.collect_runs_per_outcome(conn)
    out = [S("ah_runs_total", totals.get(k, 0), run=run, outcome=k) for k in ("success", "failure")]
    last = metrics.last_collect_run(conn)
    if last is not None:
        out.append(S("ah_run_success", 1 if last[0] else 0, run=run))
        out.append(S("ah_run_duration_seconds", float(last[1]), run=run))
        out.append(S("ah_run_rows_written", last[2], run=run))
    ok = metrics.last_collect_success(conn)
    if ok is not None:
        out.append(S("ah_run_last_success_timestamp_seconds", float(ok), run=run))
    return out


def _repo_catalogue(conn: psycopg.Connection) -> list[Sample]:
    """The collected repositories (issue 30; nothing before migration 0019): repositories by state,
    commits by author, Backlog tasks, CI runs by conclusion, collect issues by kind (every declared
    value, 0 when none; undeclared kinds as ``other``)."""
    if not metrics.table_exists(conn, "repository"):
        return []
    collected, gone = metrics.repositories(conn)
    out = [
        S("ah_repo_repositories", collected, repo_state="collected"),
        S("ah_repo_repositories", gone, repo_state="gone"),
    ]
    me, other, unknown = metrics.commits_by_author(conn)
    out += [S("ah_repo_commits", n, author=a) for a, n in (("me", me), ("other", other), ("unknown", unknown))]
    out.append(S("ah_repo_backlog_tasks", metrics.backlog_tasks(conn)))
    ci = dict.fromkeys(LABEL_VALUES["ci_conclusion"] or (), 0)
    for conclusion, n in metrics.ci_runs_per_conclusion(conn):
        key = "running" if conclusion is None else conclusion if conclusion in ci else "other"
        ci[key] += n
    out += [S("ah_repo_ci_runs", n, ci_conclusion=k) for k, n in ci.items()]
    kinds = dict.fromkeys(LABEL_VALUES["collect_issue_kind"] or (), 0)
    for kind, n in metrics.collect_issues_per_kind(conn):
        kinds[kind if kind in kinds else "other"] += n
    out += [S("ah_repo_collect_issues", n, collect_issue_kind=k) for k, n in kinds.items()]
    return out


# --- efficiency ----------------------------------------------------------------------------------
#: The buckets of ah.model_call (disjoint token counts; source: migrations 0001_core).
TOKEN_BUCKETS: tuple[str, ...] = (
    "input_uncached",
    "cache_read",
    "cache_write_5m",
    "cache_write_1h",
    "output",
    "reasoning",
)
#: The classified counts of ah.efficiency (shared interface of issue 11).
CLASSIFIED = ("n_user", "n_model", "n_work", "n_status", "n_wait", "n_event", "n_noop", "n_orchestrate", "n_agent_msg")


def collect_efficiency(conn: psycopg.Connection, ctx: CollectContext) -> list[Sample]:
    """Tokens by bucket, agent and model and list-price cost (NULL buckets and unpriced calls
    add nothing); model calls (as ``ah.efficiency`` counts them: no API-error notices) by
    trigger (``unclassified`` for NULL) and thread role; poll share per role, (wait + status) /
    classified calls, absent when nothing is classified; loops by status and the longest time
    (s, database clock) since a running loop's root was last active, absent with none running."""
    out: list[Sample] = []
    tokens: dict[tuple[str, str, str], int] = {}
    cost: dict[tuple[str, str], float] = {}
    for agent, model, usd, *values in metrics.cost_and_tokens(conn, TOKEN_BUCKETS):
        label = ctx.models.label(model)
        for bucket, v in zip(TOKEN_BUCKETS, values, strict=True):
            if v is not None:
                tokens[(bucket, agent, label)] = tokens.get((bucket, agent, label), 0) + int(v)
        if usd is not None:
            cost[(agent, label)] = cost.get((agent, label), 0.0) + float(usd)
    out += [S("ah_tokens", v, bucket=b, agent=a, model=m) for (b, a, m), v in sorted(tokens.items())]
    out += [S("ah_cost_usd", v, agent=a, model=m) for (a, m), v in sorted(cost.items())]
    for trigger, role, n in metrics.calls_by_trigger_and_role(conn):
        out.append(S("ah_model_calls", n, trigger=trigger, role=role))
    for role, share in metrics.poll_share_per_role(conn, CLASSIFIED):
        if share is not None:
            out.append(S("ah_poll_share_ratio", share, role=role))
    statuses = {k: 0 for k in LABEL_VALUES["loop_status"] or ()}
    for status, n in metrics.loops_per_status(conn):
        statuses[status] = statuses.get(status, 0) + n  # an undeclared status is dropped + counted
    out += [S("ah_loops", n, loop_status=k) for k, n in statuses.items()]
    idle = metrics.longest_loop_idle(conn)
    if idle is not None:
        out.append(S("ah_loop_root_idle_max_seconds", float(idle)))
    return out


#: The collectors run by the runner, in order (``self`` is derived by the runner itself).
COLLECTORS: dict[str, Collector] = {
    "archive": collect_archive,
    "catalogue": collect_catalogue,
    "runs": collect_runs,
    "efficiency": collect_efficiency,
    "activity": collect_activity,
}
