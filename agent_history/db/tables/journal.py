"""journal-sync's statements (issue 15, `journal.sync`): its cursor and instance keys in
``ah.meta``, the summaries (``ah.session_summary``) upserted from the staged export
(``journal_in``, a temporary table staged by `stage`), their topics
(``ah.session_topic``), the prune, the link to sessions, the pass record
(``ah.journal_sync_run``); and the reads of `status`'s journal line (`journal.status`).
The caller owns the pass transaction; nothing here commits."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import psycopg
from psycopg.types.json import Jsonb


def sync_meta(conn: psycopg.Connection) -> dict[str, str]:
    """journal-sync's ``ah.meta`` entries (keys ``journal_sync:…``) with a value: key → value."""
    rows = conn.execute("SELECT key, value FROM ah.meta WHERE starts_with(key, 'journal_sync:')").fetchall()
    return {k: v for k, v in rows if v is not None}


def set_meta(conn: psycopg.Connection, key: str, value: str) -> None:
    """Upsert ``ah.meta`` `key` = `value`."""
    conn.execute(
        "INSERT INTO ah.meta (key, value) VALUES (%s, %s) "
        "ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, updated_at = now()",
        (key, value),
    )


def wipe_summaries(conn: psycopg.Connection) -> int:
    """Delete every summary (their topics go with them); returns how many."""
    return conn.execute("DELETE FROM ah.session_summary").rowcount


def stage(conn: psycopg.Connection, stage_columns: Sequence[str], rows: Iterable[tuple]) -> None:
    """Create the temporary table ``journal_in`` (`stage_columns` as text, then ``topics``
    jsonb; dropped at commit) and COPY `rows` into it (each: the `stage_columns` values, then the
    topics as a JSON array text)."""
    cols = ", ".join(stage_columns)
    conn.execute(
        f"CREATE TEMP TABLE journal_in ({', '.join(f'{c} text' for c in stage_columns)}, topics jsonb) ON COMMIT DROP"
    )
    with conn.cursor().copy(f"COPY journal_in ({cols}, topics) FROM STDIN") as copy:
        for row in rows:
            copy.write_row(row)


def upsert_staged(
    conn: psycopg.Connection, stage_columns: Sequence[str], text_columns: Sequence[str]
) -> list[tuple[int, str, bool]]:
    """Insert the staged rows of ``journal_in`` (columns `stage_columns`: conversation id first,
    ``analysed_at`` as ISO text, then `text_columns`) into ``ah.session_summary``, replacing a
    summary only by a newer ``analysed_at``; returns (id, journal_conversation_id, inserted) of
    each row written (inserted False: updated)."""
    cols = ", ".join(stage_columns)
    updates = ", ".join(f"{c} = EXCLUDED.{c}" for c in stage_columns[1:])
    return conn.execute(
        f"""
        WITH up AS (
            INSERT INTO ah.session_summary ({cols})
            SELECT journal_conversation_id, agent, session_uid, agent_id, analysed_at::timestamptz,
                   app_instance_id, {", ".join(text_columns)}
            FROM journal_in
            ON CONFLICT (journal_conversation_id) DO UPDATE SET {updates}, synced_at = now()
            WHERE ah.session_summary.analysed_at < EXCLUDED.analysed_at
            RETURNING id, journal_conversation_id, (xmax = 0) AS inserted
        )
        SELECT id, journal_conversation_id, inserted FROM up
        """
    ).fetchall()


def replace_topics(conn: psycopg.Connection, ids: list[int]) -> int:
    """Replace the topics of summaries `ids` with their staged ones (``journal_in.topics``, in
    order); returns topics written."""
    conn.execute("DELETE FROM ah.session_topic WHERE summary_id = ANY(%s)", (ids,))
    return conn.execute(
        "INSERT INTO ah.session_topic (summary_id, position, topic) "
        "SELECT ss.id, t.ord - 1, t.topic FROM ah.session_summary ss "
        "JOIN journal_in j ON j.journal_conversation_id = ss.journal_conversation_id "
        "CROSS JOIN LATERAL jsonb_array_elements_text(j.topics) WITH ORDINALITY AS t(topic, ord) "
        "WHERE ss.id = ANY(%s)",
        (ids,),
    ).rowcount


def prune_unstaged(conn: psycopg.Connection) -> int:
    """Delete the summaries whose conversation is not staged (a full pass); returns how many."""
    return conn.execute(
        "DELETE FROM ah.session_summary ss WHERE NOT EXISTS "
        "(SELECT 1 FROM journal_in j WHERE j.journal_conversation_id = ss.journal_conversation_id)"
    ).rowcount


def link_summaries(conn: psycopg.Connection) -> int:
    """Link summaries to their sessions by natural key (``ah.link_session_summaries``); returns
    how many were linked."""
    return conn.execute("SELECT ah.link_session_summaries()").fetchone()[0]


def start_run(conn: psycopg.Connection) -> int:
    """Record a pass starting (status ``running``); returns its ``ah.journal_sync_run.id``."""
    return conn.execute("INSERT INTO ah.journal_sync_run DEFAULT VALUES RETURNING id").fetchone()[0]


def finish_run(
    conn: psycopg.Connection,
    run_id: int,
    *,
    status: str,
    full_pass: bool,
    skip_reason: str | None,
    rows_read: int,
    rows_written: int,
    summary: dict,
) -> None:
    """Record pass `run_id`'s end now: its status, kind, skip reason, rows read and written and
    its summary (JSON object)."""
    conn.execute(
        "UPDATE ah.journal_sync_run SET finished_at = now(), status = %s, full_pass = %s, skip_reason = %s, "
        "rows_read = %s, rows_written = %s, summary = %s WHERE id = %s",
        (status, full_pass, skip_reason, rows_read, rows_written, Jsonb(summary), run_id),
    )


# --- `status` (journal.status) -------------------------------------------------------------------
def has_sync_runs(conn: psycopg.Connection) -> bool:
    """Whether ``ah.journal_sync_run`` exists (migration 0008_journal)."""
    return conn.execute("SELECT to_regclass('ah.journal_sync_run')").fetchone()[0] is not None


def summaries_held(conn: psycopg.Connection) -> tuple[int, int, int]:
    """(summaries, summaries linked to a session, topics)."""
    summaries, linked = conn.execute("SELECT count(*), count(session_id) FROM ah.session_summary").fetchone()
    topics = conn.execute("SELECT count(*) FROM ah.session_topic").fetchone()[0]
    return summaries, linked, topics


def last_finished_run(conn: psycopg.Connection) -> tuple | None:
    """(finished_at, status, skip_reason, full_pass, rows_read, rows_written, message, seconds as
    Decimal) of the newest pass that recorded its end; None before the first."""
    return conn.execute(
        "SELECT finished_at, status, skip_reason, full_pass, rows_read, rows_written, summary->>'message', "
        "extract(epoch FROM finished_at - started_at) "
        "FROM ah.journal_sync_run WHERE finished_at IS NOT NULL ORDER BY id DESC LIMIT 1"
    ).fetchone()
