"""Field case E34 (../shared/field/EXPECTED.md): an OpenCode assistant message of two steps is
two model calls with each step's usage — not the message's (the last step's tokens) and not the
message plus its steps. Read through `parse`, the export parser and an ``opencode.db`` indexed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agent_history.model.rows import ModelCallRow, ToolCallRow
from agent_history.parsers.base import ParseContext
from agent_history.parsers.opencode.parser import OpencodeDocumentParser
from tests.homes import cli
from tests.new_formats_home import add_message, export_to_sqlite

# EXPECTED.md E34: input 4200, output 120 + reasoning 20 (OpenCode's output excludes reasoning;
# ours includes it), cache read 1800, cache write 1800: total 7940; cost $0.0123.
E34_TOKENS = {
    "input_uncached": 4200,
    "cache_read": 1800,
    "cache_write_5m": 1800,
    "cache_write_1h": None,
    "output": 140,
    "reasoning": 20,
}


OPENCODE_TOTALS = (
    "SELECT count(*), sum(input_uncached), sum(output), sum(reasoning), sum(cache_read), "
    "sum(cache_write_5m), sum(recorded_cost_usd) FROM ah.model_call WHERE agent = 'opencode'"
)
"""The catalogue's OpenCode calls: (count, input, output, reasoning, cache read, cache write, cost)."""
E34_SESSION = (
    "SELECT model_call_count, input_uncached, output, cache_read, cache_write_5m FROM ah.session "
    "WHERE session_uid = 'ses_0034examplesession00'"
)
"""E34's session rollup: (calls, input, output, cache read, cache write)."""


def field_doc(field_dir: Path, case: str, *, row_ids: bool = False) -> dict:
    """Field case `case` (``E34``, ``E35``): an OpenCode export document. With `row_ids` each
    part also names its message and session, as the part rows of an ``opencode.db`` do (the
    export nests parts without those ids)."""
    doc = json.loads((field_dir / f"{case}.jsonl").read_text())
    if row_ids:
        for m in doc["messages"]:
            for p in m["parts"]:
                p.setdefault("messageID", m["info"]["id"])
                p.setdefault("sessionID", m["info"]["sessionID"])
    return doc


def parsed_e34(field_dir: Path) -> list:
    """The rows of E34 read by the export parser."""
    path = field_dir / "E34.jsonl"
    return OpencodeDocumentParser(ParseContext(str(path))).parse(path.read_bytes())


def index_home(cli_env: dict) -> None:
    """``agent-history index --home $HOME`` into the test database; it must succeed."""
    out = cli("index", "--home", cli_env["HOME"], "--json", env=cli_env)
    assert out.returncode == 0, out.stderr


def test_e34_parse_json_gives_one_model_call_per_step(field_dir):
    out = subprocess.run(
        [sys.executable, "-m", "agent_history", "parse", str(field_dir / "E34.jsonl"), "--json"],
        capture_output=True,
        text=True,
        env={**os.environ, "AGENT_HISTORY_QUERY_IDLE_S": "0"},
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    (f,) = json.loads(out.stdout)["files"]
    assert (f["agent"], f["model_calls"], f["tool_calls"], f["issues_by_kind"]) == ("opencode", 2, 1, {})
    assert f["tokens"] == E34_TOKENS
    t = f["tokens"]
    assert t["input_uncached"] + t["cache_read"] + t["cache_write_5m"] + t["output"] == 7940


def test_e34_each_step_call_has_its_own_tokens_and_cost(field_dir):
    calls = [r for r in parsed_e34(field_dir) if isinstance(r, ModelCallRow)]
    got = [
        (c.call_uid, c.input_uncached, c.output, c.reasoning, c.cache_read, c.cache_write_5m, c.recorded_cost_usd)
        for c in calls
    ]
    # the first step keeps the message id (the call a one-step message always was)
    assert got == [
        ("msg_0034assistant0000000", 2000, 55, 5, 0, 1800, 0.0061),
        ("prt_34f", 2200, 85, 15, 1800, 0, 0.0062),
    ]
    assert [c.stop_reason for c in calls] == ["tool-calls", "stop"]
    assert sum(c.recorded_cost_usd for c in calls) == pytest.approx(0.0123)


def test_e34_one_read_tool_call_completed(field_dir):
    rows = parsed_e34(field_dir)
    assert [(t.name, t.outcome, t.is_error) for t in rows if isinstance(t, ToolCallRow)] == [("read", "ok", None)]


def _e34_db(field_dir: Path, home: Path) -> Path:
    """E34 stored as OpenCode ≥ 1.2 stores it: an ``opencode.db`` whose part rows name their
    message and session (the export nests parts without those ids)."""
    doc = field_doc(field_dir, "E34", row_ids=True)
    db = home / ".local" / "share" / "opencode" / "opencode.db"
    db.parent.mkdir(parents=True)
    export_to_sqlite(doc, db).close()
    return db


def test_e34_indexed_from_an_opencode_db_sums_the_steps(field_dir, cli_env, db):
    _e34_db(field_dir, Path(cli_env["HOME"]))
    index_home(cli_env)
    with db.connect() as conn:
        calls = conn.execute(OPENCODE_TOTALS).fetchone()
        session = conn.execute(E34_SESSION).fetchone()
    assert calls[:6] == (2, 4200, 140, 20, 1800, 1800)
    assert float(calls[6]) == pytest.approx(0.0123)
    assert session == (2, 4200, 140, 1800, 1800)


def test_e34_db_message_read_before_and_after_its_steps_is_still_two_calls(field_dir):
    """A database pass may read the assistant message before its steps are written (OpenCode
    updates the message after each step): the early row's call is the first step's, not a third."""
    from agent_history.parsers.base import Pos
    from agent_history.parsers.opencode.parser import OpencodeDbParser

    m = field_doc(field_dir, "E34")["messages"][1]
    data = json.dumps({k: v for k, v in m["info"].items() if k not in ("id", "sessionID")})
    record = {"id": m["info"]["id"], "session_id": m["info"]["sessionID"], "data": data}
    parser = OpencodeDbParser(ParseContext("/x/opencode.db"))
    steps = [p for p in m["parts"] if p["type"] == "step-finish"]
    uids = set()
    for seen in ([], steps[:1], steps):
        rows = parser.rows("message", {**record, "_steps": json.dumps(seen)}, Pos(0, 0, 1))
        uids |= {r.call_uid for r in rows if isinstance(r, ModelCallRow)}
    assert uids == {"msg_0034assistant0000000", "prt_34f"}


def _e34_storage(field_dir: Path, home: Path) -> Path:
    """E34 stored as OpenCode < 1.2 stores it: one JSON file per session, message and part
    (``storage/session/<project>/``, ``storage/message/<session>/``, ``storage/part/<message>/``);
    a message file does not list its parts."""
    doc = field_doc(field_dir, "E34")
    storage = home / ".local" / "share" / "opencode" / "storage"
    info = doc["info"]
    (storage / "session" / info["projectID"]).mkdir(parents=True)
    (storage / "session" / info["projectID"] / f"{info['id']}.json").write_text(json.dumps(info))
    for m in doc["messages"]:
        mid, sid = m["info"]["id"], m["info"]["sessionID"]
        (storage / "message" / sid).mkdir(parents=True, exist_ok=True)
        (storage / "message" / sid / f"{mid}.json").write_text(json.dumps(m["info"]))
        (storage / "part" / mid).mkdir(parents=True)
        for p in m["parts"]:
            (storage / "part" / mid / f"{p['id']}.json").write_text(
                json.dumps({**p, "messageID": mid, "sessionID": sid})
            )
    return storage


def test_e34_indexed_from_a_storage_tree_counts_each_step_once(field_dir, cli_env, db):
    """The storage tree's message file holds the last step's tokens only (input 2200); its
    step-finish part files hold each step's: the catalogue's totals equal a count of those parts."""
    storage = _e34_storage(field_dir, Path(cli_env["HOME"]))
    steps = [json.loads(p.read_text()) for p in sorted(storage.glob("part/*/*.json"))]
    steps = [p for p in steps if p["type"] == "step-finish"]
    counted = (
        len(steps),
        sum(p["tokens"]["input"] for p in steps),
        sum(p["tokens"]["output"] + p["tokens"]["reasoning"] for p in steps),
        sum(p["tokens"]["reasoning"] for p in steps),
        sum(p["tokens"]["cache"]["read"] for p in steps),
        sum(p["tokens"]["cache"]["write"] for p in steps),
    )
    assert counted == (2, 4200, 140, 20, 1800, 1800)  # EXPECTED.md E34
    index_home(cli_env)
    with db.connect() as conn:
        calls = conn.execute(OPENCODE_TOTALS).fetchone()
        uids = [r[0] for r in conn.execute("SELECT call_uid FROM ah.model_call ORDER BY call_uid").fetchall()]
        session = conn.execute(E34_SESSION).fetchone()
    assert calls[:6] == counted
    assert float(calls[6]) == pytest.approx(0.0123)
    assert uids == ["msg_0034assistant0000000", "prt_34f"]
    assert session == (2, 4200, 140, 1800, 1800)


# ---------------------------------------------------------------- E35 child session

E35_PARENT = "ses_0035parentsession000"
E35_CHILD = "ses_0035childsession0000"


def _e35_db(field_dir: Path, home: Path) -> Path:
    """E35's child session in an ``opencode.db`` beside the parent it names (EXPECTED.md gives only
    the child: the parent is one prompt and one reply of input 100, output 10, made up here)."""
    child = field_doc(field_dir, "E35", row_ids=True)
    t0 = child["info"]["time"]["created"] - 10_000
    usage = {"input": 100, "output": 10, "reasoning": 0, "cache": {"read": 0, "write": 0}}
    parent = {
        "info": {**{k: child["info"][k] for k in ("projectID", "directory", "version")}, "id": E35_PARENT,
                 "slug": "parent", "title": "Audit the auth flow", "time": {"created": t0, "updated": t0 + 90_000}},
        "messages": [
            {"info": {"id": "msg_0035parentuser0000000", "sessionID": E35_PARENT, "role": "user",
                      "time": {"created": t0 + 1000}},
             "parts": [{"id": "prt_0035parentuser0000000", "messageID": "msg_0035parentuser0000000",
                        "sessionID": E35_PARENT, "type": "text", "text": "Audit the auth flow"}]},
            {"info": {"id": "msg_0035parentreply000000", "sessionID": E35_PARENT, "role": "assistant",
                      "parentID": "msg_0035parentuser0000000", "modelID": "claude-haiku-4-5",
                      "providerID": "anthropic", "time": {"created": t0 + 2000, "completed": t0 + 3000},
                      "cost": 0.0002, "tokens": usage},
             "parts": [{"id": "prt_0035parentreply000000", "messageID": "msg_0035parentreply000000",
                        "sessionID": E35_PARENT, "type": "text", "text": "Delegated to a sub-agent."}]},
        ],
    }  # fmt: skip
    db = home / ".local" / "share" / "opencode" / "opencode.db"
    db.parent.mkdir(parents=True)
    con = export_to_sqlite(parent, db)
    info = child["info"]
    con.execute(
        "INSERT INTO session VALUES (?,?,?,?,?,?,?,?,?)",
        (info["id"], info["projectID"], info["parentID"], info["slug"], info["directory"], info["title"],
         info["version"], info["time"]["created"], info["time"]["updated"]),
    )  # fmt: skip
    for m in child["messages"]:
        add_message(con, m)
    con.close()
    return db


def test_e35_child_is_hidden_has_no_prompt_and_rolls_into_its_parent_once(field_dir, cli_env, db):
    _e35_db(field_dir, Path(cli_env["HOME"]))
    index_home(cli_env)
    with db.connect() as conn:
        rows = conn.execute(
            "SELECT s.session_uid, s.prompt_count, p.session_uid, s.subagent_count, s.input_uncached, s.output "
            "FROM ah.session s LEFT JOIN ah.session p ON p.id = s.parent_session_id ORDER BY s.session_uid"
        ).fetchall()
        tree_cost = conn.execute(
            "SELECT sum(mc.recorded_cost_usd) FROM ah.model_call mc JOIN ah.session s ON s.id = mc.session_id "
            "JOIN ah.session r ON r.id = s.root_session_id WHERE r.session_uid = %s",
            (E35_PARENT,),
        ).fetchone()[0]
    assert rows == [
        (E35_CHILD, 0, E35_PARENT, 0, 900, 60),  # prompts 0: its user text is the parent agent's brief
        (E35_PARENT, 1, None, 1, 100, 10),
    ]
    assert float(tree_cost) == pytest.approx(0.0002 + 0.0011)  # the child's $0.0011 counted once
    listed = cli("sessions", "--json", env=cli_env)
    assert listed.returncode == 0, listed.stderr
    (top,) = json.loads(listed.stdout)  # the child is hidden from the top-level list
    assert (top["session_uid"], top["subagent_count"], top["tokens"], top["tokens_with_subagents"]) == (
        E35_PARENT, 1, 110, 110 + 960,
    )  # fmt: skip
