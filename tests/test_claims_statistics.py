"""`claims.resolve_owners` refreshes the statistics of ``ah.row_claim`` and ``ah.dirty_session``
before its statements when a pass left many sessions dirty (a cold ×100 load planned them on stale
statistics: ≈ 100 s instead of under 1), and adds nothing to a small pass."""

from __future__ import annotations

import psycopg

from agent_history.db.tables import claims
from tests.corpus_db import corpus_rw_db  # noqa: F401 - fixture


def _analyze_count(dsn: str) -> tuple[int, int]:
    with psycopg.connect(dsn) as conn:  # a new session: the shared statistics as they are now
        return conn.execute(
            "SELECT (SELECT analyze_count FROM pg_stat_user_tables WHERE relid = 'ah.row_claim'::regclass), "
            "(SELECT analyze_count FROM pg_stat_user_tables WHERE relid = 'ah.dirty_session'::regclass)"
        ).fetchone()


def _resolve_with_dirty(dsn: str, n: int) -> int:
    with psycopg.connect(dsn) as conn:
        conn.execute("DELETE FROM ah.dirty_session")
        conn.execute("INSERT INTO ah.dirty_session (session_id) SELECT id FROM ah.session ORDER BY id LIMIT %s", (n,))
        return claims.resolve_owners(conn)


def test_a_pass_with_many_dirty_sessions_analyzes_the_claim_tables_first(corpus_rw_db, monkeypatch):  # noqa: F811
    with psycopg.connect(corpus_rw_db.dsn) as conn:
        sessions = conn.execute("SELECT count(*) FROM ah.session").fetchone()[0]
    assert sessions >= 4
    monkeypatch.setattr(claims, "ANALYZE_AT_DIRTY", 4)  # the corpus has 34 sessions, not 200
    before = _analyze_count(corpus_rw_db.dsn)
    _resolve_with_dirty(corpus_rw_db.dsn, 3)  # below the threshold: no ANALYZE
    assert _analyze_count(corpus_rw_db.dsn) == before
    _resolve_with_dirty(corpus_rw_db.dsn, 4)  # at it: both tables analysed once
    assert _analyze_count(corpus_rw_db.dsn) == (before[0] + 1, before[1] + 1)
