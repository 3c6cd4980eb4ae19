"""`loops`, `loop <id | closeout path>` and `loop … --usage`: the read side of issue 12.

Reads ``ah.loops`` / ``ah.lane`` / ``ah.loop_closeout`` (filled by `ingest.loops`). Token totals
are the sum of the disjoint buckets (input uncached + cache read + cache writes + output), NULL
when every bucket is unknown; costs are list-price USD, NULL unless every call is priced.
A closeout path names every launch of that closeout (a relaunch shares it with the original).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from datetime import datetime
from decimal import Decimal

import psycopg

from agent_history.loops.usage import UsageLaunch, UsageRow, render_usage
from agent_history.read.common import iso
from agent_history.read.requests import LoopsRequest
from agent_history.session.filters import project_part


class LoopNotFound(LookupError):
    """No loop has this id or closeout path."""


class AmbiguousLoop(LookupError):
    """A closeout path names loops of different repositories; pass an id or the absolute path."""


TOKENS = (
    "CASE WHEN num_nonnulls({a}.input_uncached, {a}.cache_read, {a}.cache_write_5m, {a}.cache_write_1h, {a}.output) > 0 "
    "THEN coalesce({a}.input_uncached, 0) + coalesce({a}.cache_read, 0) + coalesce({a}.cache_write_5m, 0) "
    "+ coalesce({a}.cache_write_1h, 0) + coalesce({a}.output, 0) END"
)


@dataclass(slots=True)
class LoopSummary:
    """One loop row (`loops --json` shape). Units: tokens, USD; times UTC."""

    id: int
    root_session_uid: str
    root_agent: str
    repo: str | None
    loop_number: int
    closeout_path: str
    charter_path: str | None
    charter_sha256: str | None
    status: str
    waiting_until: datetime | None
    started_at: datetime | None
    ended_at: datetime | None
    root_last_active_at: datetime | None
    lanes: int | None
    model_calls: int | None
    tokens: int | None
    cost_usd: Decimal | None
    errors: int | None
    commits: int | None
    pushes: int | None
    landed: int | None
    parked: int | None
    end_evidence: str | None = None
    progress_sources: dict[str, str] | None = None
    """column → where its value came from (`agent_history.loops.progress`); None before a refresh."""

    @property
    def wall_seconds(self) -> float | None:
        """Launch → end (finished) or → the root's last activity; None when unknown."""
        end = self.ended_at or self.root_last_active_at
        if self.started_at is None or end is None or end < self.started_at:
            return None
        return (end - self.started_at).total_seconds()

    def as_dict(self) -> dict:
        """JSON-ready form with the issue's keys (times ISO 8601, cost a float)."""
        d = asdict(self)
        for k in ("waiting_until", "started_at", "ended_at", "root_last_active_at"):
            d[k] = iso(d[k])
        d["cost_usd"] = float(self.cost_usd) if self.cost_usd is not None else None
        return d


_SUMMARY_SQL = f"""
SELECT l.id, s.session_uid, s.agent, l.repo, l.loop_number, l.closeout_path, l.charter_path, l.charter_sha256,
       l.status, l.waiting_until, l.started_at, l.ended_at, l.root_last_active_at, l.lanes, l.model_calls,
       {TOKENS.format(a="l")}, l.cost_usd, l.errors, l.commits, l.pushes, l.landed, l.parked, l.end_evidence,
       l.progress_sources
FROM ah.loops AS l JOIN ah.session AS s ON s.id = l.root_session_id
"""


def list_loops(
    conn: psycopg.Connection,
    *,
    status: str | None = None,
    since: datetime | None = None,
    repo: str | None = None,
    namespaces: tuple[str, ...] = (),
    limit: int = 50,
    until: datetime | None = None,
    project: str | None = None,
) -> list[LoopSummary]:
    """Loops newest launch first, filtered by status, launch time ≥ `since` and < `until`, repo
    (exact), the root's namespace and `project`: a case-insensitive substring of the root
    session's working directory (the web usage page's filter, as its usage cells read it)."""
    rows = conn.execute(
        _SUMMARY_SQL
        + """
        WHERE (%(status)s::text IS NULL OR l.status = %(status)s)
          AND (%(since)s::timestamptz IS NULL OR l.started_at >= %(since)s)
          AND (%(until)s::timestamptz IS NULL OR l.started_at < %(until)s)
          AND (%(repo)s::text IS NULL OR l.repo = %(repo)s)
          AND (cardinality(%(ns)s::text[]) = 0 OR s.namespace = ANY (%(ns)s))
          AND (%(project)s::text IS NULL OR s.cwd ILIKE %(project)s)
        ORDER BY l.started_at DESC NULLS LAST, l.id DESC
        LIMIT %(limit)s
        """,
        {
            "status": status,
            "since": since,
            "until": until,
            "repo": repo,
            "ns": list(namespaces),
            "limit": limit,
            "project": project_part(project) if project else None,
        },  # fmt: skip
    ).fetchall()
    return [LoopSummary(*r) for r in rows]


def resolve_loops(conn: psycopg.Connection, ref: str) -> list[int]:
    """Loop ids named by `ref`: an id (with the other launches of its closeout) or a closeout
    path as written in the launch or absolute. Raises LoopNotFound or AmbiguousLoop."""
    ref = ref.strip()
    if ref.isdigit():
        path = conn.execute("SELECT closeout_abspath FROM ah.loops WHERE id = %s", (int(ref),)).fetchone()
        if path is None:
            raise LoopNotFound(f"no loop with id {ref}")
        paths = [path[0]]
    else:
        paths = [
            r[0]
            for r in conn.execute(
                "SELECT DISTINCT closeout_abspath FROM ah.loops WHERE closeout_path = %(p)s OR closeout_abspath = %(p)s "
                "ORDER BY 1",
                {"p": ref.rstrip("/")},
            )
        ]
        if not paths:
            raise LoopNotFound(f"no loop has closeout {ref!r}")
        if len(paths) > 1:
            raise AmbiguousLoop(f"{ref!r} names closeouts in {len(paths)} directories: " + ", ".join(paths))
    return [
        r[0]
        for r in conn.execute(
            "SELECT id FROM ah.loops WHERE closeout_abspath = %s ORDER BY started_at NULLS FIRST, id", (paths[0],)
        )
    ]


@dataclass(slots=True)
class LaneDetail:
    """One lane of a loop: its session, how it was attached, usage and the latest return status."""

    loop_id: int
    session_uid: str
    agent_id: str
    agent: str
    link_method: str
    role: str
    subagent_type: str | None
    model: str | None
    model_calls: int | None
    tokens: int | None
    cost_usd: Decimal | None
    return_status: str | None
    returns: list = field(default_factory=list)

    def as_dict(self) -> dict:
        d = asdict(self)
        d["cost_usd"] = float(self.cost_usd) if self.cost_usd is not None else None
        return d


@dataclass(slots=True)
class CloseoutEvidence:
    """A captured write of the closeout path (SHA-256 and first line only)."""

    loop_id: int
    session_uid: str | None
    written_at: datetime | None
    qualified: bool
    reason: str | None
    sha256: str | None
    first_line: str | None

    def as_dict(self) -> dict:
        d = asdict(self)
        d["written_at"] = iso(self.written_at)
        return d


@dataclass(slots=True)
class LoopDetail:
    """Every launch of one closeout (one unless relaunched), their lanes and closeout writes."""

    loops: list[LoopSummary]
    lanes: list[LaneDetail]
    closeouts: list[CloseoutEvidence]

    @property
    def relaunched(self) -> bool:
        return len(self.loops) > 1

    def as_dict(self) -> dict:
        return {
            "loops": [x.as_dict() for x in self.loops],
            "relaunched": self.relaunched,
            "lanes": [x.as_dict() for x in self.lanes],
            "closeouts": [x.as_dict() for x in self.closeouts],
        }


def loop_detail(conn: psycopg.Connection, ids: list[int]) -> LoopDetail:
    """The loops `ids` (from `resolve_loops`) with lanes and closeout evidence."""
    loops = [
        LoopSummary(*r)
        for r in conn.execute(_SUMMARY_SQL + " WHERE l.id = ANY (%s) ORDER BY l.started_at, l.id", (ids,))
    ]
    lanes = [
        LaneDetail(*r)
        for r in conn.execute(
            f"""
            SELECT a.loop_id, s.session_uid, s.agent_id, s.agent, a.link_method, 'lane', s.subagent_type, s.model,
                   nullif(s.model_call_count, 0), {TOKENS.format(a="s")}, s.cost_usd, a.return_status, a.returns
            FROM ah.lane AS a JOIN ah.session AS s ON s.id = a.session_id
            WHERE a.loop_id = ANY (%s)
            ORDER BY a.loop_id, s.started_at NULLS LAST, a.session_id
            """,
            (ids,),
        )
    ]
    closeouts = [
        CloseoutEvidence(*r)
        for r in conn.execute(
            """
            SELECT c.loop_id, s.session_uid, c.written_at, c.qualified, c.reason, c.sha256, c.first_line
            FROM ah.loop_closeout AS c LEFT JOIN ah.session AS s ON s.id = c.session_id
            WHERE c.loop_id = ANY (%s)
            ORDER BY c.loop_id, c.written_at NULLS FIRST, c.id
            """,
            (ids,),
        )
    ]
    return LoopDetail(loops, lanes, closeouts)


def usage_rows(conn: psycopg.Connection, ids: list[int]) -> list[UsageRow]:
    """Model calls and list-price cost by launch, role (root inside its window | lane) and model."""
    rows = conn.execute(
        """
        SELECT l.id, k.role, k.model, count(*),
               CASE WHEN count(k.cost) = count(*) THEN round(sum(k.cost), 6) END
        FROM ah.loops AS l
        JOIN ah.model_call AS x
          ON (x.session_id = l.root_session_id AND x.ts >= l.started_at
              AND (l.window_end_at IS NULL OR x.ts < l.window_end_at))
          OR x.session_id IN (SELECT a.session_id FROM ah.lane AS a WHERE a.loop_id = l.id)
        JOIN ah.session AS s ON s.id = x.session_id
        CROSS JOIN LATERAL (
            SELECT CASE WHEN x.session_id = l.root_session_id THEN 'root' ELSE 'lane' END AS role,
                   coalesce(x.model, s.model) AS model,
                   ah.call_cost_usd(coalesce(x.model, s.model), coalesce(x.ts, s.started_at), x.input_uncached,
                                    x.cache_read, x.cache_write_5m, x.cache_write_1h, x.output) AS cost
        ) AS k
        WHERE l.id = ANY (%s) AND NOT coalesce(x.is_api_error, false)
        GROUP BY l.id, l.started_at, k.role, k.model
        ORDER BY l.started_at, l.id, k.role DESC, k.model
        """,
        (ids,),
    ).fetchall()
    return [UsageRow(*r) for r in rows]


def catalogue_as_of(conn: psycopg.Connection) -> datetime | None:
    """When the catalogue was last brought up to date: the last completed index pass."""
    return conn.execute("SELECT max(finished_at) FROM ah.index_run WHERE status LIKE 'ok%%'").fetchone()[0]


def usage_report(conn: psycopg.Connection, ids: list[int]) -> str:
    """The `loop … --usage` Markdown block for the launches `ids` of one closeout."""
    detail = loop_detail(conn, ids)
    if not detail.loops:
        raise LoopNotFound("no such loop")
    first = detail.loops[0]
    launches = [
        UsageLaunch(x.id, x.root_agent, x.root_session_uid, x.status, x.started_at, x.wall_seconds, x.lanes,
                    x.model_calls, x.cost_usd, x.commits, x.pushes, x.landed, x.parked, x.progress_sources)
        for x in detail.loops
    ]  # fmt: skip
    return render_usage(
        repo=first.repo,
        loop_number=first.loop_number,
        closeout_path=first.closeout_path,
        as_of=catalogue_as_of(conn),
        launches=launches,
        rows=usage_rows(conn, ids),
    )


def loops_by_session(conn: psycopg.Connection, session_ids: list[int]) -> dict[int, list[int]]:
    """Loop ids each session belongs to, as root or lane (sessions in no loop are absent)."""
    out: dict[int, list[int]] = {}
    for sid, lid in conn.execute(
        "SELECT root_session_id, id FROM ah.loops WHERE root_session_id = ANY (%(s)s) "
        "UNION SELECT session_id, loop_id FROM ah.lane WHERE session_id = ANY (%(s)s) ORDER BY 1, 2",
        {"s": session_ids},
    ):
        out.setdefault(sid, []).append(lid)
    return out


def loops_of(conn: psycopg.Connection, req: LoopsRequest) -> list[LoopSummary]:
    """The answer to a `read.requests.LoopsRequest` (`list_loops`)."""
    return list_loops(
        conn,
        status=req.status,
        since=req.since,
        until=req.until,
        repo=req.repo,
        namespaces=req.namespaces,
        limit=req.limit,
    )
