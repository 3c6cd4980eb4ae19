"""User-facing leftovers from stop 39's notes, each asserted with its exact value.

- A git worktree (`git worktree add`) and its main repository are two repositories holding the
  same commits, so ``why <sha>`` printed two lines for one commit. The worktree stays a
  repository of its own (its Backlog tasks, closeouts and state logs are its own: a loop whose
  lane lives there finds it), named a worktree of its main work tree (`repos.git.work_tree`,
  from ``git rev-parse --git-common-dir``); ``why`` says the commit once, in the main
  repository, naming the worktree (`read.why.one_per_commit`); ``--json`` keeps both copies. A
  worktree collected before stays live; blame's "authored by me" reads the worktree's row, else
  its main repository's.
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
from agent_history.mcp.scope import Scope
from agent_history.mcp.tools.read import why_handler
from agent_history.model.rows import GitEventRow, MessageRow
from agent_history.read.blame import blame
from agent_history.read.why import collected_commits, name_worktrees, one_per_commit
from agent_history.repos import git as repo_git
from tests.catalogue_rows import session, write
from tests.corpus_db import corpus_db  # noqa: F401 - fixtures
from tests.git_repos import ME, at, build_project, git, task_file
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


def test_a_worktree_is_its_own_repository_and_why_prints_one_line_naming_both(db, cli_env, worktree):
    project, lane, sha = worktree
    _sessions_in_both(db.dsn, project, lane, sha)
    with psycopg.connect(db.dsn, autocommit=True) as conn:
        targets = linked_paths(conn)  # the default: the directories sessions ran in
        summary = collect(conn, targets, [ME[1]], skip_not_repositories=True)
        repos = conn.execute("SELECT path, name, gone FROM ah.repository ORDER BY path").fetchall()
        holders = conn.execute("SELECT count(*) FROM ah.repo_commit WHERE sha = %s", (sha,)).fetchone()[0]
        mcp = why_handler(conn, Scope(None, None, []), {"sha": sha[:9]}, None)
    assert targets == [lane, project]
    assert repos == [(str(lane), "lane", False), (str(project), "project", False)]
    assert [(r.path, r.state, r.worktree_of, r.commits) for r in summary.repositories] == [
        (str(lane), "collected", str(project), 8),  # the 7 of build_project and the lane's: one history
        (str(project), "collected", None, 8),
    ]
    assert holders == 2
    sentence = f"in {project} (also the worktree {lane}), authored by you at 2026-11-02 17:00 UTC; made in session {LANE_SESSION}"
    why = _cli(cli_env, "why", sha[:9])
    assert why.returncode == 0, why.stderr
    assert [line for line in why.stdout.splitlines() if line.startswith(sha[:12])] == [f"{sha[:12]} {sentence}"]
    assert f"(claude-local, {lane})" in why.stdout  # the session's own cwd: the worktree, as it ran
    data = json.loads(_cli(cli_env, "why", sha[:9], "--json").stdout)
    assert [(c["repository"], c["sha"], c["worktree_of"], c["gone"]) for c in data["collected"]] == [
        (str(lane), sha, str(project), False),  # every repository's copy, by path
        (str(project), sha, None, False),
    ]
    assert [(c["repository"], c["sentence"], [a["repository"] for a in c["also"]]) for c in mcp["collected"]] == [
        (str(project), sentence, [str(lane)])  # the MCP tool: one entry per commit
    ]
    out = _cli(cli_env, "collect", str(lane))
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[-1].startswith(f"{lane} (a worktree of {project}): 8 commits (0 new, 6 on main)")


def test_a_worktree_collected_before_stays_live_and_why_says_one_line(db, worktree):
    """A catalogue collected before holds both rows (each top level its repository): the next
    `collect` marks neither gone — nor keeps gone a worktree row an earlier rule marked gone —
    and `why` says each commit once, in the main repository. A worktree removed later is gone
    (rows kept) and named so."""
    project, lane, sha = worktree
    first = git(project, "rev-list", "--max-parents=0", "main").strip()
    with psycopg.connect(db.dsn, autocommit=True) as conn:
        for top in (project, lane):
            with conn.transaction():
                _collect_one(conn, top, [ME[1]], [])
        conn.execute("UPDATE ah.repository SET gone = true WHERE path = %s", (str(lane),))
        summary = collect(conn, [project, lane], [ME[1]])
        repos = conn.execute("SELECT path, gone FROM ah.repository ORDER BY path").fetchall()
        held = collected_commits(conn, first)
        name_worktrees(held)
        groups = one_per_commit(held)
        git(project, "worktree", "remove", "--force", str(lane))
        after = collect(conn, [project, lane], [ME[1]])
        left = collected_commits(conn, sha)
        name_worktrees(left)
    assert repos == [(str(lane), False), (str(project), False)]
    assert [line for line in summary.lines if line.startswith("repository gone")] == []
    assert [(c.repository, c.worktree_of, c.gone) for c in held] == [(str(lane), str(project), False),
                                                                     (str(project), None, False)]  # fmt: skip
    assert [[c.repository for c in g] for g in groups] == [[str(project), str(lane)]]
    assert groups[0][0].sentence(sessions=[], also=groups[0][1:]) == (
        f"in {project} (also the worktree {lane}), authored by you at 2026-11-02 09:00 UTC; no session made it"
    )
    assert f"repository gone: {lane} (its rows are kept, marked gone)" in after.lines
    [[main, gone]] = one_per_commit(left)
    assert (main.repository, gone.repository, gone.gone, gone.worktree_of) == (str(project), str(lane), True, None)
    assert main.sentence(sessions=[], also=[gone]) == (
        f"in {project} (also {lane} (gone)), authored by you at 2026-11-02 17:00 UTC; no session made it"
    )


def test_a_worktrees_own_files_are_collected_and_a_loop_whose_lane_lives_there_finds_them(db, worktree):
    """A Backlog task, a charter, a closeout and a state log that exist only in the linked
    worktree are its repository's rows, and the loop launched there takes its progress from them."""
    project, lane, _ = worktree
    (lane / "backlog" / "tasks" / "task-10 - Lane.md").write_text(task_file("task-10", "Lane", "In Progress"))
    (lane / "codex").mkdir()
    (lane / "codex" / "charter-lane.md").write_text("# The lane's charter\n")
    (lane / "codex" / "closeout-2026-11-02-loop1.md").write_text("# Closeout\n")
    (lane / "codex" / "state-2026-11-02-loop1.jsonl").write_text(
        json.dumps({"ts": "2026-11-02T18:00:00Z", "event": "landed", "task": "task-10"}) + "\n"
    )
    launch = (
        f"You are the root of lane loop 1. Read the charter codex/charter-lane.md (sha256 {'c' * 64}) and work "
        "the queue. When the loop is done, write the closeout to codex/closeout-2026-11-02-loop1.md."
    )
    write(
        db.dsn,
        [
            session("lane-root", cwd=str(lane), started_at=at(8)),
            MessageRow(
                agent="claude", message_uid="lane-launch", session_uid="lane-root", agent_id="", role="user",
                message_class="human_prompt", text=launch, ts=at(8) + timedelta(minutes=30), byte_offset=100,
                line_number=2,
            ),
        ],
    )  # fmt: skip
    with psycopg.connect(db.dsn, autocommit=True) as conn:
        summary = collect(conn, [project, lane], [ME[1]])
        tasks = conn.execute(
            "SELECT r.path, t.task_id, t.status FROM ah.backlog_task AS t JOIN ah.repository AS r "
            "ON r.id = t.repository_id WHERE t.task_id = 'task-10'"
        ).fetchall()
        files = conn.execute(
            "SELECT r.path, m.kind, m.path FROM ah.loop_run_metadata AS m JOIN ah.repository AS r "
            "ON r.id = m.repository_id ORDER BY m.path"
        ).fetchall()
        loops = conn.execute("SELECT loop_number, landed, progress_sources FROM ah.loops").fetchall()
    assert [(r.path, r.state_lines, r.loop_files) for r in summary.repositories] == [(str(project), 0, 0),
                                                                                      (str(lane), 1, 2)]  # fmt: skip
    assert tasks == [(str(lane), "task-10", "In Progress")]
    assert files == [(str(lane), "charter", "codex/charter-lane.md"),
                     (str(lane), "closeout", "codex/closeout-2026-11-02-loop1.md")]  # fmt: skip
    [(number, landed, sources)] = loops
    assert (number, landed, sources["landed"], sources["commits"]) == (1, 1, "state_log", "repository")


def test_blame_in_a_worktree_says_authored_by_me_from_its_row_else_its_main_repositorys(db, worktree):
    project, lane, sha = worktree
    b_sha = git(project, "log", "--format=%H", "-1", "--", "src/b.py").strip()  # c3, by the other author

    def mine(path: Path) -> list[tuple[str | None, bool | None]]:
        return [(x.sha, x.authored_by_me) for x in blame(conn, path).lines if x.text]

    with psycopg.connect(db.dsn, autocommit=True) as conn:
        before = mine(lane / "src" / "lane.py")
        collect(conn, [project], [ME[1]])  # the worktree itself not collected: its main repository's rows
        via_main = (mine(lane / "src" / "lane.py"), mine(lane / "src" / "b.py"))
        collect(conn, [lane], [])  # its own row, read without [identity] emails: authorship not compared
        own = mine(lane / "src" / "lane.py")
        collect(conn, [lane], [ME[1]])
        own_again = (mine(lane / "src" / "lane.py"), mine(lane / "src" / "b.py"))
        repository = blame(conn, lane / "src" / "lane.py").repository
    assert before == [(sha, None)]
    assert via_main == ([(sha, True)], [(b_sha, False)])
    assert own == [(sha, None)]  # the worktree's own row wins over its main repository's
    assert own_again == ([(sha, True)], [(b_sha, False)])
    assert repository == str(lane)


def test_one_per_commit_puts_the_live_main_repository_first_and_names_every_other():
    from datetime import UTC, datetime

    from agent_history.read.why import CollectedCommit

    def held(repo: str, *, gone: bool = False, worktree_of: str | None = None, sha: str = "ab" * 20):
        t = datetime(2026, 11, 2, 10, 0, tzinfo=UTC)
        return CollectedCommit(repo, sha, "subj", t, False, True, None, [], gone=gone, worktree_of=worktree_of)

    copies = [held("/a", worktree_of="/p"), held("/b", worktree_of="/p"), held("/c", gone=True), held("/p"),
              held("/q", sha="cd" * 20)]  # fmt: skip
    groups = one_per_commit(copies)
    assert [[c.repository for c in g] for g in groups] == [["/p", "/a", "/b", "/c"], ["/q"]]
    (main, *also), (alone,) = groups
    assert main.sentence(sessions=["s-1"], also=also) == (
        "in /p (also the worktree /a, the worktree /b and /c (gone)), authored by someone else at "
        "2026-11-02 10:00 UTC; made in session s-1"
    )
    assert alone.sentence(sessions=[]) == "in /q, authored by someone else at 2026-11-02 10:00 UTC; no session made it"


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
