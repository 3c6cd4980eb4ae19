"""What a search-quality evaluation reads beside the search (`evaluation.search`): the full text
of the hits it judges, and whether a labelled answer exists at all (a session holding the
substring in a conversational message or a tool call). Read-only."""

from __future__ import annotations

from collections.abc import Sequence

import psycopg

_DOC_SQL = {
    "message": "SELECT id, text FROM ah.message WHERE id = ANY(%s)",
    "tool_call": "SELECT id, concat_ws(E'\\n', name, input, output) FROM ah.tool_call WHERE id = ANY(%s)",
}
"""Hit kind → the statement reading its judged text: a message's text; a tool call's name,
input and output, one per line."""

HIT_KINDS: tuple[str, ...] = tuple(_DOC_SQL)
"""The hit kinds whose text `hit_texts` reads, in the order it reads them."""


def hit_texts(conn: psycopg.Connection, kind: str, ids: Sequence[int]) -> list[tuple[int, str | None]]:
    """(id, text) of the hits `ids` of `kind` (one of `HIT_KINDS`); text None when empty."""
    return conn.execute(_DOC_SQL[kind], (list(ids),)).fetchall()


def message_holds(conn: psycopg.Connection, session_uid: str, classes: Sequence[str], needle: str) -> bool:
    """Whether a message of a class in `classes` of session `session_uid` holds `needle`
    (case-insensitive substring)."""
    return conn.execute(
        "SELECT EXISTS (SELECT 1 FROM ah.message m JOIN ah.session s ON s.id = m.session_id "
        "WHERE s.session_uid = %s AND m.message_class = ANY(%s) AND strpos(lower(m.text), lower(%s)) > 0)",
        (session_uid, list(classes), needle),
    ).fetchone()[0]


def tool_call_holds(conn: psycopg.Connection, session_uid: str, needle: str) -> bool:
    """Whether a tool call of session `session_uid` holds `needle` in its name, input or output
    (case-insensitive substring)."""
    return conn.execute(
        "SELECT EXISTS (SELECT 1 FROM ah.tool_call t JOIN ah.session s ON s.id = t.session_id "
        "WHERE s.session_uid = %s AND strpos(lower(concat_ws(E'\\n', t.name, t.input, t.output)), lower(%s)) > 0)",
        (session_uid, needle),
    ).fetchone()[0]
