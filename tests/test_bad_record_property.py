"""Property: random mutations of real records, written as one bad file beside good files in one
home, never change what the good files load, never fail the bad file or the pass, keep the bad
file's other lines, and leave a parse issue at the mutated record's offset whenever the mutation
makes a value unstorable (real loader, real embedded PostgreSQL).

Each example appends one mutated copy of a real record to the bad file (so every original line
keeps its byte offset) and indexes the home into one database, emptied between examples. The
examples are derandomized and few: the run is the same on every machine and takes seconds.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import psycopg
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from agent_history.ingest.loader import Loader
from agent_history.ingest.rebuild import truncate_derived
from agent_history.model.merge import fold
from agent_history.model.rows import MessageRow
from agent_history.parsers import parser_class
from agent_history.parsers.base import ParseContext
from agent_history.parsers.driver import parse_bytes
from tests.bad_home import BAD, BAD_BASE, base_records, make_home, offsets, rel_of
from tests.conftest import SHARED
from tests.homes import sources_for
from tests.snapshot import snapshot


def _nest(depth: int) -> str:
    return "[" * depth + '"x"' + "]" * depth


ALWAYS_BAD = {
    "nested 300 levels": (_nest(300), "too_deep"),
    "nested 1,100 levels": (_nest(1100), "too_deep"),
    "NUL": ('"a\\u0000b"', "lone_surrogate"),
    "lone surrogate": ('"\\ud800x"', "lone_surrogate"),
    "NaN": ("NaN", "non_finite_number"),
    "-Infinity": ("-Infinity", "non_finite_number"),
    "1e400": ("1e400", "non_finite_number"),
    "5,000 digits": ("9" * 5000, "non_finite_number"),
}
"""JSON text that no column can store wherever it is written → the issue kind it must leave."""
ODD = {
    "300 KB string": '"' + "x" * 300_000 + '"',
    "2^63": str(2**63),
    "2^64": str(2**64),
    "1e30": "1e30",
    "1e308": "1e308",
    "-7": "-7",
    "1.5": "1.5",
    "true": "true",
    "numeric string": '"12"',
    "null": "null",
    "object": '{"a": 1}',
    "list": "[1, 2]",
    "bad date": '"2024-13-45T99:99:99Z"',
    "1e20": "1e20",
}
"""JSON text that is storable or not depending on the field it lands in."""
LONG_KEYS = ['"' + "k" * 513 + '"', '"' + "k" * 3000 + '"', '"' + "é" * 150_000 + '"']
"""Over `model.limits.KEY_BYTES` (512 bytes)."""
LONG_PATHS = ['"/' + "p" * 2048 + '"', '"' + "é" * 150_000 + '"']
"""Over `model.limits.PATH_BYTES` (2,048 bytes)."""
BAD_COUNTS = [str(2**63), "1e30", "1e308", "-7", "true", '"12"', "1.5"]
TARGETED = {
    ("sessionId",): LONG_KEYS,
    ("cwd",): LONG_PATHS,
    ("requestId",): LONG_KEYS,
    ("message", "id"): LONG_KEYS,
    ("message", "usage", "output_tokens"): BAD_COUNTS,
    ("message", "usage", "input_tokens"): BAD_COUNTS,
    ("message", "usage", "cache_read_input_tokens"): BAD_COUNTS,
}
"""Fields the Claude Code parser reads into a limited column → values that must leave an issue."""
MARK = "@@mutated@@"


def _paths(value, prefix=()) -> list[tuple]:
    """Every path to a value inside `value` (dict keys and list indices), containers included."""
    out = []
    if isinstance(value, dict):
        for k, v in value.items():
            out.append((*prefix, k))
            out.extend(_paths(v, (*prefix, k)))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out.append((*prefix, i))
            out.extend(_paths(v, (*prefix, i)))
    return out


def _has(rec, path) -> bool:
    for p in path:
        if not isinstance(rec, dict) or p not in rec:
            return False
        rec = rec[p]
    return True


def _mutated(rec: dict, path: tuple, text: str) -> str:
    """`rec` with the value at `path` replaced by the JSON text `text`, as one line."""
    rec = copy.deepcopy(rec)
    node = rec
    for p in path[:-1]:
        node = node[p]
    node[path[-1]] = MARK
    return json.dumps(rec).replace(json.dumps(MARK), text, 1)


@st.composite
def mutations(draw, records: list[dict]) -> tuple[str, str | None, str]:
    """(the bad line, the issue kind it must leave or None, a description)."""
    i = draw(st.integers(0, len(records) - 1))
    rec = records[i]
    targets = [p for p in TARGETED if _has(rec, p)]
    if targets and draw(st.booleans()):
        path = draw(st.sampled_from(targets))
        text = draw(st.sampled_from(TARGETED[path]))
        return _mutated(rec, path, text), "any", f"record {i} {'.'.join(map(str, path))} = {text[:30]}"
    path = draw(st.sampled_from(_paths(rec)))
    name = draw(st.sampled_from(sorted(ALWAYS_BAD) + sorted(ODD)))
    text, kind = ALWAYS_BAD[name] if name in ALWAYS_BAD else (ODD[name], None)
    return _mutated(rec, path, text), kind, f"record {i} {'.'.join(map(str, path))} = {name}"


def _reported_cases() -> list[tuple[str, str | None, str]]:
    """The field report's cases, always run besides the random ones: a line nested 1,100 levels
    deep, a token count of 2^63, a NUL in a key."""
    if not (SHARED / "corpus").is_dir():
        return []
    recs = base_records(SHARED / "corpus" / "home")
    user = next(i for i, r in enumerate(recs) if r.get("type") == "user")
    call = next(i for i, r in enumerate(recs) if "usage" in (r.get("message") or {}))
    return [
        (_mutated(recs[user], ("message",), _nest(1100)), "too_deep", f"record {user} message = nested 1,100 levels"),
        (_mutated(recs[call], ("message", "usage", "output_tokens"), str(2**63)), "any", f"record {call} tokens 2^63"),
        (_mutated(recs[0], ("cwd",), '"/a\\u0000b"'), "lone_surrogate", "record 0 cwd = NUL"),
    ]


REPORTED = _reported_cases()


def _split(snap: dict, bad_rel: str) -> tuple[dict, dict]:
    """A catalogue snapshot → (rows of the other files, rows of the bad file)."""
    good = {t: [r for r in rows if bad_rel not in r] for t, rows in snap.items()}
    bad = {t: [r for r in rows if bad_rel in r] for t, rows in snap.items()}
    return good, bad


@pytest.fixture(scope="module")
def corpus_records(corpus_home) -> list[dict]:
    return base_records(corpus_home)


def test_random_bad_records_never_cost_a_good_file_or_another_line(db, corpus_home, corpus_records, tmp_path):
    base = (corpus_home / BAD_BASE).read_text().splitlines()
    bad_rel = rel_of(BAD)
    bad_at = offsets([*base, ""])[-1]  # the appended line's byte offset
    original = {
        k[1]
        for k in fold(
            parse_bytes(parser_class("claude"), ParseContext(path="x"), (corpus_home / BAD_BASE).read_bytes())
        )[MessageRow]
    }

    def run(home: Path) -> dict:
        with psycopg.connect(db.dsn, autocommit=True) as conn:
            truncate_derived(conn)
            conn.execute("TRUNCATE ah.source_file CASCADE")
            summary = Loader(conn).run(sources_for(home))
            assert (summary.files_failed, summary.load_errors) == (0, [])
            return snapshot(conn)

    alone = _split(run(make_home(corpus_home, tmp_path / "alone", None)), bad_rel)[0]
    seen = []

    @settings(
        max_examples=8,
        derandomize=True,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(mutations(corpus_records))
    @example(REPORTED[0])
    @example(REPORTED[1])
    @example(REPORTED[2])
    def check(mutation):
        line, kind, what = mutation
        seen.append(what)
        home = make_home(corpus_home, tmp_path / f"home{len(seen)}", [*base, line])
        good, _ = _split(run(home), bad_rel)
        assert good == alone, what  # the good files load exactly as they do alone
        with psycopg.connect(db.dsn) as conn:
            status = conn.execute("SELECT status FROM ah.source_file WHERE rel_path = %s", (bad_rel,)).fetchone()
            uids = {
                r[0]
                for r in conn.execute(
                    "SELECT m.message_uid FROM ah.message m JOIN ah.source_file f ON f.id = m.source_id "
                    "WHERE f.rel_path = %s",
                    (bad_rel,),
                )
            }
            issues = conn.execute(
                "SELECT i.kind FROM ah.parse_issue i JOIN ah.source_file f ON f.id = i.source_id "
                "WHERE f.rel_path = %s AND i.byte_offset = %s",
                (bad_rel, bad_at),
            ).fetchall()
        assert status == ("ok",), what
        assert original <= uids, what  # the bad file's other lines are all there
        assert ("parser_error",) not in issues, what
        if kind == "any":
            assert issues, what
        elif kind is not None:
            assert (kind,) in issues, what

    check()
    assert len(seen) == 8 + len(REPORTED)
