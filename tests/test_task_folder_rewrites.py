"""Whole documents the new harnesses rewrite in place, through the real loader and embedded
PostgreSQL: a Cline task folder whose last request is filled in after the fact and whose last UI
record changes its ``ts``, one file of a folder re-read alone, and a ChatGPT export re-read
incrementally by ``update_time``."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import psycopg

from agent_history.ingest.discovery import Source
from agent_history.ingest.loader import Loader
from tests.repo_sample_homes import CHATGPT, XML_TASK_ID, cline_layout


def _pass(conn, sources: list[Source]):
    return Loader(conn).run(sources)


def _calls(conn) -> list[tuple]:
    return conn.execute(
        "SELECT c.call_uid, c.input_uncached, c.output, c.recorded_cost_usd::float8 FROM ah.model_call c "
        "JOIN ah.session s ON s.id = c.session_id WHERE s.session_uid = %s ORDER BY c.ts",
        (XML_TASK_ID,),
    ).fetchall()


def _counts(conn) -> tuple:
    return conn.execute(
        "SELECT (SELECT count(*) FROM ah.message), (SELECT count(*) FROM ah.tool_call), "
        "(SELECT count(*) FROM ah.model_call), (SELECT count(*) FROM ah.compaction), (SELECT count(*) FROM ah.session)"
    ).fetchone()


def _touch(path: Path, text: str, n: int) -> None:
    path.write_text(text)
    os.utime(path, ns=(n, n))  # a different mtime whatever the clock resolution


def test_request_filled_late_and_last_record_rewritten_count_once(db, own_tmp):
    home = own_tmp / "home"
    root = cline_layout(home)
    source = [Source("cline-local", "cline", root)]
    ui_path = root / "tasks" / XML_TASK_ID / "ui_messages.json"
    final_ui = ui_path.read_text()
    ui = json.loads(final_ui)
    # while the 8th request runs, its api_req_started has no counters yet (the request replay only)
    running = [dict(r) for r in ui]
    eighth = [i for i, r in enumerate(running) if r.get("say") == "api_req_started"][7]
    filled = json.loads(running[eighth]["text"])
    running[eighth]["text"] = json.dumps({"request": filled["request"]})
    _touch(ui_path, json.dumps(running, separators=(",", ":")), 1)
    with psycopg.connect(db.dsn, autocommit=True) as conn:
        _pass(conn, source)
        before = _counts(conn)
        call_uid = f"{XML_TASK_ID}:req:{running[eighth]['ts']}"
        row = dict((c[0], c[1:]) for c in _calls(conn))[call_uid]
        assert row == (None, None, None)  # NULL while unknown, never 0
        # the request finishes: the same record, counters filled — one call, now with its usage
        _touch(ui_path, final_ui, 2)
        summary = _pass(conn, source)
        assert summary.files_changed == 1
        assert _counts(conn) == before
        row = dict((c[0], c[1:]) for c in _calls(conn))[call_uid]
        assert row == (filled["tokensIn"], filled["tokensOut"], filled["cost"])
        total = conn.execute("SELECT sum(output) FROM ah.model_call").fetchone()[0]
        every_ui = [r for f in sorted(root.glob("tasks/*/ui_messages.json")) for r in json.loads(f.read_text())]
        assert total == sum(
            json.loads(r["text"]).get("tokensOut", 0) for r in every_ui if r.get("say") == "api_req_started"
        )
        # the last record is rewritten in place with a new ts (resume_completed_task): a snapshot
        # re-derived, nothing added, the record-type counts replaced rather than summed
        moved = json.loads(final_ui)
        moved[-1]["ts"] += 4_011_440
        _touch(ui_path, json.dumps(moved, separators=(",", ":")), 3)
        _pass(conn, source)
        assert _counts(conn) == before
        seen = conn.execute(
            "SELECT sum(r.count) FROM ah.record_type_seen r JOIN ah.source_file f ON f.id = r.source_id WHERE f.path = %s",
            (str(ui_path),),
        ).fetchone()[0]
        assert seen == len(moved)
        ended = conn.execute("SELECT ended_at FROM ah.session WHERE session_uid = %s", (XML_TASK_ID,)).fetchone()[0]
        assert int(ended.timestamp() * 1000) == max(r["ts"] for r in moved)
        # the API history rewritten alone (one more turn): the UI's rows are not purged with it
        api_path = root / "tasks" / XML_TASK_ID / "api_conversation_history.json"
        api = json.loads(api_path.read_text())
        api.append(
            {"role": "user", "content": [{"type": "text", "text": "<feedback>\nand the changelog\n</feedback>"}]}
        )
        _touch(api_path, json.dumps(api, separators=(",", ":")), 4)
        _pass(conn, source)
        messages, tools, calls, compactions, sessions = _counts(conn)
        assert (messages, tools, calls, compactions, sessions) == (before[0] + 1, *before[1:])


def test_chatgpt_export_reread_only_for_changed_conversations(db, own_tmp):
    export = own_tmp / "export"
    export.mkdir()
    real = json.loads((CHATGPT / "001_simple_text.raw.json").read_text())
    tree = json.loads((CHATGPT / "hand-written" / "conversations.json").read_text())
    path = export / "conversations.json"
    _touch(path, json.dumps([real, *tree]), 1)
    source = [Source("chatgpt-export", "chatgpt", export)]
    with psycopg.connect(db.dsn, autocommit=True) as conn:
        first = _pass(conn, source)
        assert first.files_changed == 1
        base = conn.execute("SELECT count(*) FROM ah.message").fetchone()[0]
        # a newer export: the tree conversation got one more exchange, the real one is unchanged
        conv = tree[0]
        last = conv["current_node"]
        conv["mapping"][last]["children"] = ["cccc0001"]
        conv["mapping"]["cccc0001"] = {
            "id": "cccc0001",
            "parent": last,
            "children": [],
            "message": {
                "id": "cccc0001",
                "author": {"role": "user", "name": None, "metadata": {}},
                "create_time": conv["update_time"] + 30,
                "content": {"content_type": "text", "parts": ["round it"]},
                "status": "finished_successfully",
                "metadata": {},
                "recipient": "all",
            },
        }
        conv["current_node"] = "cccc0001"
        conv["update_time"] += 30
        _touch(path, json.dumps([real, *tree]), 2)
        second = _pass(conn, source)
        assert conn.execute("SELECT count(*) FROM ah.message").fetchone()[0] == base + 1
        written = sum(second.rows_new.values()) + sum(second.rows_merged.values())
        assert 0 < written < sum(first.rows_new.values())  # the unchanged conversation is not rewritten
        state = conn.execute("SELECT parser_state FROM ah.source_file WHERE path = %s", (str(path),)).fetchone()[0]
        assert state["versions"] == {
            real["conversation_id"]: str(real["update_time"]),
            conv["conversation_id"]: str(conv["update_time"]),
        }
    shutil.rmtree(export)
