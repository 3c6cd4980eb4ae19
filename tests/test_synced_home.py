"""A home present on two machines (a synced ``~``) indexed by both into one catalogue: the
sessions' natural key ``(agent, session_uid, agent_id)`` has no namespace, so the second host's
copies merge into the sessions the first stored (no row lost, none doubled). Its pass and
`status` say so — "n sessions already stored by namespace claude-alpha" — instead of showing
the second namespace empty without a word. Two real `index` processes (``[host] name`` alpha,
then beta) over the same home into one database of the embedded test server, by DSN."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from agent_history.web.pages import Pages, WebSettings
from agent_history.web.routes import status_page
from tests.test_hosts import host_env

PROJECTS = ("-Users-user4-proj", "-Users-user9-work-app")


def cli(*args: str, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "agent_history", *args], env=env, capture_output=True, text=True, timeout=300
    )


def _synced_home(corpus_home: Path, base: Path) -> tuple[Path, int, int]:
    """Two Claude projects of the corpus home: the home, its transcripts (5) and the sessions
    they record, counted here: the distinct ``sessionId``s, and a file naming none (one holds
    only file-history snapshots and summaries) is a session of its own, named by the file."""
    home = base / "synced-home"
    for name in PROJECTS:
        shutil.copytree(corpus_home / ".claude" / "projects" / name, home / ".claude" / "projects" / name)
    files = list(home.rglob("*.jsonl"))
    uids: set[str] = set()
    for f in files:
        named = {json.loads(line).get("sessionId") for line in f.read_text().splitlines() if line.strip()} - {None}
        uids |= named or {f.stem}
    return home, len(files), len(uids)


def test_a_synced_home_indexed_by_two_hosts_says_whose_namespace_holds_the_sessions(db, corpus_home, own_tmp):
    home, n, sessions = _synced_home(corpus_home, own_tmp)
    assert (n, sessions) == (5, 5)
    envs = {h: host_env(own_tmp, h, db.dsn, db.reader_dsn) for h in ("alpha", "beta")}
    first = cli("index", "--home", str(home), "--json", env=envs["alpha"])
    assert first.returncode == 0, first.stderr
    assert json.loads(first.stdout)["sessions_elsewhere"] == {}
    with db.connect() as conn:
        assert conn.execute("SELECT count(*) FROM ah.session WHERE namespace = 'claude-alpha'").fetchone()[0] == 5

    second = cli("index", "--home", str(home), env=envs["beta"])
    assert second.returncode == 0, second.stderr
    assert second.stdout.startswith(f"indexed: {n} files scanned, {n} changed, ")
    assert f"; {sessions} sessions of claude-beta already stored by namespace claude-alpha; " in second.stdout
    with db.connect() as conn:  # the pass's JSON summary, as recorded with its run
        (summary,) = conn.execute("SELECT summary FROM ah.index_run WHERE origin_host = 'beta'").fetchone()
    assert summary["sessions_elsewhere"] == {"claude-beta": {"claude-alpha": sessions}}
    again = cli("index", "--home", str(home), "--json", env=envs["beta"])
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["sessions_elsewhere"] == {}  # nothing written this time

    status = json.loads(cli("status", "--json", env=envs["beta"]).stdout)["namespaces"]
    assert status["claude-beta"]["sessions"] == 0
    assert status["claude-beta"]["files"] == {"ok": n}
    assert status["claude-beta"]["sessions_elsewhere"] == {"claude-alpha": sessions}
    assert status["claude-alpha"]["sessions_elsewhere"] == {}
    text = cli("status", env=envs["beta"]).stdout
    assert (
        f"claude-beta: {sessions} sessions already stored by namespace claude-alpha "
        "(the same transcripts, indexed there first; counted there)"
    ) in " ".join(text.split())
    with db.connect() as conn:  # the web UI's status page, rendered from the same catalogue status
        page = status_page(None, conn, Pages(WebSettings(reader_dsn=lambda: db.reader_dsn))).body.decode()
    assert f'<span class="muted sessions-elsewhere">{sessions} already stored by claude-alpha</span>' in page
    with db.connect() as conn:  # nothing doubled: one session row per transcript thread
        assert conn.execute("SELECT count(*) FROM ah.session").fetchone()[0] == sessions
