"""Rows two sessions share go to one owner whatever the reading order (`db.tables.claims`,
migration 0026_owner): a Claude Code resume copies the original's records (same ``uuid``, same
``message.id``) under its own ``sessionId``. The original — started together with its resume,
ended first — keeps them, whether the files are read in one (bulk) pass, one after the other in
either order, or by `rebuild`; and a copy under another namespace behaves the same. Records from a
real corpus transcript; the real loader and the embedded server."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import psycopg

from agent_history.ingest.discovery import Source
from agent_history.ingest.loader import Loader
from agent_history.ingest.rebuild import rebuild
from tests.homes import sources_for
from tests.resume_copies import PROJECT, REAL, fresh, later  # noqa: F401 - fixture
from tests.snapshot import snapshot

A = "ffffffff-ffff-4fff-8fff-00000000000a"  # the original: sorts last by uid
B = "00000000-0000-4000-8000-00000000000b"  # its resume: sorts first by uid


def _files(corpus_home: Path) -> dict[str, str]:
    """File name → text: A = a real prompt and the first line of its reply; B = those records
    with B's sessionId (a resume's copies), then one more prompt and reply of its own."""
    lines = [json.loads(x) for x in (corpus_home / REAL).read_text().splitlines()]
    prompt = next(r for r in lines if r.get("type") == "user" and isinstance(r["message"].get("content"), str))
    reply = next(r for r in lines if r.get("type") == "assistant" and r.get("parentUuid") is not None)
    reply = {**reply, "parentUuid": prompt["uuid"]}
    a = [{**r, "sessionId": A} for r in (prompt, reply)]
    copies = [{**r, "sessionId": B} for r in (prompt, reply)]
    more_prompt = {
        **copies[0],
        "uuid": "0b000000-0000-4000-8000-000000000001",
        "parentUuid": reply["uuid"],
        "timestamp": later(prompt["timestamp"], 1),
        "message": {**prompt["message"], "content": "now add a test for it"},
    }
    more_reply = {
        **copies[1],
        "uuid": "0b000000-0000-4000-8000-000000000002",
        "parentUuid": more_prompt["uuid"],
        "timestamp": later(reply["timestamp"], 1),
        "message": {**reply["message"], "id": "msg_resume0b000000000000001"},
    }
    more_reply["message"]["content"] = [
        {**c, "id": "toolu_resume0b0000000000001"} if c.get("type") == "tool_use" else c
        for c in reply["message"]["content"]
    ]
    return {
        f"{A}.jsonl": "".join(json.dumps(r) + "\n" for r in a),
        f"{B}.jsonl": "".join(json.dumps(r) + "\n" for r in (*copies, more_prompt, more_reply)),
    }


def _index(dsn: str, sources: list[Source]) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        summary = Loader(conn).run(sources)
    assert summary.files_failed == 0


def _owners(dsn: str) -> dict[str, tuple]:
    with psycopg.connect(dsn) as conn:
        return {
            uid: (messages, calls, tools, mc)
            for uid, messages, calls, tools, mc in conn.execute(
                "SELECT s.session_uid || coalesce('/' || nullif(s.agent_id, ''), ''), "
                "(SELECT count(*) FROM ah.message m WHERE m.session_id = s.id), "
                "(SELECT count(*) FROM ah.model_call c WHERE c.session_id = s.id), "
                "(SELECT count(*) FROM ah.tool_call t WHERE t.session_id = s.id), s.model_call_count "
                "FROM ah.session s"
            )
        }


def test_a_resume_copy_stays_with_the_original_in_every_reading_order(corpus_home, own_tmp, fresh):  # noqa: F811
    files = _files(corpus_home)
    got = {}
    scenarios = {"one pass": [[A, B]], "A then B": [[A], [A, B]], "B then A": [[B], [A, B]]}
    for name, passes in scenarios.items():
        home = own_tmp / name.replace(" ", "-")
        project = home / PROJECT
        project.mkdir(parents=True)
        db = fresh()
        for present in passes:
            for uid in present:
                (project / f"{uid}.jsonl").write_text(files[f"{uid}.jsonl"])
            _index(db.dsn, sources_for(home))
        got[name] = (_owners(db.dsn), snapshot(psycopg.connect(db.dsn)))
        if name == "one pass":
            with psycopg.connect(db.dsn, autocommit=True) as conn:
                rebuild(conn, sources_for(home), [])
            got["rebuild"] = (_owners(db.dsn), snapshot(psycopg.connect(db.dsn)))
    owners, first = got["one pass"]
    # (messages, model calls, tool calls, rolled-up call count): the original keeps its prompt,
    # reply and call; the resume has only its own (that first reply line carries no tool use)
    assert owners == {A: (2, 1, 0, 1), B: (2, 1, 0, 1)}
    for name, (o, snap) in got.items():
        assert o == owners, name
        assert snap == first, name


def test_a_copy_under_another_namespace_gets_one_owner_whatever_the_order(corpus_home, own_tmp, fresh):  # noqa: F811
    """A real session file copied whole (only ``sessionId`` changed) into a second namespace: the
    two sessions start and end together, so the smaller session uid owns the shared rows — in
    either source order and after `rebuild`. (The project's old-layout sub-agent file, not
    copied, stays the original's sub-agent thread.)"""
    real = corpus_home / REAL
    copy_uid = "00000000-0000-4000-8000-0000000000cc"
    first, second = own_tmp / "one" / ".claude", own_tmp / "two" / ".claude"
    shutil.copytree(corpus_home / PROJECT, first / "projects" / PROJECT.split("/")[-1])
    (second / "projects" / "-copy").mkdir(parents=True)
    original_uid = real.stem
    text = real.read_text().replace(f'"sessionId": "{original_uid}"', f'"sessionId": "{copy_uid}"')
    text = text.replace(f'"sessionId":"{original_uid}"', f'"sessionId":"{copy_uid}"')
    assert copy_uid in text
    (second / "projects" / "-copy" / f"{copy_uid}.jsonl").write_text(text)
    ns1, ns2 = Source("claude-one", "claude", first), Source("claude-two", "claude", second)
    got = {}
    for name, sources in {"one first": [ns1, ns2], "two first": [ns2, ns1]}.items():
        db = fresh()
        _index(db.dsn, sources)
        got[name] = (_owners(db.dsn), snapshot(psycopg.connect(db.dsn)))
        with psycopg.connect(db.dsn, autocommit=True) as conn:
            rebuild(conn, list(reversed(sources)), [])
        got[f"{name}, rebuilt"] = (_owners(db.dsn), snapshot(psycopg.connect(db.dsn)))
    owners, snap = got["one first"]
    # (messages, model calls, tool calls, rolled-up call count): every shared row in one session
    assert owners == {
        copy_uid: (59, 36, 71, 36),
        original_uid: (0, 0, 0, 0),
        f"{original_uid}/3430b97e": (1, 1, 0, 1),
    }
    for name, (o, s) in got.items():
        assert (o, s) == (owners, snap), name
