"""`rebuild-check` at scale: the catalogue is streamed and the lists it keeps are capped while
the counts cover every file (a catalogue of many missing files, through the real CLI)."""

from __future__ import annotations

import json

import psycopg

from agent_history.ingest.rebuild import MAX_LISTED_MISSING, rebuild_check
from agent_history.ingest.verify import MAX_LISTED, Changed, VerifyResult, verify_prefixes
from tests.homes import cli


def _catalogue_gone_files(db, own_tmp, n: int) -> list[str]:
    """`n` catalogued transcripts of claude-local whose files no longer exist."""
    paths = [str(own_tmp / "gone" / f"s{i:04d}.jsonl") for i in range(n)]
    with psycopg.connect(db.dsn, autocommit=True) as conn:
        conn.execute(
            "INSERT INTO ah.source_file (path, namespace, agent, rel_path, indexed_offset, prefix_crc32) "
            "SELECT p, 'claude-local', 'claude', 'projects/x/' || right(p, 15), 100, 1 FROM unnest(%s::text[]) AS p",
            (paths,),
        )
    return paths


def test_many_missing_files_are_all_counted_and_the_first_hundred_listed(cli_env, db, own_tmp):
    paths = _catalogue_gone_files(db, own_tmp, MAX_LISTED_MISSING + 50)
    for autocommit in (True, False):  # `rebuild` checks on an autocommit connection, the CLI on a transaction
        with psycopg.connect(db.dsn, autocommit=autocommit) as conn:
            check = rebuild_check(conn, [])
            verified = verify_prefixes(conn)
        assert (check.missing_count, check.missing_files, check.would_refuse) == (150, paths[:100], True)
        assert check.namespaces == {"claude-local": {"hot": 0, "cold": 0, "archive": 0, "cold_only": 0, "missing": 150}}
        assert (verified.absent, verified.files_checked, verified.changed_count) == (150, 0, 0)
    out = cli("rebuild-check", "--json", env=cli_env)
    assert out.returncode == 1
    data = json.loads(out.stdout)
    assert (data["missing_count"], len(data["missing_files"])) == (150, 100)
    text = cli("rebuild-check", env={**cli_env, "COLUMNS": "200"})
    assert text.returncode == 1
    assert "… and 50 more missing from every tier" in text.stdout.splitlines()
    assert f"missing from every tier: {paths[99]}" in text.stdout.splitlines()
    assert f"missing from every tier: {paths[100]}" not in text.stdout


def test_verify_counts_every_changed_file_and_lists_the_first_max_listed():
    result = VerifyResult()
    for i in range(MAX_LISTED + 5):
        result.add(Changed(f"/f{i}", "claude-local", 10, 5, "truncated", noticed_by_index=i % 2 == 0))
    data = result.as_dict()
    assert (data["changed"], data["unnoticed"], len(data["changed_files"])) == (1005, 502, 1000)
    assert data["changed_files"][-1]["path"] == "/f999"
