"""The status line's figures (`usage.statusline.StatusFigures`) in one query: the calls of the
given session (and its sub-agents) and of the last 24 hours, each priced like `read.usage`
(`ah.call_cost_usd`, the rollup's formula), then summed here: the session, today (in `tz`) and
the active 5-hour block (`usage.periods.blocks`, ccusage's rule, over the last 24 hours)."""

from __future__ import annotations

from datetime import datetime, timedelta, tzinfo

import psycopg

from agent_history.usage.periods import blocks, burn_rate
from agent_history.usage.statusline import StatusFigures

WINDOW = timedelta(hours=24)
"""How far back the block rule looks (a block chain longer than this starts at its edge)."""

_SQL = """
WITH mine AS (  -- the session and its sub-agents (threads whose root it is)
    SELECT s.id FROM ah.session AS s
    WHERE s.session_uid = %(uid)s
       OR s.root_session_id IN (SELECT r.id FROM ah.session AS r WHERE r.session_uid = %(uid)s)
), picked AS (  -- each branch on its index (model_call_session_idx, model_call_ts_idx)
    SELECT mc.id FROM ah.model_call AS mc WHERE mc.session_id IN (SELECT id FROM mine)
    UNION
    SELECT mc.id FROM ah.model_call AS mc WHERE mc.ts >= %(since)s
), calls AS (
    SELECT mc.id, coalesce(mc.ts, s.started_at) AS at, coalesce(mc.model, s.model) AS model,
           mc.input_uncached, mc.cache_read, mc.cache_write_5m, mc.cache_write_1h, mc.output,
           mc.session_id IN (SELECT id FROM mine) AS mine
    FROM ah.model_call AS mc
    JOIN ah.session AS s ON s.id = mc.session_id
    WHERE mc.id IN (SELECT id FROM picked) AND NOT coalesce(mc.is_api_error, false)
), prices AS (  -- ah.call_cost_usd's price row, looked up once per (model, UTC day)
    SELECT d.model, d.day, ah.price_for(d.model, d.day) AS price
    FROM (SELECT DISTINCT model, (at AT TIME ZONE 'UTC')::date AS day FROM calls) AS d
)
SELECT c.at,
       ah.priced_cost_usd(p.price, c.input_uncached, c.cache_read, c.cache_write_5m, c.cache_write_1h, c.output),
       num_nonnulls(c.input_uncached, c.cache_read, c.cache_write_5m, c.cache_write_1h, c.output) > 0,
       c.mine
FROM calls AS c
LEFT JOIN prices AS p
  ON p.model IS NOT DISTINCT FROM c.model AND p.day IS NOT DISTINCT FROM (c.at AT TIME ZONE 'UTC')::date
ORDER BY c.id
"""

_INDEXED = "SELECT EXISTS (SELECT 1 FROM ah.session WHERE session_uid = %s)"


def _sum(rows) -> tuple[float | None, int]:
    """(USD of `rows`, None when a call with known usage has no price; how many calls)."""
    total, unknown = 0.0, False
    for _, cost, known, _ in rows:
        if cost is None:
            unknown = unknown or known
        else:
            total += float(cost)
    return (None if unknown else total), len(rows)


def status_figures(conn: psycopg.Connection, session_uid: str, now: datetime, tz: tzinfo) -> StatusFigures:
    """The figures for session `session_uid` at aware `now`, "today" being `now`'s day in `tz`."""
    rows = conn.execute(_SQL, {"uid": session_uid, "since": now - WINDOW}).fetchall()
    session_cost, session_calls = _sum([r for r in rows if r[3]])
    # no call of the session: is it in the catalogue at all (indexed, nothing priced) or not yet?
    indexed = bool(session_calls) or bool(conn.execute(_INDEXED, (session_uid,)).fetchone()[0])
    midnight = now.astimezone(tz).replace(hour=0, minute=0, second=0, microsecond=0)
    today_cost, today_calls = _sum([r for r in rows if r[0] is not None and midnight <= r[0] <= now])
    recent = [r for r in rows if r[0] is not None and now - WINDOW <= r[0] <= now]
    active = next((b for b in blocks([r[0] for r in recent]) if b.is_active(now)), None)
    if active is None:
        return StatusFigures(session_cost, session_calls, today_cost, today_calls, None, None, None, indexed)
    members = [recent[i] for i in active.indexes]
    block_cost, _ = _sum(members)
    rate = burn_rate(0, block_cost, active.first_ts, active.last_ts)  # as `usage blocks`
    return StatusFigures(
        session_cost,
        session_calls,
        today_cost,
        today_calls,
        block_cost,
        None if rate is None else rate["costPerHour"],
        active.end,
        indexed,
    )
