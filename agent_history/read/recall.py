"""Thread recall (issue 17): the best search hits expanded into the turns around them, and into
the sessions linked to theirs by lineage, as one narrative with provenance.

A **turn** is a human prompt and everything after it in file order (replies, reasoning, tool
calls with their results) up to the next human prompt; events before a session's first prompt
form turn 0. For each of the best `RecallBounds.hits` hits (a search with the caller's filters,
exclusions included) the narrative takes the hit's turn plus `turns_before` / `turns_after`
turns around it. A turn longer than `steps_per_turn` keeps its prompt and, for the hit's turn,
the steps nearest the hit; for any other turn, its last steps (where its outcome is). Sessions linked to the hit's session — its parent, its children (sub-agents,
forks: ``parent_session_id``), the session it was resumed or forked from and those resumed or
forked from it (``forked_from_uid``, same agent) — contribute their turn nearest the link: the
last turn of an earlier session, the first turn of a later one. Curated-out sessions
(``ah.session_exclusion``) never contribute.

Bounds (`RecallBounds`): 3 hits, 1 turn before and 1 after, 12 steps per turn, 6 linked sessions
per hit, 80 steps in all, 600 characters of text per step. Steps are ordered by session start,
then file order (source file, byte offset), and carry the session uid, thread (agent id),
agent, namespace, time, class or tool name, source file, line and byte offset.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from datetime import datetime

import psycopg

from agent_history.search.request import SearchHit
from agent_history.session.exclusions import EXCLUDED_SESSION_IDS


@dataclass(frozen=True, slots=True)
class RecallBounds:
    """How much a recall returns (see the module docstring)."""

    hits: int = 3
    turns_before: int = 1
    turns_after: int = 1
    steps_per_turn: int = 12
    linked_sessions: int = 6
    max_steps: int = 80
    text_chars: int = 600


@dataclass(slots=True)
class Step:
    """One event of the narrative. ``kind`` is ``message`` or ``tool_call``; ``label`` the message
    class or tool name; ``relation`` how its session relates to the hit's (``hit`` = the hit's own
    session; ``parent``, ``child``, ``resumed_from``, ``resumed_as``); ``is_hit`` marks the
    search hit itself; ``turn`` is the turn number within its session (0 before the first
    prompt)."""

    kind: str
    id: int
    session_uid: str
    agent_id: str
    agent: str
    namespace: str | None
    ts: datetime | None
    label: str | None
    text: str
    source_path: str | None
    line_number: int | None
    byte_offset: int | None
    turn: int
    relation: str
    is_hit: bool = False
    outcome: str | None = None
    session_started_at: datetime | None = None

    def as_dict(self) -> dict:
        """JSON-ready form (surrogate id and sort key left out)."""
        d = asdict(self)
        for key in ("id", "session_started_at"):
            del d[key]
        return {k: v for k, v in d.items() if v is not None and v is not False}


@dataclass(slots=True)
class Recall:
    """The narrative and what it came from."""

    query: str
    hits: list[SearchHit]
    steps: list[Step] = field(default_factory=list)
    truncated: bool = False
    mode: str = "keyword"
    note: str | None = None

    def as_dict(self) -> dict:
        """JSON-ready form."""
        return {
            "query": self.query,
            "mode": self.mode,
            **({"note": self.note} if self.note else {}),
            "hits": len(self.hits),
            "truncated": self.truncated,
            "steps": [s.as_dict() for s in self.steps],
        }


_EVENTS_SQL = """
WITH ev AS (
    SELECT 'message' AS kind, m.id, m.ts, m.message_class AS label, m.text AS text, NULL::text AS outcome,
           m.source_id, m.byte_offset, m.line_number, (m.message_class = 'human_prompt') AS is_prompt
    FROM ah.message AS m WHERE m.session_id = %(sid)s
    UNION ALL
    SELECT 'tool_call', t.id, t.started_at, t.name,
           concat_ws(E'\\n', left(t.input::text, 300), coalesce(t.error_excerpt, t.output)),
           coalesce(t.error_class, t.outcome), t.source_id, t.byte_offset, t.line_number, false
    FROM ah.tool_call AS t WHERE t.session_id = %(sid)s
)
SELECT ev.kind, ev.id, ev.ts, ev.label, left(ev.text, %(chars)s), ev.outcome, f.path, ev.byte_offset,
       ev.line_number,
       sum(ev.is_prompt::int) OVER (ORDER BY ev.source_id, ev.byte_offset, ev.kind, ev.id) AS turn
FROM ev LEFT JOIN ah.source_file AS f ON f.id = ev.source_id
ORDER BY ev.source_id, ev.byte_offset, ev.kind, ev.id
"""

_SESSION_SQL = (
    "SELECT s.id, s.agent, s.session_uid, s.agent_id, s.namespace, s.started_at, s.parent_session_id, "
    "s.forked_from_uid FROM ah.session AS s WHERE "
)


@dataclass(frozen=True, slots=True)
class _Session:
    id: int
    agent: str
    session_uid: str
    agent_id: str
    namespace: str | None
    started_at: datetime | None
    parent_id: int | None
    forked_from_uid: str | None


def _session(conn: psycopg.Connection, where: str, params: dict) -> list[_Session]:
    rows = conn.execute(
        _SESSION_SQL
        + where
        + f" AND s.id <> ALL(ARRAY({EXCLUDED_SESSION_IDS})) ORDER BY s.started_at NULLS LAST, s.id",
        params,
    ).fetchall()
    return [_Session(*r) for r in rows]


def _events(conn: psycopg.Connection, s: _Session, relation: str, chars: int) -> list[Step]:
    rows = conn.execute(_EVENTS_SQL, {"sid": s.id, "chars": chars}).fetchall()
    return [
        Step(kind=r[0], id=r[1], session_uid=s.session_uid, agent_id=s.agent_id, agent=s.agent, namespace=s.namespace,
             ts=r[2], label=r[3], text=(r[4] or "").strip(), outcome=r[5], source_path=r[6], byte_offset=r[7],
             line_number=r[8], turn=int(r[9]), relation=relation, session_started_at=s.started_at)
        for r in rows
    ]  # fmt: skip


def linked_sessions(conn: psycopg.Connection, s: _Session, limit: int) -> list[tuple[_Session, str]]:
    """Sessions linked to `s` by lineage, as ``(session, relation)``: ``parent`` (its
    parent_session_id), ``child`` (sessions whose parent it is), ``resumed_from`` (the session
    whose uid its forked_from_uid names) and ``resumed_as`` (sessions naming it in theirs)."""
    out: list[tuple[_Session, str]] = []
    if s.parent_id is not None:
        out += [(p, "parent") for p in _session(conn, "s.id = %(id)s", {"id": s.parent_id})]
    if s.forked_from_uid:
        out += [
            (p, "resumed_from")
            for p in _session(
                conn,
                "s.agent = %(a)s AND s.session_uid = %(u)s AND s.agent_id = ''",
                {"a": s.agent, "u": s.forked_from_uid},
            )
        ]
    out += [(c, "child") for c in _session(conn, "s.parent_session_id = %(id)s", {"id": s.id})]
    if s.agent_id == "":
        out += [
            (c, "resumed_as")
            for c in _session(
                conn, "s.agent = %(a)s AND s.forked_from_uid = %(u)s AND s.id <> %(id)s",
                {"a": s.agent, "u": s.session_uid, "id": s.id},
            )
        ]  # fmt: skip
    seen: set[int] = set()
    unique = []
    for linked, relation in out:
        if linked.id not in seen and linked.id != s.id:
            seen.add(linked.id)
            unique.append((linked, relation))
    return unique[:limit]


def _turn_window(events: list[Step], turn: int, per_turn: int, anchor: Step | None = None) -> list[Step]:
    """At most `per_turn` steps of `turn`: its prompt (when it starts with one) plus the steps
    nearest `anchor` (the hit: as many before as after, shifted at the turn's ends), or — without
    an anchor — the turn's last steps, where its outcome is."""
    steps = [e for e in events if e.turn == turn]
    if len(steps) <= per_turn:
        return steps
    head = [steps[0]] if steps[0].label == "human_prompt" else []
    body = steps[len(head) :]
    k = per_turn - len(head)
    if anchor is None or anchor not in body:
        return head + body[-k:]
    i = body.index(anchor)
    start = max(0, min(i - k // 2, len(body) - k))
    return head + body[start : start + k]


def expand(
    conn: psycopg.Connection, query: str, hits: list[SearchHit], bounds: RecallBounds = RecallBounds()
) -> Recall:
    """The narrative for `hits` (best first; the first `bounds.hits` are expanded). Raises
    psycopg errors unchanged."""
    recall = Recall(query, hits[: bounds.hits])
    steps: dict[tuple[str, int], Step] = {}
    for hit in recall.hits:
        found = _session(
            conn, "s.agent = %(a)s AND s.session_uid = %(u)s AND s.agent_id = %(i)s",
            {"a": hit.agent, "u": hit.session_uid, "i": hit.agent_id or ""},
        )  # fmt: skip
        if not found:
            continue
        own = found[0]
        events = _events(conn, own, "hit", bounds.text_chars)
        at = next((e for e in events if e.kind == hit.kind and e.id == hit.id), None)
        if at is None:
            continue
        at.is_hit = True
        for turn in range(at.turn - bounds.turns_before, at.turn + bounds.turns_after + 1):
            for e in _turn_window(events, turn, bounds.steps_per_turn, at if turn == at.turn else None):
                key = (e.kind, e.id)
                if key not in steps or e.is_hit:
                    steps[key] = e
        for linked, relation in linked_sessions(conn, own, bounds.linked_sessions):
            linked_events = _events(conn, linked, relation, bounds.text_chars)
            if not linked_events:
                continue
            turn_numbers = sorted({e.turn for e in linked_events})
            before = relation in ("parent", "resumed_from")
            turn = turn_numbers[-1] if before else turn_numbers[0]
            if not before and turn == 0 and len(turn_numbers) > 1:
                turn = turn_numbers[1]  # a later session's first prompt, not its preamble
            for e in _turn_window(linked_events, turn, bounds.steps_per_turn):
                steps.setdefault((e.kind, e.id), e)
    ordered = sorted(
        steps.values(),
        key=lambda e: (
            e.session_started_at is None,
            e.session_started_at or datetime.min,
            e.session_uid,
            e.agent_id,
            e.source_path or "",
            e.byte_offset if e.byte_offset is not None else -1,
            e.kind != "message",
            e.id,
        ),
    )
    recall.truncated = len(ordered) > bounds.max_steps
    recall.steps = ordered[: bounds.max_steps]
    return recall


def thread_recall(
    conn: psycopg.Connection, req, mode: str | None, settings, bounds: RecallBounds = RecallBounds()
) -> Recall:
    """Search with `req` (a `SearchRequest`: filters, exclusions and ranking as for `search`;
    its limit is replaced by `bounds.hits`) and `expand` the hits. Raises what
    `search.hybrid.run_search` raises (VectorUnavailable, AmbiguousSession)."""
    from dataclasses import replace

    from agent_history.search.hybrid import run_search

    result = run_search(conn, replace(req, limit=bounds.hits), mode, settings)
    recall = expand(conn, req.query, result.hits, bounds)
    recall.mode, recall.note = str(result.mode), result.note
    return recall
