"""Usage per (UTC day, agent, model, project, branch, host): one query over ``ah.model_call`` joined to
its session, cost from ``ah.priced_cost_usd`` at ``ah.price_for`` (sql/20_pricing.sql) — the web
UI's usage page and the session page's by-model table (`read.analytics`). Rules:

- API-error notices (``is_api_error``) are not calls (as in the session rollup, sql/30_postpass.sql).
- Tokens are the disjoint buckets input_uncached + cache_read + cache_write_5m + cache_write_1h +
  output; a cell's tokens are NULL when no call in it reported any bucket (unknown, never 0).
- Cost is NULL for a call whose model has no price row or whose usage is unknown; a cell's cost is
  the sum over priced calls, NULL when none is priced, and ``unpriced_calls`` says how many were
  left out, so a partial sum is never shown as the whole.
- Days are UTC calendar days of the call's timestamp; calls without a timestamp are counted
  under day None.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal

import psycopg
from psycopg import sql

from agent_history.session.filters import session_filter


@dataclass(frozen=True, slots=True)
class UsageCell:
    """Calls of one (UTC day, agent, model, project, branch, host). Tokens in tokens, cost in USD;
    None = unknown."""

    day: date | None
    agent: str
    model: str | None
    calls: int
    tokens: int | None
    output_tokens: int | None
    cost_usd: Decimal | None
    unpriced_calls: int
    recorded_cost_usd: Decimal | None
    project: str | None = None
    """The root session's working directory (None = not recorded)."""
    branch: str | None = None
    """The session's git branch (None = not recorded)."""
    host: str | None = None
    """The machine that indexed the session (``origin_host``; None = unknown)."""
    partial_calls: int = 0
    """Calls whose token counts are unknown (none recorded) or were written out of range (stored
    NULL with a ``value_out_of_range`` issue): the cell's tokens and cost are lower bounds."""


PRICED_CALLS_SQL = r"""
WITH calls AS (
    SELECT mc.*, s.agent AS session_agent, (mc.ts AT TIME ZONE 'UTC')::date AS day,
           coalesce(root.cwd, s.cwd) AS project, coalesce(s.git_branch, root.git_branch) AS branch,
           coalesce(s.origin_host, root.origin_host) AS host
    FROM ah.model_call AS mc
    JOIN ah.session AS s ON s.id = mc.session_id
    LEFT JOIN ah.session AS root ON root.id = s.root_session_id
    WHERE NOT coalesce(mc.is_api_error, false) AND {where}
), out_of_range AS (
    -- calls with a token count outside its column's range (model/limits.py stored it NULL and
    -- recorded a value_out_of_range issue at the call's record), as read.usage counts them
    SELECT DISTINCT source_id, byte_offset FROM ah.parse_issue
    WHERE kind = 'value_out_of_range'
      AND detail ~ 'model_call\.(input_uncached|cache_read|cache_write_5m|cache_write_1h|output|reasoning)'
), prices AS (
    -- one price lookup per (model, UTC day), as the session rollup does: ah.price_for scans the
    -- pattern table, and a long session has thousands of calls of one model on one day
    SELECT model, day, ah.price_for(model, day) AS price
    FROM (SELECT DISTINCT model, day FROM calls WHERE model IS NOT NULL) AS d
), priced AS (
    SELECT c.*,
           ah.priced_cost_usd(p.price, c.input_uncached, c.cache_read, c.cache_write_5m, c.cache_write_1h,
                              c.output) AS cost,
           CASE WHEN num_nonnulls(c.input_uncached, c.cache_read, c.cache_write_5m, c.cache_write_1h, c.output) > 0
                THEN coalesce(c.input_uncached, 0) + coalesce(c.cache_read, 0) + coalesce(c.cache_write_5m, 0)
                   + coalesce(c.cache_write_1h, 0) + coalesce(c.output, 0) END AS tokens,
           num_nonnulls(c.input_uncached, c.cache_read, c.cache_write_5m, c.cache_write_1h, c.output) = 0
             OR o.source_id IS NOT NULL AS partial
    FROM calls AS c
    LEFT JOIN prices AS p ON p.model = c.model AND p.day IS NOT DISTINCT FROM c.day
    LEFT JOIN out_of_range AS o ON o.source_id = c.source_id AND o.byte_offset = c.byte_offset
)
"""
"""Model calls matching {where} (aliases `mc`, `s`) with their list-price `cost` (USD, NULL =
unknown; the formula of ah.call_cost_usd) and `tokens` (NULL = unknown). Shared by the usage
page and the session page's by-model table."""

_USAGE_SQL = (
    PRICED_CALLS_SQL
    + """
SELECT day, session_agent, model, count(*) AS calls, sum(tokens)::bigint, sum(output)::bigint,
       sum(cost), count(*) FILTER (WHERE cost IS NULL), sum(recorded_cost_usd), project, branch, host,
       count(*) FILTER (WHERE partial)
FROM priced
GROUP BY 1, 2, 3, 10, 11, 12
ORDER BY 1 NULLS LAST, 2, 3, 10, 11, 12
"""
)


def usage_cells(
    conn: psycopg.Connection,
    *,
    agents: tuple[str, ...] = (),
    namespaces: tuple[str, ...] = (),
    since: datetime | None = None,
    until: datetime | None = None,
    project: str | None = None,
    model: str | None = None,
) -> list[UsageCell]:
    """Usage per (UTC day, agent, model, project, branch, host) for calls matching the filters (`since` inclusive,
    `until` exclusive, on the call's timestamp; a bound excludes calls without one; `project` a
    case-insensitive substring of the root session's working directory and `model` of the
    call's model, else the session's — the filters of `read.usage.usage_calls`, so the web page
    and ``usage --project`` count the same calls)."""
    shared, params = session_filter(agents=agents, namespaces=namespaces, since=since, until=until, time="mc.ts")
    conds: list[sql.Composable] = [sql.SQL("TRUE"), *shared]
    for name, column, text in (
        ("project_part", "coalesce(root.cwd, s.cwd)", project),
        ("model_part", "coalesce(mc.model, s.model)", model),
    ):
        if text:
            conds.append(sql.SQL(f"{column} ILIKE %({name})s"))
            params[name] = "%" + text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
    stmt = sql.SQL(_USAGE_SQL).format(where=sql.SQL(" AND ").join(conds))
    return [UsageCell(*row) for row in conn.execute(stmt, params)]
