"""Which session owns a row two sessions share (docs/design.md §7 "Message uids reused by
another session"; migration 0026_owner).

Event rows merge by natural key ``(agent, <uid>)``. A Claude Code resume re-emits records — same
``uuid``, same ``message.id``, tool-use ids — under the new ``sessionId``, so the resumed
session's file holds copies of the original's messages, model calls, tool calls and turns; the
copies merge into one row, counted once. The merge keeps the first stored session, which made
ownership depend on reading order (bulk vs incremental, file names, `rebuild`'s namespace
order). So the writer records in ``ah.row_claim`` every session that holds a merged row (with
where its copy sits), and the post-pass (`resolve_owners`, before the rollup) gives each claimed
row to the **owner**: the claiming session that started first, then ended first, then the
smaller ``(session_uid, agent_id)`` — NULL times last. A resume copies the original's records
with their timestamps, so both sessions start together; the original ended before its resume
went on, so it ends first and keeps its messages. The row takes the owner's copy's file, byte
offset and line (and, for messages, its namespace); both sessions are rolled up again.
A copy whose content differs (a `uid_conflict`, `merges.CONTENT_COLUMNS`) never merges and
never claims. A session left holding copies another session owns gets one informational
``rows_shared`` parse issue at its own position, naming the owner and the counts
(`record_shared_issues`; `read.shared` says the same in `session` and `usage`). Limit: a session whose times tie another's in full (a byte-identical copy under
another session id) loses or wins by its uid.
"""

from __future__ import annotations

from functools import cache

import psycopg

from agent_history.db.tables.merges import CONTENT_COLUMNS, EVENT_TYPES, key_match, same_content, staging_name
from agent_history.model.rows import Row

_POSITION = ("source_id", "byte_offset", "line_number")


@cache
def claim_sql(row_type: type[Row]) -> str:
    """Record claims for the staged rows of `row_type` whose stored row belongs to another
    session: the stored owner's (with the stored position) and the staged session's (with its
    copy's position); sessions with a new claim are marked dirty (the post-pass resolves them).
    Run after the type's merge; returns nothing."""
    table, stg = row_type.TABLE, staging_name(row_type)
    on = key_match(row_type, "t", lambda c: f"s.{c}")
    same = f" AND {same_content(row_type, 't', 's')}" if row_type in CONTENT_COLUMNS else ""
    return (
        f"WITH m AS (SELECT t.id, t.session_id AS owner, t.source_id AS o_source, t.byte_offset AS o_offset, "
        "t.line_number AS o_line, ses.id AS claimant, s.source_id, s.byte_offset, s.line_number "
        f"FROM {stg} s JOIN ah.session ses ON ses.agent = s.agent AND ses.session_uid = s.session_uid "
        f"AND ses.agent_id = s.agent_id JOIN ah.{table} t ON {on} WHERE t.session_id <> ses.id{same}) "
        ", ins AS (INSERT INTO ah.row_claim (row_table, row_id, session_id, source_id, byte_offset, line_number) "
        f"SELECT '{table}', id, owner, o_source, o_offset, o_line FROM m "
        f"UNION ALL SELECT '{table}', id, claimant, source_id, byte_offset, line_number FROM m "
        "ON CONFLICT DO NOTHING RETURNING session_id) "
        "INSERT INTO ah.dirty_session (session_id) SELECT DISTINCT session_id FROM ins ON CONFLICT DO NOTHING"
    )


@cache
def fold_claim_sql(row_type: type[Row]) -> str:
    """Record one claim named by natural key and session key (rows of two sessions folded into
    one within a batch, `ingest.writer`); parameters: source_id, byte_offset, line_number,
    agent, session_uid, agent_id, then the key columns."""
    table = row_type.TABLE
    # the key's values named once (`key_match` may compare a value twice: digest, then text)
    cols = row_type.key_columns()
    key = ", ".join(f"%s::text AS {c}" for c in cols)
    on = key_match(row_type, "t", lambda c: f"k.{c}")
    return (
        "INSERT INTO ah.row_claim (row_table, row_id, session_id, source_id, byte_offset, line_number) "
        f"SELECT '{table}', t.id, ses.id, %s, %s, %s FROM ah.{table} t JOIN ah.session ses "
        f"ON ses.agent = %s AND ses.session_uid = %s AND ses.agent_id = %s CROSS JOIN (SELECT {key}) AS k "
        f"WHERE {on} ON CONFLICT DO NOTHING"
    )


def claim_params(row: Row, source_id: int) -> tuple:
    """`fold_claim_sql` parameters for `row` read from `source_id`."""
    keys = tuple(getattr(row, c) for c in type(row).key_columns())
    pos = (source_id, getattr(row, "byte_offset", None), getattr(row, "line_number", None))
    return (*pos, row.agent, row.session_uid, row.agent_id, *keys)  # type: ignore[attr-defined]


@cache
def resolve_sql(row_type: type[Row]) -> str:
    """Give each claimed row of `row_type` that a dirty session claims to its owner (module
    docstring), with the owner's position; mark the sessions it left and joined dirty."""
    table = row_type.TABLE
    moved = list(_POSITION) + (["namespace"] if row_type.TABLE == "message" else [])
    pick = ", ".join(f"w.{c}" for c in moved)
    return f"""
WITH claimed AS (
    SELECT DISTINCT c.row_id FROM ah.row_claim c JOIN ah.dirty_session d ON d.session_id = c.session_id
    WHERE c.row_table = '{table}'
), win AS (
    SELECT DISTINCT ON (c.row_id) c.row_id, c.session_id, c.source_id, c.byte_offset, c.line_number, s.namespace
    FROM ah.row_claim c JOIN claimed USING (row_id) JOIN ah.session s ON s.id = c.session_id
    WHERE c.row_table = '{table}'
    ORDER BY c.row_id, s.started_at NULLS LAST, s.ended_at NULLS LAST, s.session_uid, s.agent_id
), old AS (
    SELECT t.id, t.session_id FROM ah.{table} t JOIN win w ON w.row_id = t.id
    WHERE (t.session_id, {", ".join(f"t.{c}" for c in moved)}) IS DISTINCT FROM (w.session_id, {pick})
), upd AS (
    UPDATE ah.{table} t SET session_id = w.session_id, {", ".join(f"{c} = w.{c}" for c in moved)}
    FROM win w JOIN old o ON o.id = w.row_id WHERE t.id = w.row_id
    RETURNING t.id, t.session_id
)
INSERT INTO ah.dirty_session (session_id)
SELECT session_id FROM upd UNION SELECT o.session_id FROM old o JOIN upd USING (id)
ON CONFLICT (session_id) DO NOTHING
"""


ANALYZE_AT_DIRTY = 200
"""Dirty sessions from which `resolve_owners` first runs ``ANALYZE`` on ``ah.row_claim`` and
``ah.dirty_session``: a large pass fills both after autovacuum last looked, and planned on those
stale statistics (a few rows) the resolve statements of a cold ×100 load ran ≈ 100 s instead of
under 1 (2026-12-02, 3,301 dirty sessions, 64,400 claims: nested loops over what the planner took
for empty tables; the same plan flip cost ≈ 24 s at ×30). The ``ANALYZE`` of both at ×100: tens
of ms. Below the threshold (a hook's pass, a few sessions) nothing is added."""


def resolve_owners(conn: psycopg.Connection) -> int:
    """Re-decide the owner of every shared row a dirty session claims (`resolve_sql` per event
    table); runs in the caller's transaction, before the rollup reads the dirty set. Nothing runs
    when no session is dirty (a pass with no changes: 8 statements, ≈ 15 ms of server CPU, saved);
    with `ANALYZE_AT_DIRTY` or more, both tables' statistics are refreshed first.
    Returns the ``rows_shared`` issues it added (`record_shared_issues`)."""
    dirty = conn.execute(
        "SELECT CASE WHEN to_regclass('ah.row_claim') IS NULL THEN 0 "
        "ELSE (SELECT count(*) FROM (SELECT 1 FROM ah.dirty_session LIMIT %s) d) END",
        (ANALYZE_AT_DIRTY,),
    ).fetchone()[0]
    if not dirty:
        return 0
    if dirty >= ANALYZE_AT_DIRTY:
        conn.execute("ANALYZE ah.row_claim, ah.dirty_session")
    for row_type in EVENT_TYPES:
        conn.execute(resolve_sql(row_type))
    return record_shared_issues(conn)


def shared_phrase(model_calls: int, messages: int, owner: str) -> str:
    """``36 model calls / 59 messages shared with session <owner> (counted there)``: what a
    session's transcript holds that session `owner` (``uid`` or ``uid/agent id``) owns."""

    def n(k: int, noun: str) -> str:
        return f"{k:,} {noun if k == 1 else noun + 's'}"

    return f"{n(model_calls, 'model call')} / {n(messages, 'message')} shared with session {owner} (counted there)"


# Per dirty session (with a source file) and owner: the messages and model calls it claims that
# the owner holds. Grouped here, so a copy of 10,000 rows makes one line, not 10,000.
_SHARED_PER_OWNER_SQL = """
WITH d AS (
    SELECT s.id, s.source_id, coalesce(s.byte_offset, 0) AS byte_offset, s.line_number
    FROM ah.dirty_session AS ds JOIN ah.session AS s ON s.id = ds.session_id
    WHERE s.source_id IS NOT NULL
), lost AS (
    SELECT d.id, 'message' AS row_table, m.session_id AS owner FROM d
    JOIN ah.row_claim AS c ON c.session_id = d.id AND c.row_table = 'message'
    JOIN ah.message AS m ON m.id = c.row_id AND m.session_id <> d.id
    UNION ALL
    SELECT d.id, 'model_call', mc.session_id FROM d
    JOIN ah.row_claim AS c ON c.session_id = d.id AND c.row_table = 'model_call'
    JOIN ah.model_call AS mc ON mc.id = c.row_id AND mc.session_id <> d.id
)
SELECT d.source_id, d.byte_offset, d.line_number, o.session_uid || coalesce('/' || nullif(o.agent_id, ''), ''),
       count(*) FILTER (WHERE l.row_table = 'model_call'), count(*) FILTER (WHERE l.row_table = 'message')
FROM lost AS l JOIN d ON d.id = l.id JOIN ah.session AS o ON o.id = l.owner
GROUP BY d.id, d.source_id, d.byte_offset, d.line_number, o.id, o.session_uid, o.agent_id
ORDER BY d.id, 5 DESC, 6 DESC, 4
"""


def record_shared_issues(conn: psycopg.Connection) -> int:
    """One ``rows_shared`` parse issue per dirty session whose transcript holds messages or model
    calls another session owns, on its source file at its byte offset: the owners and counts
    (`shared_phrase`, ``; ``-joined when several). Informational: nothing is lost, the rows are
    counted in their owner. A dirty session's previous such issue is replaced (gone when it
    now owns all it holds). Runs in the caller's transaction, after the owners are resolved.
    Returns the issues added that were not there before the call (the pass counts them as new
    ``parse_issue`` rows)."""
    before = {
        tuple(r)
        for r in conn.execute(
            "DELETE FROM ah.parse_issue AS p USING ah.dirty_session AS d JOIN ah.session AS s ON s.id = d.session_id "
            "WHERE p.kind = 'rows_shared' AND p.source_id = s.source_id AND p.byte_offset = coalesce(s.byte_offset, 0) "
            "RETURNING p.source_id, p.byte_offset"
        )
    }
    per_session: dict[tuple[int, int], tuple[int | None, list[str]]] = {}
    for source_id, offset, line, owner, calls, messages in conn.execute(_SHARED_PER_OWNER_SQL):
        per_session.setdefault((source_id, offset), (line, []))[1].append(shared_phrase(calls, messages, owner))
    if per_session:
        with conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO ah.parse_issue (source_id, kind, byte_offset, line_number, detail) "
                "VALUES (%s, 'rows_shared', %s, %s, %s) ON CONFLICT (source_id, kind, byte_offset) "
                "DO UPDATE SET detail = EXCLUDED.detail, created_at = now()",
                [(src, off, line, "; ".join(parts)) for (src, off), (line, parts) in per_session.items()],
            )
    return len(per_session.keys() - before)
