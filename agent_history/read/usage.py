"""Per-call usage facts for `agent-history usage` (issue 19): one query, then pure aggregation in
`agent_history.usage.report`.

Which calls count: every `ah.model_call` that is not an API error notice (`is_api_error`), as the
session rollup counts them (sql/30_postpass.sql). A call's time is its own `ts`, else its
session's start; its model is its own, else the session's. Its list-price cost is
`ah.priced_cost_usd` at `ah.price_for(model, UTC day)` — the rollup's formula — NULL when the
model has no price row or the usage is unknown. Costs are priced per call and only then summed,
so a long-context call (more input than its price row's `long_context_threshold`) is charged its
tier for the whole call even where calls are summed per slot (`grouped`).
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal

import psycopg

from agent_history.read.requests import UsageRequest
from agent_history.session.filters import project_part
from agent_history.usage.report import Call

_CALLS_SQL = r"""
WITH calls AS (
    SELECT mc.id, coalesce(mc.ts, s.started_at) AS ts, mc.agent, s.namespace,
           coalesce(r.session_uid, s.session_uid) AS session_uid, coalesce(r.cwd, s.cwd) AS project,
           coalesce(mc.model, s.model) AS model,
           mc.input_uncached, mc.cache_read, mc.cache_write_5m, mc.cache_write_1h, mc.output, mc.reasoning,
           mc.recorded_cost_usd, s.id AS session_id, coalesce(s.root_session_id, s.id) AS root_id, coalesce(s.repo_id, r.repo_id) AS repo_id,
           coalesce(s.git_branch, r.git_branch) AS branch, mc.source_id AS call_source, mc.byte_offset AS call_offset,
           mc.ttft_ms, mc.thinking_ms, coalesce(s.origin_host, r.origin_host) AS host
    FROM ah.model_call AS mc
    JOIN ah.session AS s ON s.id = mc.session_id
    LEFT JOIN ah.session AS r ON r.id = s.root_session_id
    WHERE NOT coalesce(mc.is_api_error, false) {where}
), out_of_range AS (
    -- calls with a token count outside its column's range (model/limits.py stored it NULL and
    -- recorded a value_out_of_range issue at the call's record): partial usage, not "not recorded"
    SELECT DISTINCT source_id, byte_offset FROM ah.parse_issue
    WHERE kind = 'value_out_of_range'
      AND detail ~ 'model_call\.(input_uncached|cache_read|cache_write_5m|cache_write_1h|output|reasoning)'
), prices AS (
    -- one price lookup per (model, UTC day), as the rollup does
    SELECT d.model, d.day, ah.price_for(d.model, d.day) AS price
    FROM (SELECT DISTINCT model, coalesce((ts AT TIME ZONE 'UTC')::date, current_date) AS day
          FROM calls WHERE model IS NOT NULL) AS d
)
SELECT k.ts, k.agent, k.namespace, k.session_uid, k.project, k.model,
       k.input_uncached, k.cache_read, k.cache_write_5m, k.cache_write_1h, k.output, k.reasoning,
       ah.priced_cost_usd(pr.price, k.input_uncached, k.cache_read, k.cache_write_5m, k.cache_write_1h, k.output),
       (pr.price).price_key IS NOT NULL,
       coalesce(
           (SELECT a.loop_id::text FROM ah.lane AS a WHERE a.session_id = k.session_id ORDER BY a.loop_id LIMIT 1),
           (SELECT l.id::text FROM ah.loops AS l WHERE l.root_session_id = k.root_id
              ORDER BY (l.started_at <= k.ts) DESC NULLS LAST, l.started_at DESC LIMIT 1)),
       rp.name, k.recorded_cost_usd,
       1, NULL::bigint, NULL::bigint, NULL::timestamptz, NULL::boolean[], k.branch,
       (o.source_id IS NOT NULL)::int,
       k.ttft_ms, (k.ttft_ms IS NOT NULL)::int, k.ttft_ms, k.thinking_ms, (k.thinking_ms IS NOT NULL)::int, k.host
FROM calls AS k
LEFT JOIN out_of_range AS o ON o.source_id = k.call_source AND o.byte_offset = k.call_offset
LEFT JOIN prices AS pr ON pr.model = k.model AND pr.day = coalesce((k.ts AT TIME ZONE 'UTC')::date, current_date)
LEFT JOIN ah.repo AS rp ON rp.id = k.repo_id
ORDER BY k.ts NULLS LAST, k.id
"""

# The calls above (each already priced: the long-context decision is per call) summed per (15-minute UTC bucket, agent, namespace, session, project, model,
# loop, repo, branch): the rows of `Call(n=…)` for every view but blocks. Column order = Call's fields.
_GROUPED_SQL = """
WITH c (ts, agent, namespace, session_uid, project, model, iu, cr, w5, w1, out, rs, cost, priced, loop_id, repo,
        recorded, n1, kn1, up1, last1, unknown1, branch, oor, ttft, ttft_n, ttft_max, think, think_n, host)
     AS ({calls})
SELECT min(ts), agent, namespace, session_uid, project, model,
       -- sum(bigint) is numeric: back to bigint, so token counts stay integers in the JSON
       sum(iu)::bigint, sum(cr)::bigint, sum(w5)::bigint, sum(w1)::bigint, sum(out)::bigint, sum(rs)::bigint,
       sum(cost), bool_or(priced), loop_id, repo, sum(recorded), count(*),
       count(*) FILTER (WHERE num_nonnulls(iu, cr, w5, w1, out) > 0),
       count(*) FILTER (WHERE num_nonnulls(iu, cr, w5, w1, out) > 0 AND cost IS NULL),
       max(ts),
       -- per report.PARTIAL_FIELDS: does any call of the group have that count unknown
       ARRAY[bool_or(iu IS NULL), bool_or(out IS NULL), bool_or(w5 IS NULL AND w1 IS NULL), bool_or(cr IS NULL),
             bool_or(num_nonnulls(iu, cr, w5, w1, out) = 0 OR oor = 1), bool_or(rs IS NULL)],
       branch, sum(oor)::int,
       sum(ttft)::bigint, sum(ttft_n)::int, max(ttft_max), sum(think)::bigint, sum(think_n)::int, host
FROM c
GROUP BY date_bin('15 minutes', ts, TIMESTAMPTZ '2000-01-01 00:00+00'),
         agent, namespace, session_uid, project, model, loop_id, repo, branch, host
ORDER BY 1 NULLS LAST
"""


CALL_COLUMNS = {
    "time": "coalesce(mc.ts, s.started_at)",
    "agent": "mc.agent",
    "namespace": "s.namespace",
    "project": "coalesce(r.cwd, s.cwd)",  # the root session's directory
    "model": "coalesce(mc.model, s.model)",
}
"""What each usage filter compares in `usage_calls` (model calls ``mc`` of session ``s``, root ``r``)."""
SESSION_COLUMNS = {"time": "s.started_at", "agent": "s.agent", "namespace": "s.namespace", "project": "s.cwd"}
"""… and in `sessions_uncounted` (sessions ``s``: by start;
no model filter)."""


def _filter(
    columns: dict[str, str],
    *,
    since: datetime | None,
    until: datetime | None,
    agents: tuple[str, ...],
    namespaces: tuple[str, ...],
    project: str | None,
    model: str | None = None,
) -> tuple[list[str], list]:
    """``(conditions, positional parameters)`` of the usage filters over `columns`: ``time`` in
    [`since`, `until`), ``agent``/``namespace`` one of, ``project``/``model`` a case-insensitive
    substring (LIKE-escaped; the project's trailing slashes dropped: `session.filters.project_part`)."""
    where, params = [], []
    for op, value in ((">=", since), ("<", until)):
        if value is not None:
            where.append(f"{columns['time']} {op} %s")
            params.append(value)
    for name, values in (("agent", agents), ("namespace", namespaces)):
        if values:
            where.append(f"{columns[name]} = ANY(%s)")
            params.append(list(values))
    if project:
        where.append(f"{columns['project']} ILIKE %s")
        params.append(project_part(project))
    if model:
        where.append(f"{columns['model']} ILIKE %s")
        params.append(f"%{_escape(model)}%")
    return where, params


def usage_calls(
    conn: psycopg.Connection,
    *,
    since: datetime | None = None,
    until: datetime | None = None,
    agents: tuple[str, ...] = (),
    namespaces: tuple[str, ...] = (),
    project: str | None = None,
    model: str | None = None,
    grouped: bool = False,
) -> list[Call]:
    """The billable model calls matching the filters, oldest first, as `Call`s.

    `since`/`until` bound the call time (inclusive / exclusive, aware datetimes); `project` is a
    substring of the root session's working directory; `model` a substring of the model id
    (both case-insensitive). `grouped` sums them in the database into `Call(n=…)` rows (see
    `Call.n`) — the same report for every view but `blocks`, from far fewer rows."""
    where, params = _filter(
        CALL_COLUMNS, since=since, until=until, agents=agents, namespaces=namespaces, project=project, model=model
    )
    sql = _CALLS_SQL.format(where="".join(f" AND {w}" for w in where))
    if grouped:
        sql = _GROUPED_SQL.format(calls=sql.rstrip().removesuffix("ORDER BY k.ts NULLS LAST, k.id"))
    return [Call(*row) for row in conn.execute(sql, params).fetchall()]


def usage_report(conn: psycopg.Connection, req: UsageRequest, now: datetime) -> dict:
    """The answer to a `read.requests.UsageRequest`: `usage.report.build_report` over the matching
    calls (`usage_calls`; summed in the database for every view but ``blocks``), periods in the
    request's zone, the active block judged at aware `now`; ccusage's JSON shape plus
    ``"timezone"``, ``"sessionsWithoutUsage"`` (agent → sessions whose model calls are
    unknown), ``"sessionsWithCallsElsewhere"`` (agent → sessions whose calls are all another
    session's copies, counted there) and ``"sessionsPendingIndex"`` (agent → sessions waiting
    for the end of an index pass: totals and prices not settled yet) — `session_counts`. The one
    report the CLI's ``usage --json``, the MCP ``usage`` tool and the web UI's
    ``/api/usage/report`` give."""
    from agent_history.usage.plans import WINDOWS
    from agent_history.usage.report import build_report

    calls = usage_calls(
        conn,
        since=req.since,
        until=req.until,
        agents=req.agents,
        namespaces=req.namespaces,
        project=req.project,
        model=req.model,
        grouped=req.view != "blocks",  # blocks need each call's time
    )
    # a model filter cannot match a session whose calls are unknown or another's: no note then
    scope = {
        "since": req.since,
        "until": req.until,
        "agents": req.agents,
        "namespaces": req.namespaces,
        "project": req.project,
    }
    report = build_report(req.view, calls, req.timezone, now, block_length=WINDOWS[req.window])
    without, elsewhere, pending = session_counts(conn, **scope)
    if req.model:  # pending sessions stay named: their calls' models may have no price yet
        without, elsewhere = {}, {}
    report["sessionsWithoutUsage"], report["sessionsWithCallsElsewhere"] = without, elsewhere
    report["sessionsPendingIndex"] = pending
    report["timezone"] = str(req.timezone)
    return report


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


_PRICE_COLUMNS = (
    "price_key, CASE WHEN isfinite(effective_from) THEN effective_from END AS effective_from, provider, model_id, model_name, origin, source, input_per_mtok, output_per_mtok, "
    "cache_read_per_mtok, cache_write_5m_per_mtok, cache_write_1h_per_mtok, long_context_threshold, "
    "long_input_per_mtok, long_output_per_mtok, long_cache_read_per_mtok, long_cache_write_5m_per_mtok, "
    "long_cache_write_1h_per_mtok, long_context_source"
)


def _price_dict(names: list[str], row: tuple) -> dict:
    out = {}
    for name, value in zip(names, row, strict=True):
        if isinstance(value, Decimal):
            value = float(value)
        elif name == "effective_from":
            # NULL here = -infinity: a price with no start date (holds from the beginning)
            value = None if value is None else value.isoformat()
        out[name] = value
    return out


def price_list(conn: psycopg.Connection, *, every: bool = False) -> dict:
    """The price data of the catalogue (`agent-history pricing`)::

        {"prices": [{price_key, effective_from (ISO day, None = from the beginning), provider,
                     model_id, model_name, origin ("library" | "ours"), source ("genai-prices
                     <version>" or the page read), USD per million tokens per bucket and the
                     long-context tier (long_context_threshold in input tokens)}…],
         "models": [{"model": name as written, "price_key", "matched_as", "agents", "calls"}…],
         "unpricedModels": [{"model", "agents", "calls", "reason"}…],
         "priceData": the data key of the loaded prices (library version + rules)}

    `prices` holds the rows of the models seen (every row of the library with `every`); `models`
    every priced name seen on a billable call, `unpricedModels` every name seen without a price —
    its calls cost NULL, never 0 — with the reason (`usage.model_names.unpriced_reason`)."""
    seen = conn.execute(
        """
        SELECT m.model, m.agents, m.calls, r.price_key, r.matched_as, r.reason FROM (
            SELECT mc.model, array_agg(DISTINCT mc.agent ORDER BY mc.agent) AS agents, count(*) AS calls
            FROM ah.model_call AS mc
            WHERE mc.model IS NOT NULL AND NOT coalesce(mc.is_api_error, false)
            GROUP BY mc.model) AS m
        LEFT JOIN ah.model_price_ref AS r ON r.model = m.model
        ORDER BY m.model
        """
    ).fetchall()
    models = [
        {"model": m, "price_key": k, "matched_as": how, "agents": agents, "calls": calls}
        for m, agents, calls, k, how, _ in seen
        if k is not None
    ]
    unpriced = [
        {"model": m, "agents": agents, "calls": calls, "reason": why or "not resolved yet (run `agent-history index`)"}
        for m, agents, calls, k, _, why in seen
        if k is None
    ]
    where = "" if every else "WHERE price_key = ANY(%s)"
    params = () if every else (sorted({m["price_key"] for m in models}),)
    cur = conn.execute(
        f"SELECT {_PRICE_COLUMNS} FROM ah.model_pricing {where} ORDER BY price_key, effective_from", params
    )
    names = [d.name for d in cur.description]
    prices = [_price_dict(names, r) for r in cur.fetchall()]
    key = conn.execute("SELECT value FROM ah.meta WHERE key = 'prices'").fetchone()
    return {"prices": prices, "models": models, "unpricedModels": unpriced, "priceData": key[0] if key else None}


def plan_snapshot(conn: psycopg.Connection, plans: dict, now: datetime, agents: tuple[str, ...] = ()) -> dict:
    """The plan windows at aware `now` (`usage.plans.plan_status`) over every billable call of
    `agents` (all when empty) — every time, since a named plan's limit is the highest past window.
    `plans` is `Settings.plans` ({agent: PlanConfig})."""
    from agent_history.usage.plans import plan_status

    return plan_status(usage_calls(conn, agents=agents, until=now), now, plans, agents)


def call_timings(conn: psycopg.Connection, session_id: int) -> list[dict]:
    """The model calls of one thread (`ah.session.id`), in file order (`session --calls`)::

        [{"ts" (datetime | None), "model", "tokens" (the five buckets' sum, None = unknown),
          "output", "reasoning" (tokens), "duration_ms", "duration_basis" (what the duration
          measures, named by the parser), "ttft_ms" (time to first token), "thinking_ms",
          "is_api_error"}, …]

    Times are ms, None where the transcript records none (the capability rows of
    `agent_history.harnesses` say which formats do: Kimi's ``llmFirstTokenLatencyMs``, VS Code
    Copilot's ``timings.firstProgress``)."""
    rows = conn.execute(
        """
        SELECT ts, model,
               CASE WHEN num_nonnulls(input_uncached, cache_read, cache_write_5m, cache_write_1h, output) > 0
                    THEN coalesce(input_uncached, 0) + coalesce(cache_read, 0) + coalesce(cache_write_5m, 0)
                       + coalesce(cache_write_1h, 0) + coalesce(output, 0) END,
               output, reasoning, duration_ms, duration_basis, ttft_ms, thinking_ms, coalesce(is_api_error, false)
        FROM ah.model_call WHERE session_id = %s
        ORDER BY source_id, byte_offset NULLS LAST, ts NULLS LAST, id
        """,
        (session_id,),
    ).fetchall()
    keys = ("ts", "model", "tokens", "output", "reasoning", "duration_ms", "duration_basis", "ttft_ms", "thinking_ms")
    return [dict(zip((*keys, "is_api_error"), r, strict=True)) for r in rows]


def replies_without_usage(conn: psycopg.Connection, session_id: int) -> int:
    """Assistant messages of one thread (`ah.session.id`) when it has no model call at all: its
    transcript recorded no usage (Codex field cases E22/E23: replies, no ``token_count``), so
    the count of calls behind them is unknown, never 0. 0 when the thread has a model call."""
    row = conn.execute(
        """
        SELECT count(*) FROM ah.message AS m
        WHERE m.session_id = %(sid)s AND m.role = 'assistant'
          AND NOT EXISTS (SELECT 1 FROM ah.model_call AS mc WHERE mc.session_id = %(sid)s)
        """,
        {"sid": session_id},
    ).fetchone()
    return int(row[0]) if row else 0


_CLAIMS_A_CALL = "EXISTS (SELECT 1 FROM ah.row_claim AS c WHERE c.session_id = s.id AND c.row_table = 'model_call')"
"""Session ``s``'s transcript holds a copy of a model call two sessions share (`db.tables.claims`)."""


def sessions_uncounted(
    conn: psycopg.Connection,
    *,
    since: datetime | None = None,
    until: datetime | None = None,
    agents: tuple[str, ...] = (),
    namespaces: tuple[str, ...] = (),
    project: str | None = None,
) -> tuple[dict[str, int], dict[str, int]]:
    """``(without usage, with calls elsewhere)`` of `session_counts` (its first two)."""
    without, elsewhere, _ = session_counts(
        conn, since=since, until=until, agents=agents, namespaces=namespaces, project=project
    )
    return without, elsewhere


_PENDING = "EXISTS (SELECT 1 FROM ah.dirty_session AS d WHERE d.session_id = s.id)"
"""Session ``s`` waits for the end of an index pass (``ah.dirty_session``: the post-pass that
resolves its model names to prices and rolls up its totals has not run yet)."""


def session_counts(
    conn: psycopg.Connection,
    *,
    since: datetime | None = None,
    until: datetime | None = None,
    agents: tuple[str, ...] = (),
    namespaces: tuple[str, ...] = (),
    project: str | None = None,
) -> tuple[dict[str, int], dict[str, int], dict[str, int]]:
    """``(without usage, with calls elsewhere, pending)``: agent → number of sessions matching
    the filters (`usage_calls`'s, by session start) of each kind, in one statement (``FILTER``ed
    counts over one scan of the sessions; an agent with none of a kind is absent from that dict).

    - **without usage**: the model-call count is unknown (``ah.session.model_call_count`` NULL:
      replies, no usage recorded — Codex field cases E22/E23): what `usage` cannot count, named,
      never 0 calls; not a session whose transcript's calls are all copies another session owns,
      nor one still pending.
    - **with calls elsewhere**: owns no model call while its transcript records some — every
      call is a copy another session owns (a copied transcript, a resume or fork keeping its ids;
      `read.shared`); its usage is counted in that session, neither unknown nor 0.
    - **pending**: waits for the end of an index pass (running, or interrupted: `_PENDING`) —
      its totals are not rolled up and model names seen first in it have no price yet, so
      `usage` would call them unpriced; the next complete `index` settles them (newcomer trial,
      stop 42: an interrupted first index showed 2,988 priced calls as "unpriced" and 163
      sessions as "record no usage").
    """
    where, params = _filter(
        SESSION_COLUMNS, since=since, until=until, agents=agents, namespaces=namespaces, project=project
    )
    rows = conn.execute(
        f"""
        SELECT s.agent,
               count(*) FILTER (WHERE s.model_call_count IS NULL AND NOT x.claims AND NOT x.pending),
               count(*) FILTER (WHERE x.claims AND NOT EXISTS (SELECT 1 FROM ah.model_call AS mc WHERE mc.session_id = s.id)),
               count(*) FILTER (WHERE x.pending)
        FROM ah.session AS s
        CROSS JOIN LATERAL (SELECT {_CLAIMS_A_CALL} AS claims, {_PENDING} AS pending) AS x  -- once per session
        WHERE {" AND ".join(where) or "TRUE"}
        GROUP BY 1 ORDER BY 1
        """,
        params,
    ).fetchall()
    return tuple({a: int(r[k]) for a, *r in rows if r[k]} for k in range(3))  # type: ignore[return-value]
