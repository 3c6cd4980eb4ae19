"""Edits in the middle of an indexed file (issue 10, defect 3): sampled windows checked when a file
grows, a whole-prefix CRC compared by `rebuild-check --verify`. Real corpus files, real database,
the CLI in subprocesses."""

from __future__ import annotations

import io
import json
import os
import random
import sys
import zlib
from pathlib import Path

import psycopg
import pytest

from agent_history.ingest.prefix import (
    MAX_WINDOWS,
    WINDOW_BYTES,
    first_changed_window,
    update_windows,
    window_positions,
)
from agent_history.ingest.rebuild import truncate_derived
from tests.homes import cli, copy_home, index

PY = sys.executable
LEGACY = "rollout-2025-09-10T18-58-38-cf4def41-21e0-4b91-adb4-5397c1492084.jsonl"
"""The corpus's legacy Codex rollout: 1,749,395 bytes, 1,370 lines (the size of the issue's case)."""


@pytest.fixture
def home(corpus_home, tmp_path) -> Path:
    return copy_home(corpus_home, tmp_path / "home")


@pytest.fixture
def legacy_home(corpus_home, tmp_path) -> Path:
    """A home holding only the legacy rollout, at its corpus path (namespace ``codex-local``): the
    tests that edit and re-read that one file, whose other 35 files were bystanders indexed again on
    every pass (≈ 6 times its bytes). A word edited in it is unique in the whole corpus too (their
    full-corpus runs counted 0 rows before and 1 after), so the values asserted stay the same."""
    source = next(corpus_home.rglob(LEGACY))
    target = tmp_path / "home" / source.relative_to(corpus_home)
    target.parent.mkdir(parents=True)
    target.write_bytes(source.read_bytes())
    return tmp_path / "home"


def legacy(home: Path) -> Path:
    return next(home.rglob(LEGACY))


def prefix_row(db, path: Path) -> tuple:
    with db.connect() as conn:
        return conn.execute(
            "SELECT indexed_offset, head_sha256, checkpoint_sha256, prefix_windows, prefix_crc32 "
            "FROM ah.source_file WHERE path = %s",
            (str(path),),
        ).fetchone()


def same_length_edit(path: Path, at: int, restore_mtime: bool = False) -> str:
    """Replace the first letter of the first lowercase word at or after byte `at` whose edited
    form is unique in the file by ``q`` (the file stays valid JSONL of the same size). Returns
    the edited word."""
    st = path.stat()
    data = bytearray(path.read_bytes())
    lower = range(97, 123)
    while True:
        while data[at - 1] in lower or data[at] not in lower:
            at += 1
        end = at
        while data[end] in lower:
            end += 1
        word = b"q" + bytes(data[at + 1 : end])
        if end - at >= 4 and data[at] != ord("q") and data.count(word) == 0:
            break
        at = end
    data[at] = ord("q")
    path.write_bytes(bytes(data))
    if restore_mtime:
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    return word.decode()


def rows_with(db, word: str) -> int:
    """Messages and tool calls whose text holds `word`."""
    with db.connect() as conn:
        return conn.execute(
            "SELECT (SELECT count(*) FROM ah.message WHERE strpos(text, %s) > 0) "
            "+ (SELECT count(*) FROM ah.tool_call WHERE strpos(output, %s) > 0 OR strpos(input, %s) > 0)",
            (word, word, word),
        ).fetchone()[0]


def append_last_line(path: Path) -> None:
    data = path.read_bytes()
    with open(path, "ab") as fh:
        fh.write(data[data.rindex(b"\n", 0, len(data) - 1) + 1 :])


# -- pure -------------------------------------------------------------------------------------


def test_window_positions_sample_the_middle_with_a_doubling_stride():
    assert window_positions(100_000) == (16384, [])  # head and checkpoint already cover it all
    assert window_positions(200_000) == (16384, [65536, 81920, 98304, 114688])
    stride, at = window_positions(1_749_395)
    assert (stride, len(at), at[0], at[-1]) == (32768, 50, 65536, 1_671_168)
    assert 360_448 in at  # the window holding byte ~362 k (the issue's edit)
    for size in (3_000_000, 50_000_000, 10**10):
        stride, at = window_positions(size)
        assert 0 < len(at) <= MAX_WINDOWS and at[-1] + WINDOW_BYTES <= size - 64 * 1024
        # the file doubled: the windows kept are the earlier ones at the (doubled) stride
        earlier = window_positions(size // 2)[1]
        assert [p for p in earlier if p % stride == 0] == [p for p in at if p <= earlier[-1]]


def test_windows_depend_only_on_content_and_offset_and_see_an_edit():
    data = random.Random(10).randbytes(2_048_000)
    fh = io.BytesIO(data)
    whole = update_windows(fh, len(data), None)
    grown = update_windows(fh, len(data), update_windows(fh, 700_000, None))
    assert grown == whole and whole["stride"] == 32768 and len(whole["at"]) == 59
    assert first_changed_window(fh, whole) is None
    edited = bytearray(data)
    edited[360_448 + 17] ^= 1
    assert first_changed_window(io.BytesIO(bytes(edited)), whole) == 360_448


# -- loader -----------------------------------------------------------------------------------


def test_batches_and_a_resumed_file_store_the_same_windows_and_crc_as_one_read(db, legacy_home):
    home = legacy_home
    path = legacy(home)
    data = path.read_bytes()
    half = data.index(b"\n", len(data) // 3) + 1
    path.write_bytes(data[:half])
    index(db, home, batch_lines=50)
    path.write_bytes(data)
    assert index(db, home, batch_lines=7).issues.get("source_rewritten", 0) == 0
    resumed = prefix_row(db, path)
    with psycopg.connect(db.dsn, autocommit=True) as conn:
        truncate_derived(conn)
    index(db, home)
    assert prefix_row(db, path) == resumed
    offset, _, _, windows, crc = resumed
    assert (offset, crc) == (1_749_395, zlib.crc32(data))
    assert (windows["stride"], len(windows["at"])) == (32768, 50)


def test_a_same_length_edit_inside_a_window_then_an_append_is_a_rewrite(db, legacy_home):
    home = legacy_home
    path = legacy(home)
    index(db, home)
    new = same_length_edit(path, 362_000)  # inside a tool output, in the window at 360,448
    append_last_line(path)
    summary = index(db, home)
    assert summary.issues["source_rewritten"] == 1
    with db.connect() as conn:
        detail = conn.execute("SELECT detail FROM ah.parse_issue WHERE kind = 'source_rewritten'").fetchone()[0]
    assert detail == (
        "file changed before byte 1749395 (the window at byte 360,448 changed; now 1750288 bytes); re-parsed"
    )
    assert rows_with(db, new) == 1
    assert prefix_row(db, path)[4] == zlib.crc32(path.read_bytes())


def test_a_same_size_edit_restoring_the_mtime_is_found_by_verify_and_fixed_by_rebuild(cli_env, db, legacy_home):
    home = legacy_home
    path = legacy(home)
    assert cli("index", "--home", str(home), env=cli_env).returncode == 0
    clean = cli("rebuild-check", "--verify", "--json", env=cli_env)
    assert clean.returncode == 0, clean.stderr
    verify = json.loads(clean.stdout)["verify"]
    n = len(list(home.rglob("*.jsonl")))
    assert (verify["files_checked"], verify["changed"], verify["no_baseline"], verify["absent"]) == (n, 0, 0, 0)
    assert verify["bytes_hashed"] == sum(p.stat().st_size for p in home.rglob("*.jsonl"))

    new = same_length_edit(path, 351_000, restore_mtime=True)  # in a tool output between two windows
    assert first_changed_window(open(path, "rb"), prefix_row(db, path)[3]) is None
    again = cli("index", "--home", str(home), "--json", env=cli_env)
    assert json.loads(again.stdout)["files_changed"] == 0  # an index pass cannot see it
    assert rows_with(db, new) == 0

    found = cli("rebuild-check", "--verify", "--json", env=cli_env)
    assert found.returncode == 1
    verify = json.loads(found.stdout)["verify"]
    assert (verify["changed"], verify["unnoticed"]) == (1, 1)
    assert verify["changed_files"] == [
        {
            "path": str(path),
            "namespace": "codex-local",
            "indexed_offset": 1_749_395,
            "size": 1_749_395,
            "reason": "content_changed",
            "noticed_by_index": False,
        }
    ]
    table = cli("rebuild-check", "--verify", "--table", env=cli_env)
    assert table.returncode == 1
    lines = table.stdout.splitlines()
    assert (
        f"content_changed (unnoticed by index): {path} [codex-local; 1,749,395 bytes indexed, now 1,749,395]" in lines
    )
    assert lines[-1] == "run `agent-history rebuild` to re-read the files index misses"
    assert any(
        line.endswith("1 changed, 1 of them unnoticed by index; 0 without a baseline, 0 absent") for line in lines
    )

    assert cli("rebuild", env=cli_env).returncode == 0
    assert rows_with(db, new) == 1 and cli("rebuild-check", "--verify", env=cli_env).returncode == 0


def test_verify_tells_a_truncated_file_and_a_catalogue_without_baseline(cli_env, db, home):
    path = legacy(home)
    assert cli("index", "--home", str(home), env=cli_env).returncode == 0
    other = max((p for p in home.rglob("*.jsonl") if p != path), key=lambda p: p.stat().st_size)
    data = other.read_bytes()
    other.write_bytes(data[: data.index(b"\n", len(data) // 2) + 1])
    with db.connect() as conn:  # as a catalogue written before revision 0005_source_windows
        conn.execute(
            "UPDATE ah.source_file SET prefix_crc32 = NULL, prefix_windows = NULL WHERE path = %s", (str(path),)
        )
    out = cli("rebuild-check", "--verify", "--json", env=cli_env)
    assert out.returncode == 1
    verify = json.loads(out.stdout)["verify"]
    assert (verify["no_baseline"], verify["changed"], verify["unnoticed"]) == (1, 1, 0)
    assert [(c["path"], c["reason"], c["noticed_by_index"]) for c in verify["changed_files"]] == [
        (str(other), "truncated", True)
    ]
    # the baseline is taken the next time the file grows, after its edges were checked
    append_last_line(path)
    summary = index(db, home)
    assert summary.issues["source_rewritten"] == 1  # the truncated file
    _, _, _, windows, crc = prefix_row(db, path)
    assert crc == zlib.crc32(path.read_bytes()) and len(windows["at"]) == 50
    assert cli("rebuild-check", "--verify", env=cli_env).returncode == 0
