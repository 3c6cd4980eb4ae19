"""`db.tables.sessions.mark_dirty` / `clear_dirty`, the one home of the ``ah.dirty_session``
marks set or cleared outside a pass (a LiteLLM usage fill, a failed rollup, a session delete):
one statement for any number of threads, a thread marked once however often it is named.
Real database; the marks read back from the table."""

from __future__ import annotations

from agent_history.db.tables import sessions


def marks(conn) -> list[int]:
    return [r[0] for r in conn.execute("SELECT session_id FROM ah.dirty_session ORDER BY 1").fetchall()]


def test_mark_dirty_marks_each_thread_once_and_clear_dirty_clears_only_those_named(db):
    with db.connect() as conn:
        sessions.mark_dirty(conn, [3, 1, 3])  # a repeat in one call
        sessions.mark_dirty(conn, [1, 2])  # one marked already
        assert marks(conn) == [1, 2, 3]
        sessions.clear_dirty(conn, [2, 99])  # 99 has no mark
        assert marks(conn) == [1, 3]
        sessions.mark_dirty(conn, [])
        sessions.clear_dirty(conn, [])
        assert marks(conn) == [1, 3]
