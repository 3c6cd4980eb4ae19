"""User-facing leftovers from stop 39's notes, each asserted with its exact value.

- A git worktree (`git worktree add`) and its main repository were collected as two
  repositories, so ``why <sha>`` printed two lines for one commit: a repository is now its main
  work tree (`repos.git.work_tree`, from ``git rev-parse --git-common-dir``); a worktree is
  collected as it and named beside it. A catalogue collected before holds a row for the
  worktree: the next ``collect`` marks it gone (rows kept) and ``why`` leaves out a gone
  repository's copy of a commit a live one holds.
- ``collect repo/file.txt`` said "not a git repository": a file is taken as the repository it
  is in, said in one line (as a subdirectory always was).
- The web HTML pages (``/sessions``, ``/usage``, ``/search``) answered 200 for an unknown
  namespace where the JSON routes and the CLI refuse it: now a 400 page holding the CLI's line.
- ``pg_wal`` after a bulk pass held hundreds of MB (520 MB after a ×100 load): a checkpoint inside
  the pass recycled the segments it freed into future ones under the pass's 1GB
  ``max_wal_size``, and PostgreSQL never removes a future segment. ``wal_recycle`` is off for the
  pass and its final checkpoint (`db.embedded.settle_wal`).
"""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

import httpx
import psycopg
import pytest

from agent_history.db import embedded
from agent_history.ingest.collect import _collect_one, collect, linked_paths
from agent_history.model.rows import GitEventRow
from agent_history.read.why import collected_commits
from agent_history.repos import git as repo_git
from tests.catalogue_rows import session, write
from tests.corpus_db import corpus_db  # noqa: F401 - fixtures
from tests.git_repos import ME, at, build_project, git
from tests.test_cli_arguments import cli, environment
from tests.test_web import Served, _env

MAIN_SESSION = "main-checkout-session"
LANE_SESSION = "worktree-session"


@pytest.fixture
def worktree(own_tmp: Path) -> tuple[Path, Path, str]:
    """``project`` (tests/git_repos.py) and its linked worktree ``lane`` (branch ``lane``) holding
    one more commit; returns (project, worktree, that commit's sha)."""
    project = build_project(own_tmp)
    lane = own_tmp / "lane"
    git(project, "worktree", "add", "-q", "-b", "lane", str(lane), "main")
    (lane / "src" / "lane.py").write_text("lane = 1\n")
    git(lane, "add", "src/lane.py")
    git(lane, "commit", "-q", "-m", "Work on the lane", at=at(8))
    return project, lane, git(lane, "rev-parse", "HEAD").strip()


def _sessions_in_both(dsn: str, project: Path, lane: Path, sha: str) -> None:
    """A session in the main checkout and one in the worktree, which printed the lane's commit."""
    write(
        dsn,
        [
            session(MAIN_SESSION, cwd=str(project), started_at=at(0)),
            session(LANE_SESSION, cwd=str(lane), started_at=at(7), offset=1),
            GitEventRow(
                agent="claude", git_event_uid="lane-commit", session_uid=LANE_SESSION, op="commit", sha=sha[:7],
                branch="lane", subject="Work on the lane", ts=at(8) - timedelta(seconds=5),
            ),
        ],
    )  # fmt: skip


def _cli(env: dict, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "agent_history", *args], env=env, capture_output=True, text=True, timeout=120
    )


def test_work_tree_names_a_linked_worktrees_main_repository(worktree):
    project, lane, _ = worktree
    assert repo_git.work_tree(lane) == repo_git.WorkTree(lane, project)
    assert repo_git.work_tree(lane / "src" / "lane.py") == repo_git.WorkTree(lane, project)
    assert repo_git.work_tree(project / "src") == repo_git.WorkTree(project, project)
    assert repo_git.work_tree(lane).linked and not repo_git.work_tree(project).linked
    assert repo_git.work_tree(project.parent) is None and repo_git.work_tree(project / "missing") is None
    assert repo_git.work_tree(project / ".git") is None  # inside the git directory: no work tree
    # a bare repository has no main work tree: its linked worktree stays its own repository
    bare, beside = project.parent / "bare.git", project.parent / "beside"
    git(project.parent, "clone", "-q", "--bare", str(project), str(bare))
    git(bare, "worktree", "add", "-q", str(beside), "feat")
    assert repo_git.work_tree(beside) == repo_git.WorkTree(beside, beside)


def test_a_worktree_and_its_repository_are_one_repository_and_why_prints_one_line(db, cli_env, worktree):
    project, lane, sha = worktree
    _sessions_in_both(db.dsn, project, lane, sha)
    with psycopg.connect(db.dsn, autocommit=True) as conn:
        targets = linked_paths(conn)  # the default: the directories sessions ran in
        summary = collect(conn, targets, [ME[1]], skip_not_repositories=True)
        repos = conn.execute("SELECT path, name, gone FROM ah.repository").fetchall()
        holders = conn.execute("SELECT count(*) FROM ah.repo_commit WHERE sha = %s", (sha,)).fetchone()[0]
    assert targets == [lane, project]
    assert repos == [(str(project), "project", False)]
    assert [(r.path, r.state, r.worktrees, r.commits) for r in summary.repositories] == [
        (str(project), "collected", [str(lane)], 8)  # the 7 of build_project and the lane's
    ]
    assert holders == 1
    why = _cli(cli_env, "why", sha[:9])
    assert why.returncode == 0, why.stderr
    lines = [line for line in why.stdout.splitlines() if line.startswith(sha[:12])]
    assert lines == [
        f"{sha[:12]} in {project}, authored by you at 2026-11-02 17:00 UTC; made in session {LANE_SESSION}"
    ]
    assert f"(claude-local, {lane})" in why.stdout  # the session's own cwd: the worktree, as it ran
    out = _cli(cli_env, "collect", str(lane))
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[-1].startswith(f"{project} (with the worktree {lane}): 8 commits (0 new, 6 on main)")


def test_a_worktree_collected_as_its_own_repository_before_is_marked_gone_and_why_says_one_line(db, worktree):
    """The migration question: a catalogue collected by the old rule holds two rows. No data
    migration: the next `collect` marks the worktree's row gone (its rows kept, nothing lost),
    and `why` leaves out a gone repository's copy of a commit a live repository holds."""
    project, lane, sha = worktree
    with psycopg.connect(db.dsn, autocommit=True) as conn:
        for top in (project, lane):  # what `collect` did before: one repository per top level
            with conn.transaction():
                _collect_one(conn, top, [ME[1]], [])
        first = git(project, "rev-list", "--max-parents=0", "main").strip()
        both = sorted([str(lane), str(project)])  # one history read twice: every commit in both rows
        assert [c.repository for c in collected_commits(conn, sha[:9])] == both
        assert [c.repository for c in collected_commits(conn, first)] == both
        summary = collect(conn, [project, lane], [ME[1]])
        repos = conn.execute("SELECT path, gone FROM ah.repository ORDER BY path").fetchall()
        kept = conn.execute(
            "SELECT count(*) FROM ah.repo_commit AS c JOIN ah.repository AS r ON r.id = c.repository_id "
            "WHERE r.path = %s",
            (str(lane),),
        ).fetchone()[0]
        assert [c.repository for c in collected_commits(conn, first)] == [str(project)]
        assert [c.repository for c in collected_commits(conn, sha)] == [str(project)]
    assert sorted(repos) == sorted([(str(lane), True), (str(project), False)])
    assert kept == 8  # the worktree's old rows stay, marked gone
    assert f"repository gone: {lane} (its rows are kept, marked gone)" in summary.lines


def test_collect_of_a_file_collects_the_repository_it_is_in_and_says_so(cli_env, own_tmp):
    project = build_project(own_tmp)
    readme = project / "README.md"
    r = _cli(cli_env, "collect", str(readme))
    assert r.returncode == 0, r.stderr
    assert f"{readme} is a file: collecting the repository it is in, {project}" in r.stderr.splitlines()
    assert r.stdout.splitlines()[-1].startswith(f"{project}: 7 commits (7 new, 6 on main)")
    data = json.loads(_cli(cli_env, "collect", str(readme), "--json").stdout)
    assert [(x["path"], x["state"]) for x in data["repositories"]] == [(str(project), "collected")]
    outside = own_tmp / "notes.txt"
    outside.write_text("not in a repository\n")
    r = _cli(cli_env, "collect", str(outside))
    assert (r.returncode, r.stderr.splitlines()) == (2, [f"not a git repository: {outside}"])


@pytest.fixture(scope="module")
def web(corpus_db, tmp_path_factory):  # noqa: F811 - the imported fixture
    s = Served(_env(tmp_path_factory.mktemp("web-left40"), corpus_db.dsn, corpus_db.reader_dsn))
    yield s
    err = s.stop()
    assert "Traceback" not in err, err


def _page_error(body: str) -> str:
    """The one line of the error page (`web/templates/error.html`), unescaped."""
    match = re.search(r'<p class="error" id="error-message">(.*?)</p>', body, re.S)
    assert match, body[:500]
    return html.unescape(match.group(1))


@pytest.mark.parametrize(
    ("page", "api", "command"),
    [
        ("/sessions?namespace=nowhere", "/api/sessions?namespace=nowhere", ["sessions", "--namespace", "nowhere"]),
        ("/usage?namespace=nowhere", "/api/usage/report?namespace=nowhere", ["usage", "--namespace", "nowhere"]),
        ("/search?q=build&namespace=nowhere", "/api/search?q=build&namespace=nowhere",
         ["search", "build", "--namespace", "nowhere"]),
        ("/search?namespace=nowhere", "/api/usage?namespace=nowhere", ["usage", "--namespace", "nowhere"]),
    ],
)  # fmt: skip
def test_the_html_pages_refuse_an_unknown_namespace_with_the_clis_line(corpus_db, own_tmp, web, page, api, command):  # noqa: F811
    cli_run = cli(environment(corpus_db, own_tmp), *command)
    assert cli_run.returncode == 2 and cli_run.stdout == ""
    line = cli_run.stderr.removeprefix("error: ").rstrip("\n")
    assert line.startswith("unknown namespace 'nowhere' (indexed: ") and "\n" not in line
    got = httpx.get(web.url + page, timeout=60)
    assert (got.status_code, got.headers["content-type"]) == (400, "text/html; charset=utf-8")
    assert _page_error(got.text) == line
    assert "<title>Error 400" in got.text
    from_api = httpx.get(web.url + api, timeout=60)
    assert (from_api.status_code, from_api.json()) == (400, {"error": line})


def test_the_html_pages_still_answer_a_known_namespace(corpus_db, web):  # noqa: F811
    with psycopg.connect(corpus_db.dsn) as conn:
        (known,) = conn.execute("SELECT min(namespace) FROM ah.source_file").fetchone()
    for page in ("/sessions", "/usage", "/search?q=build"):
        got = httpx.get(f"{web.url}{page}{'&' if '?' in page else '?'}namespace={known}", timeout=60)
        assert got.status_code == 200, (page, got.text[:300])


# -- pg_wal after a bulk pass -----------------------------------------------------------------
SEGMENT = 16 * 1024 * 1024
"""The embedded cluster's WAL segment size (initdb's default; `pg_settings.wal_segment_size`)."""


@pytest.fixture(scope="module")
def private_server():
    """(superuser DSN, data dir) of a private embedded server: the WAL settings are the cluster's,
    and the session's shared server keeps them through bulk passes (tests/conftest.py)."""
    base = Path(tempfile.mkdtemp(prefix="ah-test-wal-"))
    pgdata = base / "pg"
    try:
        yield embedded.ensure_running(pgdata), pgdata
    finally:
        embedded.stop(pgdata)
        shutil.rmtree(base, ignore_errors=True)


def _wal_segments(pgdata: Path) -> list[str]:
    return sorted(p.name for p in (pgdata / "pg_wal").iterdir() if p.is_file() and len(p.name) == 24)


def _setting(dsn: str, name: str, wanted: str) -> None:
    """Wait (≤ 10 s) until a new session sees `name` = `wanted` (a reload is asynchronous)."""
    deadline = time.monotonic() + 10
    while True:
        with psycopg.connect(dsn) as c:
            if c.execute("SELECT current_setting(%s)", (name,)).fetchone()[0] == wanted or time.monotonic() > deadline:
                return


def test_a_bulk_pass_leaves_pg_wal_within_min_wal_size_after_its_checkpoints(private_server):
    """The ×100 symptom (520 MB of pg_wal after the pass) in small: three checkpoints inside a
    widened pass, each 48 MB of WAL apart, recycled the freed segments into future ones under
    the pass's 1GB ``max_wal_size`` — and a segment ahead of the insert position is never removed,
    so the final checkpoint left them (measured before the fix: 5 segments, 80 MB; after: 2, 32 MB). With
    ``wal_recycle`` off for the pass and until `settle_wal`'s checkpoint, ``pg_wal`` holds the
    segment being written and at most the one pre-allocated: ≤ ``min_wal_size`` (32 MB, 2
    segments; docs: wal-configuration, "min_wal_size … that much WAL is always recycled") — the
    bound asserted is min_wal_size plus one segment, the one a checkpoint may start while the
    insert position crosses into the next."""
    dsn, pgdata = private_server
    with psycopg.connect(dsn, autocommit=True) as conn:
        assert conn.execute("SHOW wal_segment_size").fetchone()[0] == "16MB"
        min_wal = conn.execute("SELECT setting::bigint * 1024 * 1024 FROM pg_settings WHERE name = 'min_wal_size'")
        assert min_wal.fetchone()[0] == 2 * SEGMENT
        conn.execute("CREATE TABLE filler (x text)")
        assert embedded.widen_for_bulk(conn) is True
        _setting(dsn, "wal_recycle", "off")
        for _ in range(3):  # what a ×100 load's size-triggered checkpoints do
            start = conn.execute("SELECT pg_current_wal_lsn()").fetchone()[0]
            conn.execute("INSERT INTO filler SELECT repeat(md5(g::text), 30) FROM generate_series(1, 54000) AS g")
            written = conn.execute("SELECT pg_current_wal_lsn() - %s::pg_lsn", (start,)).fetchone()[0]
            assert written > 3 * SEGMENT
            conn.execute("CHECKPOINT")
        assert embedded.narrow_after_bulk(conn) is True  # the end: wal_recycle stays off …
        assert conn.execute("SHOW max_wal_size").fetchone()[0] in ("64MB", "1GB")  # (the reload is asynchronous)
        assert embedded.settle_wal(conn) is True  # … for this checkpoint, then it is put back
        _setting(dsn, "wal_recycle", "on")
        assert embedded.settle_wal(conn) is False  # nothing left to settle
        segments = _wal_segments(pgdata)
        bytes_ = sum((pgdata / "pg_wal" / s).stat().st_size for s in segments)
        current = conn.execute("SELECT pg_walfile_name(pg_current_wal_lsn())").fetchone()[0]
        conf = dict(
            conn.execute(
                "SELECT name, setting FROM pg_file_settings WHERE sourcefile LIKE '%%postgresql.auto.conf' "
                "AND name IN ('max_wal_size', 'checkpoint_timeout', 'wal_recycle')"
            ).fetchall()
        )
        conn.execute("DROP TABLE filler")
    assert conf == {"max_wal_size": "64MB"}  # SERVER_SETTINGS again; the others at the server's defaults
    assert current in segments and segments[0] == current
    assert bytes_ <= 2 * SEGMENT + SEGMENT, segments


def test_a_cold_index_of_a_small_home_ends_with_pg_wal_small_and_the_settings_back(corpus_home, own_tmp):
    """The whole path: `agent-history index` of the corpus home on a new data dir (a cold pass:
    the bulk path), then ``pg_wal`` and ``postgresql.auto.conf`` as the pass left them."""
    (own_tmp / "config.toml").touch()
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENT_HISTORY_")}
    env.update(
        HOME=str(corpus_home), AGENT_HISTORY_DATA_DIR=str(own_tmp / "data"), AGENT_HISTORY_QUERY_IDLE_S="0",
        AGENT_HISTORY_CONFIG=str(own_tmp / "config.toml"),
    )  # fmt: skip
    pgdata = own_tmp / "data" / "pg"
    try:
        r = subprocess.run(
            [sys.executable, "-m", "agent_history", "index", "--json"], env=env, capture_output=True, text=True,
            timeout=600,
        )  # fmt: skip
        assert r.returncode == 0, r.stderr
        assert json.loads(r.stdout)["bulk"] == "done"
        with psycopg.connect(embedded.server_dsn(pgdata), autocommit=True) as conn:
            conf = dict(
                conn.execute(
                    "SELECT name, setting FROM pg_file_settings WHERE sourcefile LIKE '%%postgresql.auto.conf' "
                    "AND name IN ('max_wal_size', 'checkpoint_timeout', 'wal_recycle')"
                ).fetchall()
            )
        segments = _wal_segments(pgdata)
        assert conf == {"max_wal_size": "64MB"}
        assert sum((pgdata / "pg_wal" / s).stat().st_size for s in segments) <= 3 * SEGMENT, segments
    finally:
        embedded.stop(pgdata)
