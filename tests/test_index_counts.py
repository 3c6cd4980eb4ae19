"""The index summary counts new rows and merged rows apart (issue 10: `rows:` counted every row
write, "message 11,170" while the catalogue held 10,264). Real corpus, real database, the CLI."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import psycopg
import pytest

from tests.homes import copy_home, index

PY = sys.executable


@pytest.fixture
def home(corpus_home, tmp_path) -> Path:
    return copy_home(corpus_home, tmp_path / "home")


def catalogue_counts(db, tables) -> dict[str, int]:
    with db.connect() as conn:
        return {t: conn.execute(f"SELECT count(*) FROM ah.{t}").fetchone()[0] for t in tables}


MERGED_IN_BATCHES_OF_50 = {
    "session": 29,  # a session's bounds and title move on as its later batches arrive
    "turn": 56,  # a turn open at a batch boundary gets its end
    "model_call": 3,  # a Claude response split over a boundary: token counts merged by max
    "tool_call": 32,  # a call and its result on either side of a boundary
    "record_type_seen": 360,  # the per-file counters add up
}


@pytest.mark.parametrize("batch_lines", [20_000, 50])
def test_new_rows_equal_the_catalogue_and_merges_are_counted_apart(db, home, batch_lines):
    summary = index(db, home, batch_lines=batch_lines)
    new, merged = +summary.rows_new, +summary.rows_merged
    assert new == catalogue_counts(db, new)
    assert new["message"] == 1588 and new["model_call"] == 1496
    assert +summary.rows == new + merged
    # one batch folds every re-observation in memory: nothing is left to merge in the database
    assert dict(merged) == ({} if batch_lines == 20_000 else MERGED_IN_BATCHES_OF_50)


def test_reobserved_rows_that_change_nothing_are_neither_new_nor_merged(db, home):
    index(db, home)
    target = max((home / ".claude").rglob("*.jsonl"), key=lambda p: p.stat().st_size)  # records keyed by uuid
    data = target.read_bytes()
    last = data[data.rindex(b"\n", 0, len(data) - 1) + 1 :]
    with open(target, "ab") as fh:
        fh.write(last)  # the same record again: merges as a no-op
    summary = index(db, home)
    assert summary.files_changed == 1
    # only the file's own bookkeeping moves: one more sighting of the record type
    assert (+summary.rows_new, +summary.rows_merged) == (Counter(), Counter({"record_type_seen": 1}))


def test_cli_summary_line_and_json_show_new_and_merged(cli_env, db, home):
    env = {**cli_env, "AGENT_HISTORY_BATCH_LINES": "50"}
    out = subprocess.run(
        [PY, "-m", "agent_history", "index", "--home", str(home)], env=env, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    line = out.stdout.strip().splitlines()[-1]
    assert "; rows: compaction 4 new, file_touch 880 new, git_event 91 new, message 1,588 new, " in line
    assert "model_call 1,496 new + 3 merged, " in line and "session 34 new + 29 merged, " in line
    with psycopg.connect(db.dsn, autocommit=True) as conn:
        conn.execute("TRUNCATE ah.session, ah.source_file CASCADE")
    out = subprocess.run(
        [PY, "-m", "agent_history", "index", "--home", str(home), "--json"], env=env, capture_output=True, text=True
    )
    data = json.loads(out.stdout)
    assert data["rows_new"] == catalogue_counts(db, data["rows_new"])
    assert data["rows_merged"] == MERGED_IN_BATCHES_OF_50
    assert data["rows"]["session"] == 34 + 29
