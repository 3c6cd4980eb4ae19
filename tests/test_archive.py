"""The archive (`agent_history.ingest.archive`, `agent-history archive`): real files, real zstd copies, the
real embedded server; `rebuild` reading deleted transcripts back from it; bad input (an unwritable
path, a full tmpfs, files vanishing or shrinking mid-copy); the retention warnings."""

from __future__ import annotations

import hashlib
import json
import os
import re
import sqlite3
import subprocess
import uuid
from pathlib import Path

import psycopg
import pytest

from agent_history.ingest.archive import manifest
from agent_history.ingest.archive.copy import decompress_to, hash_copy
from agent_history.ingest.archive.restore import choose_version
from agent_history.ingest.archive.run import archive_pass
from agent_history.ingest.archive.verify import verify_archive, verify_copy
from tests.homes import cli, copy_home, sources_for
from tests.new_formats_home import OPENCODE_EXPORT, add_message, export_to_sqlite, opencode_layout
from tests.snapshot import snapshot


@pytest.fixture
def home(corpus_home, own_tmp) -> Path:
    return copy_home(corpus_home, own_tmp / "corpus-home")


def sha256(path: Path) -> bytes:
    return hashlib.sha256(path.read_bytes()).digest()


def transcripts(home: Path) -> list[Path]:
    """Every transcript file of the corpus home, counted independently of discovery (all JSONL)."""
    return sorted(home.rglob("*.jsonl"))


def rows_of(conn, rel_path: str) -> list[manifest.Copy]:
    return [c for c in manifest.all_copies(conn) if c.rel_path == rel_path]


def test_deleted_transcripts_come_back_from_the_archive_by_rebuild(cli_env, db, home):
    files = transcripts(home)
    assert cli("index", "--home", str(home), env=cli_env).returncode == 0
    out = cli("archive", "--home", str(home), "--json", env=cli_env)
    assert out.returncode == 0, out.stderr
    summary = json.loads(out.stdout)
    assert (summary["files_seen"], summary["copied"], summary["skipped"]) == (len(files), len(files), [])
    assert summary["bytes_read"] == sum(p.stat().st_size for p in files)
    again = json.loads(cli("archive", "--home", str(home), "--json", env=cli_env).stdout)
    assert (again["copied"], again["unchanged"], again["bytes_read"]) == (0, len(files), 0)
    with db.connect() as conn:
        original = snapshot(conn)
        copies = manifest.all_copies(conn)
    archive_root = Path(cli_env["AGENT_HISTORY_DATA_DIR"]) / "archive"
    assert {c.path: c.sha256 for c in copies} == {str(p): sha256(p) for p in files}
    for c in copies:  # each copy decompresses to the file's bytes, and is smaller
        assert hash_copy(archive_root / c.archive_file) == (c.size, c.sha256)
        assert c.compressed_size == (archive_root / c.archive_file).stat().st_size

    claude = sorted((home / ".claude").rglob("*.jsonl"))
    gone = [*claude[:3], sorted((home / ".codex").rglob("*.jsonl"))[0]]
    with db.connect() as conn:
        only_archive = conn.execute(
            "SELECT count(*) FROM ah.session s JOIN ah.source_file f ON f.id = s.source_id "
            "WHERE s.agent_id = '' AND f.path = ANY(%s)",
            ([str(p) for p in gone],),
        ).fetchone()[0]
    assert only_archive >= 3  # one of the files is empty
    for p in gone:
        p.unlink()
    check = cli("rebuild-check", "--json", env=cli_env)
    assert check.returncode == 0, check.stderr
    counts = json.loads(check.stdout)["namespaces"]["claude-local"]
    assert counts == {"hot": len(claude) - 3, "cold": 0, "archive": len(claude), "cold_only": 3, "missing": 0}
    status = json.loads(cli("status", "--json", env=cli_env).stdout)
    assert status["archive"]["archive_only_sessions"] == only_archive
    assert (status["archive"]["files"], status["archive"]["copies"]) == (len(files), len(files))

    out = cli("rebuild", env=cli_env)
    assert out.returncode == 0, out.stderr
    with db.connect() as conn:
        assert snapshot(conn) == original
        archived = {r[0] for r in conn.execute("SELECT path FROM ah.source_file WHERE tier = 'archive'")}
        assert len(manifest.all_copies(conn)) == len(files)  # the manifest survives the rebuild
    assert archived == {str(p) for p in gone}  # recorded under the paths the agents wrote
    status = json.loads(cli("status", "--json", env=cli_env).stdout)
    assert status["archive"]["archive_only_sessions"] == only_archive
    assert not list((Path(cli_env["AGENT_HISTORY_DATA_DIR"]) / "restore").rglob("*.jsonl"))  # staging removed


def test_grown_file_replaces_its_copy_a_shrunk_or_rewritten_one_is_a_new_version(db, home, own_tmp):
    root = own_tmp / "archive"
    sources = sources_for(home)
    target = sorted((home / ".claude").rglob("*.jsonl"), key=lambda p: p.stat().st_size)[-1]
    rel = str(target.relative_to(home / ".claude"))
    with psycopg.connect(db.dsn, autocommit=True) as conn:
        archive_pass(conn, sources, root)
        [v1] = rows_of(conn, rel)
        first_file = v1.archive_file

        os.utime(target, ns=(target.stat().st_atime_ns, target.stat().st_mtime_ns + 10**9))
        s = archive_pass(conn, sources, root)
        assert (s.touched, s.copied, s.grown, s.new_versions) == (1, 0, 0, 0)  # same bytes: no new copy

        lines = target.read_bytes().splitlines(keepends=True)
        with target.open("ab") as fh:
            fh.write(lines[0])  # grows: the old bytes are its prefix
        s = archive_pass(conn, sources, root)
        assert (s.grown, s.new_versions, s.copied) == (1, 0, 0)
        [grown] = rows_of(conn, rel)
        assert (grown.version, grown.size, grown.sha256) == (1, target.stat().st_size, sha256(target))
        assert not (root / first_file).exists()  # replaced by the larger copy of the same version
        full_size, full_sha = grown.size, grown.sha256

        with target.open("r+b") as fh:
            fh.truncate(full_size // 2)  # shrinks: kept as version 2, version 1 untouched
        s = archive_pass(conn, sources, root)
        assert (s.grown, s.new_versions) == (0, 1)
        v1, v2 = rows_of(conn, rel)
        assert (v1.version, v1.size, v1.sha256) == (1, full_size, full_sha)
        assert verify_copy(root, v1) is None
        assert (v2.version, v2.size, v2.sha256) == (2, full_size // 2, sha256(target))
        assert choose_version(root, [v1, v2]) == v1  # the truncation is never what a rebuild reads

        target.write_bytes(bytes(b ^ 1 for b in target.read_bytes()))  # rewritten, same size
        s = archive_pass(conn, sources, root)
        assert (s.grown, s.new_versions) == (0, 1)
        versions = rows_of(conn, rel)
        assert [c.version for c in versions] == [1, 2, 3]
        assert versions[2].sha256 == sha256(target)
        assert verify_archive(conn, root).bad == []
        assert choose_version(root, versions) == versions[2]  # newest, not a prefix of another
        assert not list((root / ".work").iterdir())  # no temporary file left behind


def test_verify_lists_corrupt_and_missing_copies_and_exits_1(cli_env, db, home):
    n = len(transcripts(home))
    assert cli("archive", "--home", str(home), env=cli_env).returncode == 0
    ok = cli("archive", "--verify", "--json", env=cli_env)
    assert ok.returncode == 0, ok.stderr
    assert (json.loads(ok.stdout)["checked"], json.loads(ok.stdout)["bad"]) == (n, [])
    root = Path(cli_env["AGENT_HISTORY_DATA_DIR"]) / "archive"
    with db.connect() as conn:
        first, second = manifest.all_copies(conn)[:2]
    data = bytearray((root / first.archive_file).read_bytes())
    data[len(data) // 2] ^= 0xFF
    (root / first.archive_file).write_bytes(bytes(data))
    (root / second.archive_file).unlink()
    bad = cli("archive", "--verify", env=cli_env)
    assert bad.returncode == 1
    assert f"verified {n} copies" in bad.stdout
    lines = [ln for ln in bad.stdout.splitlines() if ln.startswith("bad copy:")]
    assert len(lines) == 2
    assert any(first.archive_file in ln for ln in lines)
    assert any(second.archive_file in ln and "missing" in ln for ln in lines)
    with db.connect() as conn:
        recorded = conn.execute("SELECT count(*) FROM ah.archive_copy WHERE verify_error IS NOT NULL").fetchone()[0]
    assert recorded == 2
    # the next pass repairs both from the hot files, which are still there
    again = json.loads(cli("archive", "--home", str(home), "--json", env=cli_env).stdout)
    assert (again["repaired"], again["copied"], again["unchanged"]) == (2, 0, n - 2)
    clean = cli("archive", "--verify", "--json", env=cli_env)
    assert clean.returncode == 0 and json.loads(clean.stdout)["bad"] == [], clean.stdout
    with db.connect() as conn:
        assert len(manifest.all_copies(conn)) == n  # replaced in place, no new version
    assert json.loads(cli("archive", "--home", str(home), "--json", env=cli_env).stdout)["repaired"] == 0


def test_a_new_archive_path_gets_a_copy_of_every_transcript(cli_env, db, home, own_tmp):
    n = len(transcripts(home))
    assert cli("archive", "--home", str(home), env=cli_env).returncode == 0
    moved = own_tmp / "new archive ü"
    env = {**cli_env, "AGENT_HISTORY_ARCHIVE": str(moved)}
    out = json.loads(cli("archive", "--home", str(home), "--json", env=env).stdout)
    assert (out["repaired"], out["unchanged"]) == (n, 0)
    with db.connect() as conn:
        assert all((moved / c.archive_file).is_file() for c in manifest.all_copies(conn))
    ok = cli("archive", "--verify", "--json", env=env)
    assert ok.returncode == 0 and json.loads(ok.stdout)["bad"] == [], ok.stdout


def test_an_unwritable_archive_path_is_one_line_and_exit_2(cli_env, home, own_tmp):
    blocker = own_tmp / "a-file"
    blocker.write_text("not a directory")
    Path(cli_env["AGENT_HISTORY_CONFIG"]).write_text(f'[archive]\npath = "{blocker}/archive"\n')
    for args in (("archive", "--home", str(home)), ("index", "--home", str(home), "--archive")):
        out = cli(*args, env=cli_env)
        assert out.returncode == 2, out.stderr
        lines = [ln for ln in out.stderr.splitlines() if not ln.startswith("warning:")]
        assert len(lines) == 1 and f"archive path {blocker}/archive is not writable" in lines[0], out.stderr
        assert "Traceback" not in out.stderr


@pytest.fixture
def small_tmpfs(own_tmp):
    mnt = own_tmp / "small"
    mnt.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=600k", "tmpfs", str(mnt)], capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()}")
    yield mnt
    subprocess.run(["umount", str(mnt)], check=True)


def test_a_full_disk_stops_the_pass_and_no_partial_copy_counts(cli_env, db, home, small_tmpfs):
    Path(cli_env["AGENT_HISTORY_CONFIG"]).write_text(f'[archive]\npath = "{small_tmpfs}/archive"\n')
    out = cli("archive", "--home", str(home), env=cli_env)
    assert out.returncode == 1, out.stdout
    lines = [ln for ln in out.stderr.splitlines() if not ln.startswith("warning:")]
    assert len(lines) == 1 and "No space left on device" in lines[0], out.stderr
    root = small_tmpfs / "archive"
    with db.connect() as conn:
        copies = manifest.all_copies(conn)
        assert 0 < len(copies) < len(transcripts(home))  # 2.7 MB compressed does not fit in 600 kB
        assert verify_archive(conn, root).bad == []  # every copy that counts is whole
    on_disk = {str(p.relative_to(root)) for p in root.rglob("*.zst") if ".work" not in p.parts}
    assert on_disk == {c.archive_file for c in copies}  # the one in progress left nothing
    assert not list((root / ".work").iterdir())


def test_a_file_vanishing_or_shrinking_mid_copy_is_skipped_and_copied_next_pass(db, home, own_tmp):
    root = own_tmp / "archive"
    victims = sorted((home / ".codex").rglob("*.jsonl"))[:2]
    vanish, shrink = victims

    def meddle(ref) -> None:  # runs after the file's stat, before its bytes are read
        if ref.path == str(vanish):
            vanish.unlink()
        elif ref.path == str(shrink):
            with shrink.open("r+b") as fh:
                fh.truncate(shrink.stat().st_size // 3)

    with psycopg.connect(db.dsn, autocommit=True) as conn:
        s = archive_pass(conn, sources_for(home), root, on_file=meddle)
        assert s.copied == len(transcripts(home)) - 1  # all but the two (one no longer on disk)
        assert len(s.skipped) == 2
        assert any(str(vanish) in line and "vanished" in line for line in s.skipped)
        assert any(str(shrink) in line and "ended at byte" in line for line in s.skipped)
        assert {c.path for c in manifest.all_copies(conn)} & {str(vanish), str(shrink)} == set()
        s = archive_pass(conn, sources_for(home), root)
        assert (s.copied, s.skipped) == (1, [])
        [row] = [c for c in manifest.all_copies(conn) if c.path == str(shrink)]
        assert (row.size, row.sha256) == (shrink.stat().st_size, sha256(shrink))


def test_a_sqlite_database_is_archived_from_a_consistent_snapshot_with_its_wal(cli_env, db, own_tmp):
    home = own_tmp / "oc-home"
    data = opencode_layout(home)
    export = json.loads(OPENCODE_EXPORT.read_text())
    writer = export_to_sqlite(export, data / "opencode.db")  # WAL mode, never checkpointed: rows in -wal
    try:
        assert (data / "opencode.db-wal").stat().st_size > 0
        counts = {t: writer.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in ("session", "message", "part")}
        assert cli("index", "--home", str(home), env=cli_env).returncode == 0
        out = cli("archive", "--home", str(home), "--json", env=cli_env)
        assert out.returncode == 0, out.stderr
        root = Path(cli_env["AGENT_HISTORY_DATA_DIR"]) / "archive"
        with db.connect() as conn:
            [row] = [c for c in manifest.all_copies(conn) if c.kind == "database"]
            original = snapshot(conn)
        assert row.table_rows == counts
        restored = own_tmp / "restored.db"
        decompress_to(root / row.archive_file, restored)
        with sqlite3.connect(restored) as copy:
            assert {t: copy.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in counts} == counts

        more = json.loads(json.dumps(export["messages"][0]))
        more["info"]["id"] = f"msg_{uuid.uuid4().hex}"
        for p in more["parts"]:
            p["id"], p["messageID"] = f"prt_{uuid.uuid4().hex}", more["info"]["id"]
        add_message(writer, more, bump_ms=1000)
        s = json.loads(cli("archive", "--home", str(home), "--json", env=cli_env).stdout)
        assert (s["grown"], s["new_versions"]) == (1, 0)  # rows only added: the same version grows
        writer.execute("DELETE FROM part WHERE message_id = ?", (more["info"]["id"],))
        writer.execute("DELETE FROM message WHERE id = ?", (more["info"]["id"],))
        s = json.loads(cli("archive", "--home", str(home), "--json", env=cli_env).stdout)
        assert (s["grown"], s["new_versions"]) == (0, 1)  # rows lost: a new version beside the old
    finally:
        writer.close()
    with db.connect() as conn:
        versions = [c for c in manifest.all_copies(conn) if c.kind == "database"]
    assert [v.table_rows["message"] for v in versions] == [counts["message"] + 1, counts["message"]]

    for p in data.glob("opencode.db*"):
        p.unlink()
    out = cli("rebuild", env=cli_env)
    assert out.returncode == 0, out.stderr
    with db.connect() as conn:
        rebuilt = snapshot(conn)
        tiers = dict(conn.execute("SELECT tier, count(*) FROM ah.source_file GROUP BY 1").fetchall())
    assert tiers.get("archive") == 1
    # the newest version not a truncation of another is read back: the one with the same rows
    assert rebuilt["message"] == original["message"]


@pytest.mark.parametrize(
    ("settings", "expect"),
    [
        (None, "cleanupPeriodDays is unset in {file} (default 30 days)"),
        ({"cleanupPeriodDays": 30}, "cleanupPeriodDays = 30 in {file}"),
        ({"cleanupPeriodDays": 120}, None),
    ],
)
def test_index_and_status_warn_about_claude_code_retention(cli_env, home, settings, expect):
    file = home / ".claude" / "settings.json"
    if settings is not None:
        file.write_text(json.dumps(settings))
    index = cli("index", "--home", str(home), env=cli_env)
    assert index.returncode == 0, index.stderr
    warned = [ln for ln in index.stderr.splitlines() if "cleanupPeriodDays" in ln]
    if expect is None:
        assert warned == []
        return
    if settings is None:  # `index` names a setting only in a settings file that exists; `status` always
        assert warned == []
    else:
        assert len(warned) == 1 and expect.format(file=file) in warned[0], index.stderr
    env = {**cli_env, "CLAUDE_CONFIG_DIR": str(home / ".claude")}  # status reads the configured home
    status = cli("status", "--json", env=env)
    assert status.returncode == 0, status.stderr
    [w] = json.loads(status.stdout)["retention_warnings"]
    assert (w["setting"], w["file"], w["days"]) == (
        "cleanupPeriodDays",
        str(file),
        (settings or {}).get("cleanupPeriodDays"),
    )


def test_the_archive_metrics_report_the_archive_tier(db, home, own_tmp):
    from agent_history.config import Settings
    from agent_history.telemetry.collectors import CollectContext, collect_archive
    from agent_history.telemetry.policy import ModelLabels
    from tests.homes import index

    root = own_tmp / "archive"
    ctx = CollectContext(Settings(archive_path=root), sources_for(home), [], ModelLabels(()))
    with psycopg.connect(db.dsn, autocommit=True) as conn:
        index(db, home)
        assert [s for s in collect_archive(conn, ctx) if ("tier", "archive") in s.labels] == []  # never run
        archive_pass(conn, sources_for(home), root)
        late = home / ".claude" / "projects" / "late" / f"{uuid.uuid4()}.jsonl"
        late.parent.mkdir()
        late.write_bytes(sorted((home / ".claude").rglob("*.jsonl"))[0].read_bytes())
        got = collect_archive(conn, ctx)

    def value(name: str, **labels) -> float:
        [v] = [s.value for s in got if s.family == name and s.labels == tuple(sorted(labels.items()))]
        return v

    for ns, agent_dir in (("claude-local", ".claude"), ("codex-local", ".codex"), ("pi-local", ".pi/agent")):
        copies = list((root / ns).rglob("*.zst"))
        archive = {"namespace": ns, "tier": "archive"}
        assert (
            value("ah_archive_files", **archive)
            == len(copies)
            == len(list((home / agent_dir).rglob("*.jsonl"))) - (ns == "claude-local")
        )
        assert value("ah_archive_bytes", **archive) == sum(p.stat().st_size for p in copies)
        assert value("ah_archive_tier_available", **archive) == 1
        assert value("ah_archive_files_missing", **archive) == 0
        assert value("ah_archive_uncopied_files", namespace=ns) == (ns == "claude-local")
        assert 0 < value("ah_filesystem_used_ratio", **archive) < 1


def test_an_aider_history_is_archived_as_append_only_and_leaves_no_orphan_copy(cli_env, db, own_tmp):
    from tests import repo_sample_homes_b as b

    work = own_tmp / "work"
    histories = b.aider_projects(work)
    Path(cli_env["AGENT_HISTORY_CONFIG"]).write_text(f'[aider]\nroots = ["{work}"]\n')
    root = Path(cli_env["AGENT_HISTORY_DATA_DIR"]) / "archive"
    out = cli("archive", "--json", env=cli_env)
    assert out.returncode == 0, out.stderr
    assert "Traceback" not in out.stderr
    s = json.loads(out.stdout)
    assert (s["copied"], s["skipped"]) == (3, [])
    with db.connect() as conn:
        copies = [c for c in manifest.all_copies(conn) if c.agent == "aider"]
    assert {c.path: (c.kind, c.sha256) for c in copies} == {str(p): ("markdown", sha256(p)) for p in histories.values()}
    assert all(c.head_sha256 is not None for c in copies)  # prefix evidence kept, as for JSONL

    history = histories["quickdraw"]
    with history.open("a") as fh:  # Aider appends a session: the same version grows
        fh.write("\n# aider chat started at 2024-10-10 09:00:00\n\n#### add a dark mode  \n\nDone.\n\n")
    s = json.loads(cli("archive", "--json", env=cli_env).stdout)
    assert (s["grown"], s["new_versions"], s["skipped"]) == (1, 0, [])
    history.write_text("# aider chat started at 2024-10-11 10:00:00\n\n#### rewritten\n")  # shrunk
    s = json.loads(cli("archive", "--json", env=cli_env).stdout)
    assert (s["grown"], s["new_versions"]) == (0, 1)
    with db.connect() as conn:
        named = {c.archive_file for c in manifest.all_copies(conn)}
    on_disk = {str(p.relative_to(root)) for p in root.rglob("*.zst")}
    assert on_disk == named and len(named) == 4


def test_the_manifest_accepts_every_source_kind_of_the_registry(db):
    from agent_history.harnesses.spec import SOURCE_KINDS

    with db.connect() as conn:
        definition = conn.execute(
            "SELECT pg_get_constraintdef(oid) FROM pg_constraint WHERE conname = 'archive_copy_kind_check'"
        ).fetchone()[0]
    allowed = set(re.findall(r"'([a-z]+)'::text", definition))
    assert allowed == set(SOURCE_KINDS)


def test_an_archive_that_sees_no_file_says_where_it_looked_and_warns_only_of_real_settings(cli_env, own_tmp):
    empty = own_tmp / "empty-home"
    empty.mkdir()
    (empty / ".claude").mkdir()  # a home that exists, without settings.json or transcripts
    out = cli("archive", "--home", str(empty), "--json", env=cli_env)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["files_seen"] == 0
    [line] = [x for x in out.stderr.splitlines() if "no transcripts to archive" in x]
    assert f"looked in {empty / '.claude'}" in line and "--home DIR" in line
    assert "settings.json" not in out.stderr and "cleanupPeriodDays" not in out.stderr
    (empty / ".claude" / "settings.json").write_text('{"cleanupPeriodDays": 30}')
    warned = cli("archive", "--home", str(empty), env=cli_env)
    assert warned.returncode == 0, warned.stderr
    assert f"cleanupPeriodDays = 30 in {empty / '.claude' / 'settings.json'}" in warned.stderr


def test_a_copy_the_manifest_refuses_is_one_line_and_leaves_no_file(cli_env, db, own_tmp):
    from tests import repo_sample_homes_b as b

    work = own_tmp / "work"
    histories = b.aider_projects(work)
    Path(cli_env["AGENT_HISTORY_CONFIG"]).write_text(f'[aider]\nroots = ["{work}"]\n')
    with db.connect() as conn:  # a manifest as released before markdown was archived
        conn.execute("ALTER TABLE ah.archive_copy DROP CONSTRAINT archive_copy_kind_check")
        conn.execute(
            "ALTER TABLE ah.archive_copy ADD CONSTRAINT archive_copy_kind_check "
            "CHECK (kind IN ('jsonl', 'document', 'database'))"
        )
        conn.commit()
    out = cli("archive", "--json", env=cli_env)
    assert out.returncode == 0, out.stderr
    assert "Traceback" not in out.stderr
    s = json.loads(out.stdout)
    assert s["copied"] == 0 and sorted(line.split(": ", 1)[0] for line in s["skipped"]) == sorted(
        str(p) for p in histories.values()
    )
    assert all("the archive manifest refused the copy" in line and "\n" not in line for line in s["skipped"])
    root = Path(cli_env["AGENT_HISTORY_DATA_DIR"]) / "archive"
    assert list(root.rglob("*.zst")) == []


def test_index_archive_json_prints_one_document_per_pass_with_the_archive_inside(cli_env, own_tmp):
    one = own_tmp / "one-home" / ".claude" / "projects" / "-tmp-p"
    one.mkdir(parents=True)
    line = {
        "type": "user",
        "uuid": "u-1",
        "sessionId": "s-archive-json",
        "timestamp": "2026-01-02T03:04:05Z",
        "cwd": "/tmp/p",
        "message": {"role": "user", "content": "hello"},
    }
    (one / "s-archive-json.jsonl").write_text(json.dumps(line) + "\n")
    out = cli("index", "--home", str(own_tmp / "one-home"), "--archive", "--json", env=cli_env)
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)  # one document: a second would make this raise
    assert doc["files_scanned"] == 1 and doc["archive"]["files_seen"] == 1 and doc["archive"]["copied"] == 1
