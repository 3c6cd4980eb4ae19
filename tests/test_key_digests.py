"""The message, tool-call and model-call natural keys as unique indexes on ``(agent,
ah.key_digest(uid))`` (migration 0030_key_digests, `db.tables.merges.KEY_DIGESTS`): the uid stays
stored as text, the key's B-tree holds its 16-byte digest. A lookup by uid uses that index only
when it compares digests too — a missed one is a silent sequential scan of the table (1 M rows at
the scale of issue 27) — so every lookup by uid of the readers, the post-pass and the loader's
claims runs here on the corpus catalogue under ``auto_explain`` with sequential scans disabled,
and its plan must read the table through its natural key. The migration, down and up on the
indexed corpus, gives the same rows and the same answers."""

from __future__ import annotations

import re
from collections.abc import Callable

import psycopg
import pytest

from agent_history.db.migrate import downgrade, upgrade
from agent_history.db.tables.claims import claim_params, fold_claim_sql
from agent_history.db.tables.merges import EVENT_TYPES, KEY_DIGESTS, key_match
from agent_history.model.rows import MessageRow, ModelCallRow, ToolCallRow
from agent_history.read.blame import _writing_calls
from agent_history.read.why import why
from agent_history.search.vector import find_message
from tests.corpus_db import corpus_db, corpus_rw_db  # noqa: F401 - fixture

EXPRESSION_KEYS = {MessageRow: "message_uid", ToolCallRow: "tool_call_uid", ModelCallRow: "call_uid"}


def _plans(conn: psycopg.Connection, call: Callable[[], object]) -> list[str]:
    """The plans of every statement `call` runs on `conn` (nested ones too: plpgsql bodies),
    sequential scans disabled — the planner then reads a table by an index whenever one fits."""
    plans: list[str] = []

    def keep(diag: psycopg.errors.Diagnostic) -> None:
        if diag.message_primary and "Query Text:" in diag.message_primary:
            plans.append(diag.message_primary)

    conn.execute("LOAD 'auto_explain'")
    for setting, value in (
        ("auto_explain.log_min_duration", "0"),
        ("auto_explain.log_nested_statements", "on"),
        ("client_min_messages", "log"),
        ("enable_seqscan", "off"),
    ):
        conn.execute("SELECT set_config(%s, %s, false)", (setting, value))
    conn.add_notice_handler(keep)
    try:
        call()
        # the last statement's plan is logged when its portal is dropped: at the next statement
        conn.execute("SELECT 1")
    finally:
        conn.remove_notice_handler(keep)
        conn.execute("RESET client_min_messages")
        conn.execute("RESET enable_seqscan")
        conn.execute("RESET auto_explain.log_min_duration")
    return plans


def _reads_by_key(plans: list[str], table: str) -> list[str]:
    """The plans that look `table` up by a uid's digest; each must read it through its natural key."""
    by_digest = [p for p in plans if re.search(rf"Seq Scan on {table}\b|{table}_natural_key", p)]
    for plan in by_digest:
        assert f"Seq Scan on {table} " not in plan, plan
        # the index searched by the digest, not only by its leading column (`agent`: all the agent's rows)
        scan = re.search(
            rf"(Index Scan|Index Only Scan|Bitmap Index Scan) (using|on) {table}_natural_key.*?\n\s*Index Cond: ([^\n]*)",
            plan,
            re.S,
        )
        assert scan and "key_digest(" in scan.group(3), plan
    return by_digest


def test_the_three_natural_keys_are_expression_keys_on_the_uid_digest():
    assert {t: d for t, d in KEY_DIGESTS.items() if t in EXPRESSION_KEYS} == {
        t: {c: c} for t, c in EXPRESSION_KEYS.items()
    }
    assert key_match(ToolCallRow, "t", lambda c: f"g.{c}") == (
        "t.agent = g.agent AND ah.key_digest(t.tool_call_uid) = ah.key_digest(g.tool_call_uid) "
        "AND t.tool_call_uid = g.tool_call_uid"
    )


def test_why_reads_the_commits_tool_call_by_its_natural_key(corpus_db):  # noqa: F811
    with corpus_db.connect() as conn:
        (sha,) = conn.execute(
            "SELECT g.sha FROM ah.git_event g JOIN ah.tool_call t ON t.tool_call_uid = g.tool_call_uid "
            "WHERE g.op = 'commit' AND g.sha IS NOT NULL ORDER BY g.id LIMIT 1"
        ).fetchone()
        found: list = []
        plans = _plans(conn, lambda: found.extend(why(conn, sha)))
    assert found and all(o.tool_name for o in found if o.sha == sha)
    assert len(_reads_by_key(plans, "tool_call")) == 1


def test_blame_reads_the_writing_tool_calls_by_their_natural_key(corpus_db):  # noqa: F811
    with corpus_db.connect() as conn:
        (path,) = conn.execute(
            "SELECT f.path FROM ah.file_touch f WHERE f.op IN ('create', 'edit') ORDER BY f.id LIMIT 1"
        ).fetchone()
        found: list = []
        plans = _plans(conn, lambda: found.extend(_writing_calls(conn, [path], [])))
    assert found
    assert len(_reads_by_key(plans, "tool_call")) == 1


def test_a_vector_search_reference_finds_its_message_by_the_natural_key(corpus_db):  # noqa: F811
    with corpus_db.connect() as conn:
        expected, uid = conn.execute("SELECT id, message_uid FROM ah.message ORDER BY id DESC LIMIT 1").fetchone()
        found: list = []
        plans = _plans(conn, lambda: found.append(find_message(conn, uid)))
        missing = find_message(conn, "no-such-message")
    assert (found, missing) == ([expected], None)
    assert len(_reads_by_key(plans, "message")) == 1


def test_the_post_pass_finds_a_summarys_leaf_by_the_natural_key(corpus_db):  # noqa: F811
    with corpus_db.connect() as conn:
        sessions = [
            r[0]
            for r in conn.execute(
                "SELECT DISTINCT sm.session_id FROM ah.message sm JOIN ah.message leaf "
                "ON leaf.agent = sm.agent AND leaf.message_uid = sm.parent_uid WHERE sm.message_uid LIKE 'summary:%'"
            )
        ]
        assert sessions  # the corpus holds summaries whose leaf is stored
        plans = _plans(conn, lambda: conn.execute("SELECT ah.refresh_sessions(%s)", (sessions,)))
        conn.rollback()
    leaf = [p for p in plans if "sm.parent_uid" in p and "Query Text:" in p and "AS leaf ON" in p]
    assert len(leaf) == 1
    assert _reads_by_key(leaf, "message") == leaf


@pytest.mark.parametrize("row_type", list(EXPRESSION_KEYS), ids=lambda t: t.TABLE)
def test_a_claim_of_a_row_folded_in_a_batch_finds_the_row_by_its_natural_key(corpus_db, row_type):  # noqa: F811
    table, uid = row_type.TABLE, EXPRESSION_KEYS[row_type]
    with corpus_db.connect() as conn:
        row_id, agent, key, session_uid, agent_id, source_id = conn.execute(
            f"SELECT t.id, t.agent, t.{uid}, s.session_uid, s.agent_id, t.source_id "
            f"FROM ah.{table} t JOIN ah.session s ON s.id = t.session_id ORDER BY t.id LIMIT 1"
        ).fetchone()
        row = row_type(
            **{**_blank(row_type), "agent": agent, uid: key, "session_uid": session_uid, "agent_id": agent_id}
        )
        params = claim_params(row, source_id)
        plans = _plans(conn, lambda: conn.execute(fold_claim_sql(row_type), params))
        claimed = conn.execute(
            "SELECT row_id FROM ah.row_claim WHERE row_table = %s AND source_id = %s AND row_id = %s",
            (table, source_id, row_id),
        ).fetchall()
        conn.rollback()
    assert claimed == [(row_id,)]
    assert len(_reads_by_key(plans, table)) == 1


def _blank(row_type: type) -> dict:
    """Every field of `row_type` None (the claim reads only its key, session and position)."""
    import dataclasses

    return {f.name: None for f in dataclasses.fields(row_type)}


def test_only_the_three_keys_changed_form():
    # the other event keys keep their form: the touch key its digest column, the rest their text
    assert {t.TABLE: KEY_DIGESTS.get(t) for t in EVENT_TYPES if t not in EXPRESSION_KEYS} == {
        "turn": None,
        "subagent_spawn": None,
        "compaction": None,
        "file_touch": {"touch_uid": "touch_key"},
        "git_event": None,
    }


ROWS = {
    "message": "SELECT id, agent, message_uid, session_id, source_id, byte_offset, text FROM ah.message ORDER BY id",
    "tool_call": "SELECT id, agent, tool_call_uid, session_id, source_id, name, input, terms FROM ah.tool_call ORDER BY id",
    "model_call": "SELECT id, agent, call_uid, session_id, source_id, byte_offset FROM ah.model_call ORDER BY id",
}


def _answers(conn: psycopg.Connection) -> tuple:
    """`why` of every commit or push sha the catalogue holds, and the message each uid finds."""
    shas = [r[0] for r in conn.execute("SELECT DISTINCT sha FROM ah.git_event WHERE sha IS NOT NULL ORDER BY 1")]
    uids = [r[0] for r in conn.execute("SELECT message_uid FROM ah.message ORDER BY id LIMIT 200")]
    return {sha: [o.as_dict() for o in why(conn, sha)] for sha in shas}, [find_message(conn, u) for u in uids]


def _key_forms(conn: psycopg.Connection) -> dict[str, str]:
    return dict(
        conn.execute(
            "SELECT c.relname, pg_get_indexdef(c.oid) FROM pg_class c WHERE c.relnamespace = 'ah'::regnamespace "
            "AND c.relname IN ('message_natural_key', 'tool_call_natural_key', 'model_call_natural_key')"
        ).fetchall()
    )


def test_the_migration_down_and_up_keeps_the_rows_and_the_answers(corpus_rw_db):  # noqa: F811
    db = corpus_rw_db  # the corpus indexed at head
    with db.connect() as conn:
        at_head = {t: conn.execute(q).fetchall() for t, q in ROWS.items()}
        answers = _answers(conn)
        keys = _key_forms(conn)
    assert keys["message_natural_key"].endswith("(agent, ah.key_digest(message_uid))")
    assert sum(len(v) for v in answers[0].values()) > 0 and all(answers[1])
    downgrade(db.dsn, "0029_touch_keys")
    with db.connect() as conn:
        assert {t: conn.execute(q).fetchall() for t, q in ROWS.items()} == at_head
        assert _answers(conn) == answers
        assert _key_forms(conn)["tool_call_natural_key"].endswith("(agent, tool_call_uid)")
        constraints = conn.execute(
            "SELECT count(*) FROM pg_constraint WHERE contype = 'u' AND conname = ANY(%s)", (list(keys),)
        ).fetchone()
        assert constraints == (3,)
    upgrade(db.dsn)
    with db.connect() as conn:
        assert {t: conn.execute(q).fetchall() for t, q in ROWS.items()} == at_head
        assert _answers(conn) == answers
        assert _key_forms(conn) == keys
