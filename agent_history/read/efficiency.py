"""`efficiency`: what triggered the model calls of each thread (issue 11), from ``ah.efficiency``.

One row per thread (a session row: main thread or sub-agent), with its role (root | worker |
solo), the number of non-error model calls, the count per trigger (`classify.rules.TRIGGERS`),
the calls without a trigger, ``poll_share = (wait + status) / classified`` (4 decimals, None
when nothing is classified — never 0) and token sums (None when unknown). Totals add the
threads up with the same rules.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal

import psycopg
from psycopg import sql

from agent_history.classify.rules import TRIGGERS
from agent_history.classify.shares import poll_share
from agent_history.read.requests import ROLES, EfficiencyRequest
from agent_history.session.filters import project_part, session_filter

TOKEN_KEYS: tuple[str, ...] = ("input", "cache_read", "output")
"""``tokens`` keys: uncached input, cache reads, output (tokens)."""


@dataclass(slots=True)
class ThreadEfficiency:
    """One thread's model calls by trigger. Token counts in tokens; None = unknown."""

    session_uid: str
    agent_id: str
    agent: str
    namespace: str | None
    role: str | None
    started_at: datetime | None
    calls: int
    triggers: dict[str, int]
    unclassified: int
    poll_share: Decimal | None
    tokens: dict[str, int | None] = field(default_factory=dict)

    def as_dict(self) -> dict:
        """JSON-ready form (``poll_share`` as a float, ``started_at`` ISO)."""
        return {
            "session_uid": self.session_uid,
            "agent_id": self.agent_id,
            "agent": self.agent,
            "namespace": self.namespace,
            "role": self.role,
            "started_at": self.started_at.isoformat() if self.started_at else None,
            "calls": self.calls,
            "triggers": dict(self.triggers),
            "unclassified": self.unclassified,
            "poll_share": float(self.poll_share) if self.poll_share is not None else None,
            "tokens": dict(self.tokens),
        }


@dataclass(slots=True)
class EfficiencyReport:
    """Threads (newest first) and their totals."""

    threads: list[ThreadEfficiency]
    totals: dict

    def as_dict(self) -> dict:
        """``{"threads": [...], "totals": {...}}``, the shape of ``--json`` and the MCP tool."""
        return {"threads": [t.as_dict() for t in self.threads], "totals": self.totals}


def _sum(values: list[int | None]) -> int | None:
    known = [v for v in values if v is not None]
    return sum(known) if known else None


def totals_of(threads: list[ThreadEfficiency]) -> dict:
    """Totals over `threads`: thread and call counts, calls per trigger, unclassified, poll_share
    over all classified calls (None when none), token sums (None when no thread knows them)."""
    triggers = {t: sum(th.triggers.get(t, 0) for th in threads) for t in TRIGGERS}
    share = poll_share(triggers)
    return {
        "threads": len(threads),
        "calls": sum(th.calls for th in threads),
        "triggers": triggers,
        "unclassified": sum(th.unclassified for th in threads),
        "poll_share": float(share) if share is not None else None,
        "tokens": {k: _sum([th.tokens.get(k) for th in threads]) for k in TOKEN_KEYS},
    }


def efficiency_report(
    conn: psycopg.Connection,
    *,
    session_uid: str | None = None,
    agents: tuple[str, ...] = (),
    namespaces: tuple[str, ...] = (),
    since: datetime | None = None,
    until: datetime | None = None,
    role: str | None = None,
    limit: int | None = None,
    project: str | None = None,
) -> EfficiencyReport:
    """Threads of ``ah.efficiency`` matching the filters, newest first, with totals.

    `session_uid` keeps the session's threads (same uid, e.g. Claude sub-agents) and the threads
    rooted in it (Codex sub-agent threads have their own uid); `since` (inclusive) and `until`
    (exclusive) bound the thread's start (a bound excludes threads without one);
    `role` is root | worker | solo; `project` a case-insensitive substring of the root session's
    working directory (the web usage page's filter, as `read.usage_cells.usage_cells` reads it).
    Raises ValueError for an unknown role.
    """
    if role is not None and role not in ROLES:
        raise ValueError(f"unknown role {role!r} (known: {', '.join(ROLES)})")
    conds: list[sql.Composable] = []
    params: dict = {}
    if session_uid:
        conds.append(
            sql.SQL(
                "(e.session_uid = %(uid)s OR s.root_session_id IN "
                "(SELECT r.id FROM ah.session AS r WHERE r.session_uid = %(uid)s))"
            )
        )
        params["uid"] = session_uid
    shared, shared_params = session_filter(
        agents=agents, namespaces=namespaces, since=since, until=until, alias="e", time="e.started_at"
    )
    conds += shared
    params |= shared_params
    if project:  # the root's cwd, as the usage cells: a sub-agent thread counts for its session's project
        conds.append(
            sql.SQL(
                "coalesce((SELECT r.cwd FROM ah.session AS r WHERE r.id = s.root_session_id), s.cwd)"
                " ILIKE %(project_part)s"
            )
        )
        params["project_part"] = project_part(project)
    if role is not None:
        conds.append(sql.SQL("e.role = %(role)s"))
        params["role"] = role
    where = sql.SQL(" AND ").join(conds) if conds else sql.SQL("TRUE")
    counts = sql.SQL(", ").join(sql.Identifier(f"n_{t}") for t in TRIGGERS)
    stmt = sql.SQL(
        """
        SELECT e.session_uid, e.agent_id, e.agent, e.namespace, e.role, e.started_at, e.calls,
               {counts}, e.unclassified, e.poll_share, e.input_tokens, e.cache_read_tokens, e.output_tokens
        FROM ah.efficiency AS e
        JOIN ah.session AS s ON s.id = e.session_id
        WHERE {where}
        ORDER BY e.started_at DESC NULLS LAST, e.session_uid, e.agent_id
        {limit}
        """
    ).format(
        counts=counts,
        where=where,
        limit=sql.SQL("LIMIT {}").format(sql.Literal(limit)) if limit else sql.SQL(""),
    )
    threads = []
    n = len(TRIGGERS)
    for r in conn.execute(stmt, params):
        threads.append(
            ThreadEfficiency(
                session_uid=r[0],
                agent_id=r[1],
                agent=r[2],
                namespace=r[3],
                role=r[4],
                started_at=r[5],
                calls=r[6],
                triggers={t: r[7 + i] for i, t in enumerate(TRIGGERS)},
                unclassified=r[7 + n],
                poll_share=r[8 + n],
                # the view's sums are numeric: token counts are integers (None = unknown)
                tokens={k: None if v is None else int(v) for k, v in zip(TOKEN_KEYS, r[9 + n : 12 + n], strict=True)},
            )
        )
    return EfficiencyReport(threads, totals_of(threads))


def efficiency_of(conn: psycopg.Connection, req: EfficiencyRequest) -> EfficiencyReport:
    """The answer to a `read.requests.EfficiencyRequest` (`efficiency_report`)."""
    return efficiency_report(
        conn,
        session_uid=req.session_uid,
        agents=req.agents,
        namespaces=req.namespaces,
        since=req.since,
        until=req.until,
        role=req.role,
        limit=req.limit,
    )
