"""Many machines, one catalogue (issue 29 item 2; docs/design.md §7 "Many machines").

Two homes — the shared corpus split in two, each with Claude Code transcripts — are indexed by
two real `agent-history index` processes with different ``[host] name``s into one database of
the embedded test server, reached by DSN; each alone into a database of its own gives the
oracle: the shared catalogue must be the union of the two, namespace by namespace, with each
row's ``origin_host``. One host's `rebuild` must leave the other's rows as they were (same ids,
never rewritten); `usage --by host` and `sessions --host` answer per machine.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psycopg
import pytest

from agent_history.config import ConfigError, dsn_is_remote, load_settings
from agent_history.ingest.rebuild import rebuild_interrupted
from tests.conftest import clone_database, drop_database
from tests.corpus_db import cli_environment, corpus_rw_db  # noqa: F401 - fixture
from tests.snapshot import snapshot

PY = sys.executable
HOSTS = ("alpha", "beta")
NAMESPACES = {"alpha": ["claude-alpha", "codex-alpha"], "beta": ["claude-beta", "pi-beta"]}


def cli(*args: str, env: dict, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([PY, "-m", "agent_history", *args], env=env, capture_output=True, text=True, timeout=timeout)


def popen(*args: str, env: dict) -> subprocess.Popen:
    return subprocess.Popen(
        [PY, "-m", "agent_history", *args], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def host_env(base: Path, host: str, dsn: str, reader_dsn: str) -> dict[str, str]:
    """A CLI environment of one machine: its own config (``[host] name``), data dir and HOME."""
    root = base / host
    root.mkdir(parents=True, exist_ok=True)
    return cli_environment(root, dsn, reader_dsn, config=f'[host]\nname = "{host}"\n')


def split_homes(corpus_home: Path, base: Path) -> dict[str, Path]:
    """The corpus home in two: alpha has half the Claude projects and Codex, beta the other half and pi."""
    projects = sorted(p.name for p in (corpus_home / ".claude" / "projects").iterdir())
    half = len(projects) // 2
    out = {}
    for host, mine, other in (("alpha", projects[:half], ".codex"), ("beta", projects[half:], ".pi")):
        home = base / f"home-{host}"
        for name in mine:
            shutil.copytree(corpus_home / ".claude" / "projects" / name, home / ".claude" / "projects" / name)
        shutil.copytree(corpus_home / other, home / other)
        out[host] = home
    return out


def per_namespace(conn: psycopg.Connection) -> list[tuple]:
    """(table, namespace, origin_host, rows) of the tables that carry both."""
    return sorted(
        conn.execute(
            "SELECT 'source_file', namespace, origin_host, count(*) FROM ah.source_file GROUP BY 2, 3 "
            "UNION ALL SELECT 'session', namespace, origin_host, count(*) FROM ah.session GROUP BY 2, 3"
        ).fetchall()
    )


def term_statistics(conn: psycopg.Connection) -> tuple[list, list]:
    """(stored, recounted from the rows) term statistics of the message corpus."""
    stored = conn.execute("SELECT lexeme, df FROM ah.search_term WHERE corpus = 'message' ORDER BY 1").fetchall()
    counted = conn.execute(
        "SELECT l.lexeme, count(*) FROM ah.message AS t, unnest(tsvector_to_array(t.tsv)) AS l(lexeme) "
        "GROUP BY 1 ORDER BY 1"
    ).fetchall()
    return stored, counted


@pytest.fixture(scope="module")
def world(pg_server, corpus_home):
    """Each host alone into its own database, then both at once (two processes) into a third."""
    base = Path(tempfile.mkdtemp(prefix="ah-test-hosts-"))
    homes = split_homes(corpus_home, base)
    dbs = {name: clone_database(pg_server, prefix=f"hosts_{name}") for name in ("alpha", "beta", "both")}
    try:
        alone = {
            h: popen("index", "--home", str(homes[h]), env=host_env(base, h, dbs[h].dsn, dbs[h].reader_dsn))
            for h in HOSTS
        }
        for h, proc in alone.items():
            out, err = proc.communicate(timeout=600)
            assert proc.returncode == 0 and "Traceback" not in err, (h, out, err)
        envs = {h: host_env(base / "both", h, dbs["both"].dsn, dbs["both"].reader_dsn) for h in HOSTS}
        together = {h: popen("index", "--home", str(homes[h]), env=envs[h]) for h in HOSTS}
        outputs = {h: proc.communicate(timeout=600) for h, proc in together.items()}
        for h, proc in together.items():
            out, err = outputs[h]
            assert proc.returncode == 0 and "Traceback" not in err, (h, out, err)
            assert "another index pass is running" not in out + err, (h, out, err)
            assert out.startswith("indexed: "), out
        yield {"base": base, "homes": homes, "dbs": dbs, "envs": envs}
    finally:
        for database in dbs.values():
            drop_database(database)
        shutil.rmtree(base, ignore_errors=True)


def test_two_hosts_indexing_at_once_give_the_union_of_each_alone(world):
    dbs = world["dbs"]
    with dbs["alpha"].connect() as a, dbs["beta"].connect() as b, dbs["both"].connect() as both:
        alone_a, alone_b, shared = snapshot(a), snapshot(b), snapshot(both)
        assert shared.keys() == alone_a.keys()
        for table in shared:  # every row of every row-model table, namespace and file included
            assert shared[table] == sorted(alone_a[table] + alone_b[table]), table
        assert per_namespace(both) == sorted(per_namespace(a) + per_namespace(b))
        got = {(t, ns, host) for t, ns, host, _ in per_namespace(both)}
        assert got == {(t, ns, h) for h in HOSTS for ns in NAMESPACES[h] for t in ("session", "source_file")}
        # the term statistics of rows two passes wrote at once equal a recount of those rows
        stored, counted = term_statistics(both)
        assert stored == counted and len(stored) > 1000
        runs = both.execute("SELECT origin_host, namespaces, status FROM ah.index_run ORDER BY origin_host").fetchall()
    assert [(host, status) for host, _, status in runs] == [(h, "ok") for h in HOSTS]
    for host, namespaces, _ in runs:  # every harness's `--home` namespace of that machine, and only those
        assert set(NAMESPACES[host]) <= set(namespaces) and all(ns.endswith(f"-{host}") for ns in namespaces)


def test_a_pass_never_waits_for_another_hosts_and_never_marks_its_live_run_killed(world, pg_server):
    """alpha stops mid-pass (holding its namespaces and the bulk path); beta indexes meanwhile,
    a second alpha pass is refused naming the bulk load, and once alpha is killed its next pass
    completes the catalogue: the union again."""
    homes, base = world["homes"], world["base"] / "paused"
    database = clone_database(pg_server, prefix="hosts_paused")
    try:
        envs = {h: host_env(base, h, database.dsn, database.reader_dsn) for h in HOSTS}
        paused_env = {**envs["alpha"], "AGENT_HISTORY_PAUSE_AFTER_BATCHES": "1", "AGENT_HISTORY_BATCH_LINES": "5"}
        alpha = popen("index", "--home", str(homes["alpha"]), env=paused_env)
        try:
            line = alpha.stderr.readline()
            assert line.strip() == "paused after batch 1", line
            with database.connect(autocommit=True) as conn:
                (alpha_run,) = conn.execute("SELECT id FROM ah.index_run WHERE status = 'running'").fetchone()
                started = time.monotonic()
                beta = cli("index", "--home", str(homes["beta"]), env=envs["beta"])
                assert beta.returncode == 0 and beta.stdout.startswith("indexed: "), beta.stdout + beta.stderr
                assert time.monotonic() - started < 120
                # beta's pass saw alpha's row `running` with its run lock held: left alone
                assert conn.execute("SELECT status FROM ah.index_run WHERE id = %s", (alpha_run,)).fetchone() == (
                    "running",
                )
                again = cli("index", "--home", str(homes["alpha"]), env=envs["alpha"])
                assert again.returncode == 75  # EX_TEMPFAIL: another pass holds a namespace it needs
                # alpha's paused pass is on the bulk path: named as what it is, not by a namespace
                assert again.stdout == "a bulk load is running\n"
        finally:
            alpha.kill()
            alpha.wait()
        done = cli("index", "--home", str(homes["alpha"]), env=envs["alpha"])
        assert done.returncode == 0 and done.stdout.startswith("indexed: "), done.stdout + done.stderr
        with database.connect() as conn, world["dbs"]["both"].connect() as both:
            assert conn.execute("SELECT status FROM ah.index_run WHERE id = %s", (alpha_run,)).fetchone() == (
                "interrupted",
            )
            assert conn.execute("SELECT count(*) FROM ah.meta WHERE key = 'bulk_pass'").fetchone()[0] == 0
            assert snapshot(conn) == snapshot(both)
            stored, counted = term_statistics(conn)
            assert stored == counted
    finally:
        drop_database(database)


def _rows_of(conn: psycopg.Connection, namespaces: list[str]) -> dict[str, list[tuple]]:
    """(id, xmin) of a host's rows: the same after an operation = neither deleted nor rewritten."""
    out = {
        table: conn.execute(
            f"SELECT id, xmin::text FROM ah.{table} WHERE namespace = ANY(%s) ORDER BY id", (namespaces,)
        ).fetchall()
        for table in ("source_file", "session")
    }
    for table in ("message", "model_call", "tool_call"):
        out[table] = conn.execute(
            f"SELECT x.id, x.xmin::text FROM ah.{table} x JOIN ah.session s ON s.id = x.session_id "
            "WHERE s.namespace = ANY(%s) ORDER BY x.id",
            (namespaces,),
        ).fetchall()
    return out


def test_one_hosts_rebuild_leaves_the_other_hosts_rows_untouched(world, pg_server):
    database = clone_database(pg_server, template=world["dbs"]["both"].name, prefix="hosts_rebuild")
    try:
        env = host_env(world["base"] / "rebuild", "beta", database.dsn, database.reader_dsn)
        with database.connect() as conn:
            before = snapshot(conn)
            alpha_rows = _rows_of(conn, NAMESPACES["alpha"])
            beta_ids = _rows_of(conn, NAMESPACES["beta"])["source_file"]
        assert all(alpha_rows.values())
        # alpha archives into its own archive directory a transcript it then loses: that copy is
        # alpha's to restore, never a reason for beta's rebuild to refuse
        from agent_history.ingest.archive.run import archive_pass
        from agent_history.ingest.discovery import Source

        gone = world["base"] / "rebuild" / "alpha-codex"
        shutil.copytree(world["homes"]["alpha"] / ".codex", gone)
        with database.connect(autocommit=True) as conn:
            copied = archive_pass(
                conn, [Source("codex-alpha", "codex", gone)], world["base"] / "rebuild" / "alpha-archive"
            )
        assert copied.copied > 0
        shutil.rmtree(gone)
        with database.connect() as conn:  # the archive's manifest is not a row-model table
            before = snapshot(conn)
        done = cli("rebuild", "--home", str(world["homes"]["beta"]), env=env)
        assert done.returncode == 0 and done.stdout.startswith("rebuilt: "), done.stdout + done.stderr
        with database.connect() as conn:
            assert _rows_of(conn, NAMESPACES["alpha"]) == alpha_rows  # same rows, never rewritten
            rebuilt = _rows_of(conn, NAMESPACES["beta"])["source_file"]
            assert rebuilt and not {i for i, _ in rebuilt} & {i for i, _ in beta_ids}  # beta's were re-read
            assert snapshot(conn) == before  # … into the same content
            with world["dbs"]["both"].connect() as both:
                assert per_namespace(conn) == per_namespace(both)
            assert conn.execute("SELECT count(*) FROM ah.meta WHERE key LIKE 'rebuild:%%'").fetchone()[0] == 0
            # a rebuild under way on beta is not an interrupted rebuild on alpha
            conn.execute("INSERT INTO ah.meta (key, value) VALUES ('rebuild:started_at:beta', '2026-12-02T10:00:00Z')")
            assert rebuild_interrupted(conn, "alpha") is None
            assert rebuild_interrupted(conn, "beta") == "2026-12-02T10:00:00Z"
            conn.rollback()
    finally:
        drop_database(database)


def test_each_host_archives_verifies_and_counts_its_own_copies(world, pg_server):
    """Two machines archive into one manifest, each into its own archive directory: every copy
    is recorded with its machine's name, and `archive --verify` and `status` on one machine see
    its copies only — the other's are on another disk, never "missing" here."""
    database = clone_database(pg_server, template=world["dbs"]["both"].name, prefix="hosts_archive")
    try:
        envs = {h: host_env(world["base"] / "archive", h, database.dsn, database.reader_dsn) for h in HOSTS}
        copied = {}
        for h in HOSTS:
            done = cli("archive", "--home", str(world["homes"][h]), "--json", env=envs[h])
            assert done.returncode == 0, done.stdout + done.stderr
            copied[h] = json.loads(done.stdout)["copied"]
        with database.connect() as conn:
            rows = dict(conn.execute("SELECT origin_host, count(*) FROM ah.archive_copy GROUP BY 1").fetchall())
        assert rows == copied and all(copied.values())  # no copy of unknown machine ('')
        for h in HOSTS:
            verified = cli("archive", "--verify", "--json", env=envs[h])
            assert verified.returncode == 0, verified.stdout + verified.stderr
            result = json.loads(verified.stdout)
            assert (result["checked"], result["bad"]) == (copied[h], [])
            status = json.loads(cli("status", "--json", env=envs[h]).stdout)
            assert status["archive"]["copies"] == copied[h]
    finally:
        drop_database(database)


def test_usage_by_host_and_sessions_by_host(world):
    dbs, envs = world["dbs"], world["envs"]
    by_host = json.loads(cli("usage", "--by", "host", "--json", "--timezone", "UTC", env=envs["alpha"]).stdout)
    rows = {r["period"]: r for r in by_host["host"]}
    assert sorted(rows) == ["alpha", "beta"] and "hostUnknown" not in by_host
    for h in HOSTS:  # each machine's row is what that machine's catalogue alone reports
        env = host_env(world["base"] / "check", h, dbs[h].dsn, dbs[h].reader_dsn)
        alone = json.loads(cli("usage", "daily", "--json", "--timezone", "UTC", env=env).stdout)["totals"]
        for key in ("calls", "inputTokens", "outputTokens", "cacheCreationTokens", "cacheReadTokens", "totalTokens"):
            assert rows[h][key] == alone[key], (h, key)
    assert (rows["alpha"]["calls"], rows["alpha"]["totalTokens"]) == (
        EXPECTED["alpha"]["calls"],
        EXPECTED["alpha"]["tokens"],
    )
    assert (rows["beta"]["calls"], rows["beta"]["totalTokens"]) == (
        EXPECTED["beta"]["calls"],
        EXPECTED["beta"]["tokens"],
    )

    for h in HOSTS:
        listed = cli("sessions", "--host", h, "--json", "--limit", "500", env=envs["alpha"])
        assert listed.returncode == 0, listed.stderr
        got = json.loads(listed.stdout)
        assert {r["origin_host"] for r in got} == {h}
        assert {r["namespace"] for r in got} == set(NAMESPACES[h])
        with dbs[h].connect() as conn:
            uids = {
                r[0]
                for r in conn.execute(
                    "SELECT session_uid FROM ah.session WHERE agent_id = '' AND NOT coalesce(is_subagent, false)"
                )
            }
        assert {r["session_uid"] for r in got} == uids and len(uids) == EXPECTED[h]["sessions"]
    unknown = cli("sessions", "--host", "gamma", env=envs["alpha"])
    assert unknown.returncode == 2 and unknown.stdout == ""
    assert unknown.stderr.strip().splitlines() == [
        "error: --host gamma: no session was indexed by it (hosts: alpha, beta)"
    ]


EXPECTED = {
    "alpha": {"calls": 338, "tokens": 12_812_986, "sessions": 17},
    "beta": {"calls": 1138, "tokens": 161_664_494, "sessions": 11},
}
"""Counted once from each half of the corpus (and checked against each machine's own catalogue above)."""


def test_a_catalogue_loaded_before_hosts_is_claimed_and_moved_not_read_again(
    corpus_rw_db,  # noqa: F811 - the imported fixture: the corpus loaded under `<agent>-local`
    corpus_home,
    own_tmp,
):
    with corpus_rw_db.connect() as conn:  # as a catalogue loaded before migration 0024: no host
        conn.execute("UPDATE ah.source_file SET origin_host = NULL")
        conn.execute("UPDATE ah.session SET origin_host = NULL")
        conn.commit()
        from datetime import UTC, datetime

        from agent_history.read.requests import usage_request
        from agent_history.read.usage import usage_report

        by_host = usage_report(conn, usage_request({"by": "host"}, flags=False), datetime.now(UTC))
        assert [r["period"] for r in by_host["host"]] == ["(unknown)"]  # unknown, and said why
        assert by_host["hostUnknown"].startswith("calls of sessions indexed before the catalogue recorded origin hosts")
        before = snapshot(conn)
        files = conn.execute("SELECT id, namespace FROM ah.source_file ORDER BY id").fetchall()
        assert {ns for _, ns in files} == {"claude-local", "codex-local", "pi-local"}
        assert conn.execute("SELECT count(*) FROM ah.session WHERE origin_host IS NOT NULL").fetchone()[0] == 0
    from agent_history.ingest.discovery import Source, agent_of_namespace, home_layout
    from agent_history.ingest.loader import Loader

    # the paths exactly as the corpus catalogue holds them (the CLI would resolve a symlinked ../shared)
    sources = [Source(ns, agent_of_namespace(ns), p) for ns, p in home_layout(corpus_home, "alpha").items()]
    with corpus_rw_db.connect(autocommit=True) as conn:
        summary = Loader(conn, host="alpha").run(sources)
    assert (summary.files_changed, summary.bytes_read) == (0, 0)  # nothing read again
    with corpus_rw_db.connect() as conn:
        # the same rows, now alpha's, under alpha's namespaces
        moved = conn.execute("SELECT id, namespace FROM ah.source_file ORDER BY id").fetchall()
        assert moved == [(i, ns.replace("-local", "-alpha")) for i, ns in files]
        for table in ("source_file", "session"):
            assert (
                conn.execute(f"SELECT count(*) FROM ah.{table} WHERE origin_host IS DISTINCT FROM 'alpha'").fetchone()[
                    0
                ]
                == 0
            ), table
        for table in ("session", "message"):
            assert conn.execute(f"SELECT count(*) FROM ah.{table} WHERE namespace LIKE '%%-local'").fetchone()[0] == 0
        after = snapshot(conn)
    renamed = {ns: ns.replace("-local", "-alpha") for _, ns in files}  # namespace values only, never text
    relabel = {t: sorted(tuple(renamed.get(v, v) for v in row) for row in rows) for t, rows in before.items()}
    assert after == relabel


@pytest.mark.parametrize(
    ("name", "why"),
    [
        (
            "Bad Host",
            "(lowercase letters, digits, '-' or '_', ≤ 63 characters, starting and ending with a letter or digit)",
        ),
        ("ai-box", "(claude-ai-box would read as a claude-ai namespace)"),
    ],
)
def test_a_host_name_that_is_no_namespace_part_is_one_line_exit_2(cli_env, own_tmp, name, why):
    config = own_tmp / "config.toml"
    config.write_text(f'[host]\nname = "{name}"\n')
    done = cli("sessions", env=cli_env)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.strip().splitlines() == [
        f"error: config host.name: host name {name!r} is not a valid namespace part {why}"
    ]


def test_namespaces_follow_the_host_only_with_a_named_host_or_a_remote_dsn(monkeypatch, own_tmp):
    monkeypatch.setenv("AGENT_HISTORY_CONFIG", str(own_tmp / "config.toml"))
    monkeypatch.delenv("AGENT_HISTORY_HOST", raising=False)
    monkeypatch.delenv("AGENT_HISTORY_DSN", raising=False)
    (own_tmp / "config.toml").write_text("")
    assert load_settings().profile == "local" and "claude-local" in load_settings().sources  # embedded
    assert load_settings("host=/tmp/sock dbname=x").profile == "local"  # a Unix socket: this machine's server
    monkeypatch.setattr("agent_history.config.system_host_name", lambda: "laptop")
    remote = load_settings("postgresql://ah@db.example/agent_history")
    assert remote.profile == "laptop" and "claude-laptop" in remote.sources and "claude-local" not in remote.sources
    assert remote.host == "laptop"
    (own_tmp / "config.toml").write_text('[host]\nname = "desk"\n')
    named = load_settings()
    assert (named.host, named.profile) == ("desk", "desk") and "codex-desk" in named.sources
    monkeypatch.setenv("AGENT_HISTORY_HOST", "desk2")
    assert load_settings().profile == "desk2"
    monkeypatch.setenv("AGENT_HISTORY_HOST", "desk_2.lan")
    with pytest.raises(ConfigError, match="AGENT_HISTORY_HOST: host name 'desk_2.lan' is not a valid namespace part"):
        load_settings()
    monkeypatch.delenv("AGENT_HISTORY_HOST")
    (own_tmp / "config.toml").write_text("")
    monkeypatch.setattr("agent_history.config.system_host_name", lambda: "ai-box")
    with pytest.raises(ConfigError, match=r"the system host name \(set \[host\] name"):
        load_settings("postgresql://ah@db.example/agent_history")
    embedded = load_settings()  # the name is not used for namespaces there: it is the true origin_host
    assert (embedded.host, embedded.profile) == ("ai-box", "local")
    monkeypatch.setattr("agent_history.config.system_host_name", lambda: "Mac Book")
    assert load_settings().host is None  # no usable name and none set: origin_host unknown (NULL)


@pytest.mark.parametrize(
    ("dsn", "remote"),
    [
        (None, False),
        ("", False),
        ("postgresql://ah@db.example/agent_history", True),
        ("postgresql://ah@localhost:5432/ah", True),
        ("host=10.0.0.5 dbname=ah", True),
        ("host=/run/postgresql dbname=ah", False),
        ("postgresql:///ah?host=/tmp", False),
        ("dbname=ah", False),
        ("postgresql://ah@/ah", False),
    ],
)
def test_a_remote_dsn_is_one_reaching_its_server_over_tcp(dsn, remote):
    assert dsn_is_remote(dsn) is remote


def test_archive_passes_lock_their_own_namespaces(db, corpus_home, own_tmp):
    """Two machines archive at once: an archive pass holds only its namespaces' locks."""
    from agent_history.ingest.archive.run import ARCHIVE_LOCK_CLASS, AnotherArchivePass, archive_pass
    from agent_history.ingest.discovery import Source

    homes = split_homes(corpus_home, own_tmp)
    beta = [Source("pi-beta", "pi", homes["beta"] / ".pi" / "agent")]
    with db.connect(autocommit=True) as holder, db.connect(autocommit=True) as conn:
        holder.execute("SELECT pg_advisory_lock(%s::int, hashtext('codex-alpha'))", (ARCHIVE_LOCK_CLASS,))
        summary = archive_pass(conn, beta, own_tmp / "archive")  # alpha's lock does not stop beta
        assert summary.copied == len(list((homes["beta"] / ".pi").rglob("*.jsonl"))) > 0
        alpha = [Source("codex-alpha", "codex", homes["alpha"] / ".codex")]
        with pytest.raises(
            AnotherArchivePass, match=r"^another archive pass is running \(it is archiving codex-alpha\)$"
        ):
            archive_pass(conn, alpha, own_tmp / "archive")
        holder.execute("SELECT pg_advisory_unlock_all()")
        assert archive_pass(conn, alpha, own_tmp / "archive").copied > 0


def test_a_laptop_whose_system_name_changed_keeps_its_catalogue_without_reading_it_again(db, corpus_home):
    """One machine, single-machine namespaces (``claude-local`` …): its system name changes (a
    laptop on another network). The next pass claims its rows under the new name — nothing is
    read again, no file is registered twice, the catalogue is the same."""
    from agent_history.ingest.discovery import Source, agent_of_namespace, home_layout
    from agent_history.ingest.loader import Loader

    sources = [Source(ns, agent_of_namespace(ns), p) for ns, p in home_layout(corpus_home).items()]
    with db.connect(autocommit=True) as conn:
        first = Loader(conn, host="oldname").run(sources)
        assert first.files_failed == 0 and first.files_changed > 0
        before = snapshot(conn)
        files = conn.execute("SELECT count(*) FROM ah.source_file").fetchone()[0]
        again = Loader(conn, host="newname").run(sources)
        assert (again.files_changed, again.bytes_read) == (0, 0)
        assert conn.execute("SELECT count(*) FROM ah.source_file").fetchone()[0] == files
        hosts = conn.execute(
            "SELECT DISTINCT origin_host FROM ah.source_file UNION SELECT DISTINCT origin_host FROM ah.session"
        ).fetchall()
        assert hosts == [("newname",)]
        assert snapshot(conn) == before  # origin_host aside (the snapshot leaves it out)


def test_a_row_another_hosts_pass_takes_leaves_both_sessions_rolled_up(db, corpus_home, own_tmp):
    """Host beta holds a copy of one of alpha's transcripts under another session id (a synced
    or copied home): the shared rows go to their owner (`db.tables.claims`), and beta's pass rolls up
    alpha's session too — its figures match its rows at once, not at alpha's next pass."""
    from agent_history.ingest.discovery import Source
    from agent_history.ingest.loader import Loader

    name = "5ed31c36-bca8-40fd-8d24-f1a1f0af7901"
    original = corpus_home / ".claude/projects/-Users-user1-workspace-example-site-dev-next" / f"{name}.jsonl"
    copy_uid = "00000000-2222-4333-8444-555555555555"  # sorts first: the tie on times goes its way
    homes = {h: own_tmp / h / ".claude" / "projects" / "-p" for h in HOSTS}
    for h in HOSTS:
        homes[h].mkdir(parents=True)
    shutil.copy(original, homes["alpha"] / f"{name}.jsonl")
    (homes["beta"] / f"{copy_uid}.jsonl").write_text(original.read_text().replace(name, copy_uid))
    counts = (
        "SELECT s.session_uid, s.message_count, (SELECT count(*) FROM ah.message m WHERE m.session_id = s.id) "
        "FROM ah.session s WHERE s.agent_id = '' ORDER BY 1"
    )
    with db.connect(autocommit=True) as conn:
        for h in HOSTS:
            summary = Loader(conn, host=h).run([Source(f"claude-{h}", "claude", own_tmp / h / ".claude")])
            assert summary.files_failed == 0
        rows = conn.execute(counts).fetchall()
        assert [r[0] for r in rows] == [copy_uid, name]
        assert all(stored == counted for _, stored, counted in rows), rows
        assert rows[0][2] > 0 and rows[1][2] == 0  # the copy owns the shared rows (same times, smaller uid)
        assert conn.execute("SELECT count(*) FROM ah.dirty_session").fetchone()[0] == 0
