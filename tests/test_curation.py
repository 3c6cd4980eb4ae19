"""Session curation (issue 17): exclude survives a pass and `rebuild` and keeps the session out of
search, recall, recent sessions and the embed pass; restore; exclusions export/import; delete
removes the rows and the next pass indexes the transcript again."""

from __future__ import annotations

import json
import subprocess
import sys

import psycopg

from agent_history.embed.store import pending_sources
from agent_history.ingest.discovery import Source, agent_of_namespace, home_layout
from agent_history.ingest.loader import Loader
from agent_history.ingest.rebuild import rebuild
from agent_history.read.overview import recent_sessions
from agent_history.read.recall import RecallBounds, thread_recall
from agent_history.search.hybrid import run_search
from agent_history.search.request import SearchRequest
from tests.recall_home import UIDS, write_recall_home


def _cli(env, *args, stdin=subprocess.DEVNULL):
    return subprocess.run(
        [sys.executable, "-m", "agent_history", *args], env=env, capture_output=True, text=True, stdin=stdin
    )


def _visible(conn, uid: str) -> dict[str, bool]:
    hits = run_search(conn, SearchRequest("websocket heartbeat interval", limit=50), "keyword", None).hits
    recall = thread_recall(conn, SearchRequest("websocket heartbeat interval"), "keyword", None, RecallBounds(hits=5))
    pending = {s.id for s in pending_sources(conn, "message", "any-model", 0, 1000)}
    own = {r[0] for r in conn.execute(
        "SELECT m.id FROM ah.message m JOIN ah.session s ON s.id = m.session_id WHERE s.session_uid = %s", (uid,))}  # fmt: skip
    return {
        "search": uid in {h.session_uid for h in hits},
        "recall": uid in {s.session_uid for s in recall.steps},
        "recent": uid in {r["session_uid"] for r in recent_sessions(conn, 50)},
        "embed": bool(own & pending),
        "indexed": bool(own),
    }


def test_exclude_restore_export_import_and_rebuild(db, cli_env, own_tmp):
    home = own_tmp / "home"
    write_recall_home(home)
    sources = [Source(ns, agent_of_namespace(ns), p) for ns, p in home_layout(home).items()]
    with psycopg.connect(db.dsn, autocommit=True) as conn:
        Loader(conn).run(sources)
        assert _visible(conn, UIDS["C1"]) == dict.fromkeys(("search", "recall", "recent", "embed", "indexed"), True)
    ambiguous = _cli(cli_env, "sessions", "exclude", "0a1b2c")
    assert ambiguous.returncode == 2 and "matches 2 sessions" in ambiguous.stderr
    out = _cli(cli_env, "sessions", "exclude", UIDS["C1"], "--reason", "duplicate advice")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == f"excluded: claude {UIDS['C1']}"
    hidden = {"search": False, "recall": False, "recent": False, "embed": False, "indexed": True}
    with psycopg.connect(db.dsn, autocommit=True) as conn:
        assert _visible(conn, UIDS["C1"]) == hidden
        Loader(conn).run(sources)  # a pass changes nothing
        assert _visible(conn, UIDS["C1"]) == hidden
        rebuild(conn, sources, [])
        assert _visible(conn, UIDS["C1"]) == hidden  # the decision outlives the rebuild
    exported = own_tmp / "exclusions.json"
    assert _cli(cli_env, "sessions", "exclusions", "export", str(exported)).returncode == 0
    entries = json.loads(exported.read_text())
    assert [(e["agent"], e["session_uid"], e["reason"]) for e in entries] == [
        ("claude", UIDS["C1"], "duplicate advice")
    ]
    restored = _cli(cli_env, "sessions", "restore", UIDS["C1"][:20])
    assert restored.returncode == 0 and restored.stdout.strip() == f"restored: claude {UIDS['C1']}"
    with psycopg.connect(db.dsn, autocommit=True) as conn:
        assert _visible(conn, UIDS["C1"])["search"] is True
    imported = _cli(cli_env, "sessions", "exclusions", "import", str(exported))
    assert imported.returncode == 0 and imported.stdout.strip() == "1 exclusion added, 0 already present"
    with psycopg.connect(db.dsn, autocommit=True) as conn:
        assert _visible(conn, UIDS["C1"]) == hidden


def test_delete_asks_then_the_next_pass_indexes_again(db, cli_env, own_tmp):
    home = own_tmp / "home"
    write_recall_home(home)
    sources = [Source(ns, agent_of_namespace(ns), p) for ns, p in home_layout(home).items()]
    count = "SELECT count(*) FROM ah.message m JOIN ah.session s ON s.id = m.session_id WHERE s.session_uid = %s"
    with psycopg.connect(db.dsn, autocommit=True) as conn:
        Loader(conn).run(sources)
        before = conn.execute(count, (UIDS["C2"],)).fetchone()[0]
    assert before == 8  # three prompts, five reply blocks
    unconfirmed = _cli(cli_env, "sessions", "delete", UIDS["C2"])
    assert unconfirmed.returncode == 2 and "pass --yes" in unconfirmed.stderr
    out = _cli(cli_env, "sessions", "delete", UIDS["C2"], "--yes")
    assert out.returncode == 0, out.stderr
    assert f"deleted claude {UIDS['C2']}: 1 thread, 8 messages and tool calls, 1 file record" in out.stdout
    assert "the next pass indexes the transcript again unless you exclude it" in " ".join(out.stdout.split())
    with psycopg.connect(db.dsn, autocommit=True) as conn:
        assert conn.execute(count, (UIDS["C2"],)).fetchone()[0] == 0
        assert conn.execute("SELECT count(*) FROM ah.session WHERE session_uid = %s", (UIDS["C2"],)).fetchone()[0] == 0
        assert conn.execute(count, (UIDS["C1"],)).fetchone()[0] == 2  # other sessions untouched
        summary = Loader(conn).run(sources)
        assert summary.files_failed == 0
        assert conn.execute(count, (UIDS["C2"],)).fetchone()[0] == before
    missing = _cli(cli_env, "sessions", "delete", "ffffffff-no-such", "--yes")
    assert missing.returncode == 1 and "no session 'ffffffff-no-such'" in missing.stderr
