"""`search.filters.build_filter`'s two forms of the class filter select the same messages."""

from __future__ import annotations

from psycopg import sql

from agent_history.model import classes
from agent_history.search.filters import build_filter
from agent_history.search.request import SearchRequest
from tests.corpus_db import corpus_db  # noqa: F401 - fixture


def _count(conn, flt) -> int:
    stmt = sql.SQL("SELECT count(*) FROM ah.message AS d WHERE {}").format(flt.sql)
    return conn.execute(stmt, flt.params).fetchone()[0]


def test_the_broad_class_filter_kept_from_the_index_selects_the_same_messages(corpus_db):  # noqa: F811
    """The default (every conversational class) is written ``(message_class || '') = ANY(…)`` for
    the FTS scans (no index can serve it: the planner ANDed ≈ 790 k rows of ``message_class_idx``
    into the GIN bitmap at 1 M messages); a narrower set keeps the indexable form. Both select
    the same rows."""
    default, prompts = SearchRequest("x"), SearchRequest("x", classes=classes.PROMPTS)
    with corpus_db.connect() as conn:
        forms = {}
        for name, req in (("default", default), ("prompts", prompts)):
            plain = build_filter(req, "message")
            kept = build_filter(req, "message", broad_class_index=False)
            forms[name] = (plain.sql.as_string(conn).split(" AND ")[0], kept.sql.as_string(conn).split(" AND ")[0])
            assert _count(conn, plain) == _count(conn, kept)
        counts = (_count(conn, build_filter(default, "message")), _count(conn, build_filter(prompts, "message")))
    assert forms["default"] == (
        '"d".message_class = ANY(%(f_classes)s)',
        "(\"d\".message_class || '') = ANY(%(f_classes)s)",
    )
    assert forms["prompts"][0] == forms["prompts"][1] == '"d".message_class = ANY(%(f_classes)s)'
    assert counts == (1140, 274)
