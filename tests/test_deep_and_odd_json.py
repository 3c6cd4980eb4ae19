"""Inputs that used to traceback or lose a whole file: an OpenCode export saved as ``.jsonl``
(field cases E34/E35), lines nested ~1,000 levels deep, numbers JSON cannot hold. Each becomes a
parse issue at its line's offset, in `parse` and in `index`, and the file's other lines are kept."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest

from agent_history.model.values import MAX_JSON_DEPTH
from agent_history.parsers.base import Pos
from agent_history.parsers.common.document import load_document
from agent_history.parsers.common.lines import decode_line
from tests.homes import cli

BASE = ".claude/projects/-Users-user9-work-app/67a8478e-78dc-44ab-82ea-f65c8ead85f6.jsonl"


def parse(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "COLUMNS": "200"}
    return subprocess.run(
        [sys.executable, "-m", "agent_history", "parse", *args], capture_output=True, text=True, env=env, timeout=300
    )


def test_parse_reads_the_whole_field_directory_and_an_opencode_export_in_jsonl(field_dir):
    out = parse(str(field_dir), "--json")
    assert out.returncode == 0, out.stderr
    assert "Traceback" not in out.stderr
    files = {Path(f["path"]).name: f for f in json.loads(out.stdout)["files"]}
    assert [name for name, f in files.items() if f["error"]] == []
    e34, e35 = files["E34.jsonl"], files["E35.jsonl"]
    assert (e34["agent"], e34["sessions"], e34["tool_calls"], e34["issues_by_kind"]) == ("opencode", 1, 1, {})
    assert (e35["agent"], e35["sessions"], e35["issues_by_kind"]) == ("opencode", 1, {})
    assert e35["tokens"]["input_uncached"] == 900 and e35["tokens"]["output"] == 60


def _nest(depth: int, leaf: str = '"x"') -> str:
    return "[" * depth + leaf + "]" * depth


def _deep_record(base: dict, depth: int, leaf: str = '"x"') -> str:
    """A copy of a real user record (new uuid) whose message content is nested `depth` levels."""
    rec = {**base, "uuid": "deep-0000-4000-8000-000000000000"}
    rec["message"] = {**rec["message"], "content": "@@"}
    return json.dumps(rec).replace('"@@"', _nest(depth, leaf))


DEEP_LINES = {
    "array nested 1,100 levels": lambda base: _nest(1100),  # past orjson's 1,024: Python's decoder recursed
    "content nested 1,000 levels": lambda base: _deep_record(base, 1000),
    "NUL 1,000 levels deep": lambda base: _deep_record(base, 1000, '"a\\u0000b"'),
    "object nested 5,000 levels": lambda base: '{"a":' * 5000 + "1" + "}" * 5000,
}


def _deep_file(corpus_home: Path, dst: Path, which: str) -> tuple[Path, int, int]:
    """The real transcript with one deep line inserted as its third line → (path, that line's
    byte offset, the original file's line count)."""
    lines = (corpus_home / BASE).read_text().splitlines()
    user = next(json.loads(x) for x in lines if json.loads(x).get("type") == "user")
    out = [*lines[:2], DEEP_LINES[which](user), *lines[2:]]
    dst.parent.mkdir(parents=True, exist_ok=True)
    dst.write_text("\n".join(out) + "\n")
    return dst, len(("\n".join(lines[:2]) + "\n").encode()), len(lines)


@pytest.mark.parametrize("which", list(DEEP_LINES))
def test_parse_turns_a_deep_line_into_one_issue_and_keeps_the_other_lines(which, corpus_home, tmp_path):
    path, _, _ = _deep_file(corpus_home, tmp_path / "deep.jsonl", which)
    original = json.loads(parse(str(corpus_home / BASE), "--json").stdout)["files"][0]
    out = parse(str(path), "--json")
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)["files"][0]
    assert got["error"] is None
    assert got["issues_by_kind"] == {**original["issues_by_kind"], "too_deep": 1}
    assert got["model_calls"] == original["model_calls"] and got["tool_calls"] == original["tool_calls"]
    assert got["messages"] >= original["messages"]


@pytest.mark.parametrize("which", ["array nested 1,100 levels", "content nested 1,000 levels"])
def test_index_turns_a_deep_line_into_one_issue_at_its_offset(which, corpus_home, own_tmp, cli_env):
    home = own_tmp / "home"
    path, at, _ = _deep_file(corpus_home, home / BASE, which)
    done = cli("index", "--home", str(home), "--json", env=cli_env)
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert (summary["files_failed"], summary["issues"]) == (0, {"too_deep": 1})
    with psycopg.connect(cli_env["AGENT_HISTORY_DSN"]) as conn:
        issue = conn.execute("SELECT kind, byte_offset, line_number FROM ah.parse_issue").fetchall()
        status = conn.execute("SELECT status, indexed_offset = size FROM ah.source_file").fetchall()
        messages = conn.execute("SELECT count(*) FROM ah.message WHERE byte_offset > %s", (at,)).fetchone()[0]
    assert issue == [("too_deep", at, 3)]
    assert status == [("ok", True)]
    assert messages > 0  # the lines after it are read


def test_a_line_keeps_its_values_up_to_the_depth_bound():
    value, issues = decode_line(_nest(MAX_JSON_DEPTH).encode(), Pos(0, 0, 1))
    assert issues == []
    value, issues = decode_line(('{"keep": 1, "deep": ' + _nest(MAX_JSON_DEPTH) + "}").encode(), Pos(9, 0, 2))
    assert value[0]["keep"] == 1
    assert [(i.kind, i.byte_offset, i.line_number) for i in issues] == [("too_deep", 9, 2)]


@pytest.mark.parametrize(
    "raw",
    [b'{"n": NaN}', b'{"n": -Infinity}', b'{"n": 1e400}', b'{"n": ' + b"9" * 5000 + b"}"],
    ids=["NaN", "-Infinity", "1e400", "5000 digits"],
)
def test_numbers_json_cannot_hold_read_as_null_with_an_issue(raw):
    value, issues = decode_line(raw, Pos(5, 0, 1))
    assert value == [{"n": None}]
    assert [(i.kind, i.byte_offset) for i in issues] == [("non_finite_number", 5)]


def test_a_document_too_deep_to_decode_is_one_issue():
    value, issues = load_document(_nest(5000).encode() + b" ")
    assert value is None and [i.kind for i in issues] == ["too_deep"]
    value, issues = load_document(('{"a": ' + _nest(300) + ', "b": NaN}').encode())
    assert value["b"] is None and [i.kind for i in issues] == ["non_finite_number", "too_deep"]
