"""Spec for `parsers.lines`: complete JSONL lines → JSON objects + parse issues (E13, E14)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import orjson
from hypothesis import given
from hypothesis import strategies as st

from agent_history.parsers.base import Pos
from agent_history.parsers.common.lines import complete_prefix, decode_line, iter_lines, iter_records

POS = Pos(byte_offset=100, length=0, line_number=7)


def kinds(issues) -> list[str]:
    return [i.kind for i in issues]


# --- line splitting -------------------------------------------------------------------------


def test_torn_last_line_is_not_yielded():
    assert [raw for raw, _ in iter_lines(b'{"a":1}\n{"b":')] == [b'{"a":1}']


def test_complete_prefix_stops_before_a_torn_line():
    assert complete_prefix(b'{"a":1}\n{"b":') == 8


def test_complete_prefix_without_newline_is_zero():
    assert complete_prefix(b'{"a":1}') == 0


def test_positions_count_bytes_and_lines_from_the_base():
    assert [pos for _, pos in iter_lines(b"ab\n\ncd\n", base_offset=10, base_line=3)] == [
        Pos(10, 3, 3),
        Pos(13, 1, 4),
        Pos(14, 3, 5),
    ]


def test_crlf_line_ending_is_stripped():
    assert [raw for raw, _ in iter_lines(b'{"a":1}\r\n')] == [b'{"a":1}']


# --- decoding one line ----------------------------------------------------------------------


def test_plain_object_has_no_issues():
    assert decode_line(b'{"a":1}', POS) == ([{"a": 1}], [])


def test_blank_line_is_a_blank_line_issue_not_malformed():
    values, issues = decode_line(b"   \t", POS)
    assert (values, kinds(issues)) == ([], ["blank_line"])


def test_empty_line_is_a_blank_line_issue():
    assert kinds(decode_line(b"", POS)[1]) == ["blank_line"]


def test_issue_carries_line_number_and_offset():
    issue = decode_line(b"garbage", POS)[1][0]
    assert (issue.kind, issue.line_number, issue.byte_offset) == ("invalid_json", 7, 100)


def test_invalid_utf8_keeps_record_with_replacement_character():
    values, issues = decode_line(b'{"a":"x\xffy"}', POS)
    assert (values, kinds(issues)) == ([{"a": "x\ufffdy"}], ["invalid_utf8"])


def test_lone_surrogate_escape_is_replaced():
    values, issues = decode_line(b'{"a":"x\\ud800y"}', POS)
    assert (values, kinds(issues)) == ([{"a": "x\ufffdy"}], ["lone_surrogate"])


def test_lone_surrogate_in_a_key_is_replaced():
    assert decode_line(b'{"\\udc00":1}', POS)[0] == [{"\ufffd": 1}]


def test_valid_surrogate_pair_is_kept():
    assert decode_line(b'{"a":"\\ud83d\\ude00"}', POS) == ([{"a": "\U0001f600"}], [])


def test_nul_character_is_replaced():
    values, issues = decode_line(b'{"a":"x\\u0000y"}', POS)
    assert (values, kinds(issues)) == ([{"a": "x\ufffdy"}], ["lone_surrogate"])


def test_nested_bad_characters_are_replaced_everywhere():
    assert decode_line(b'{"a":[{"b":"\\ud800"}],"c":"\\u0000"}', POS)[0] == [{"a": [{"b": "\ufffd"}], "c": "\ufffd"}]


def test_two_fused_objects_are_both_recovered():
    values, issues = decode_line(b'{"a":1}{"b":2}', POS)
    assert (values, kinds(issues)) == ([{"a": 1}, {"b": 2}], ["fused_line"])


def test_fused_objects_with_whitespace_between():
    assert decode_line(b'{"a":1}  {"b":2}\t', POS)[0] == [{"a": 1}, {"b": 2}]


def test_torn_object_then_complete_object_keeps_the_complete_one():
    values, issues = decode_line(b'{"type":"user","text":"Check the sta{"type":"assistant","id":2}', POS)
    assert (values, kinds(issues)) == ([{"type": "assistant", "id": 2}], ["invalid_json", "recovered_object"])


def test_complete_object_then_torn_object_keeps_the_complete_one():
    values, issues = decode_line(b'{"a":1}{"b":{"c"', POS)
    assert (values, kinds(issues)) == ([{"a": 1}], ["invalid_json", "recovered_object"])


def test_braces_inside_strings_of_a_torn_object_are_not_recovered_as_objects():
    values, _ = decode_line(b'{"code":"f() { return {}; }","more":"tor{"type":"assistant"}', POS)
    assert values == [{"type": "assistant"}]


def test_garbage_only_line_is_invalid_json_with_nothing_recovered():
    values, issues = decode_line(b"not json at all", POS)
    assert (values, kinds(issues)) == ([], ["invalid_json"])


def test_non_object_json_is_returned_for_the_caller_to_judge():
    assert decode_line(b"[1,2]", POS) == ([[1, 2]], [])


def test_line_over_one_mebibyte_decodes():
    big = orjson.dumps({"type": "user", "data": "A" * (1_200_000)})
    values, issues = decode_line(big, POS)
    assert (len(values[0]["data"]), issues) == (1_200_000, [])


def test_long_torn_line_then_object_recovers_quickly():
    nested = json.dumps({"a": [{"b": [{"c": i} for i in range(50)]} for _ in range(2000)]}).encode()
    start = time.perf_counter()
    values, _ = decode_line(nested[:-3] + b'{"ok":1}', POS)
    assert values == [{"ok": 1}]
    assert time.perf_counter() - start < 5.0


# --- iter_records ---------------------------------------------------------------------------


def test_non_object_values_become_non_object_issues():
    records = list(iter_records(b'[1,2]\n42\n{"a":1}\n'))
    assert [(pos.line_number, objs, kinds(issues)) for pos, objs, issues in records] == [
        (1, [], ["non_object"]),
        (2, [], ["non_object"]),
        (3, [{"a": 1}], []),
    ]


def test_e13_lines(field_dir: Path):
    """E13: 1, 3, 5 decode; 2 blank; 4 torn + recovered 'Check the status' tail; 6 torn, not read."""
    data = (field_dir / "E13.jsonl").read_bytes()
    records = list(iter_records(data))
    assert [(pos.line_number, [o["uuid"] for o in objs], kinds(issues)) for pos, objs, issues in records] == [
        (1, ["00130001-0000-4000-8000-000000000000"], []),
        (2, [], ["blank_line"]),
        (3, ["00130002-0000-4000-8000-000000000000"], []),
        (4, ["00130003-0000-4000-8000-000000000000"], ["invalid_json", "recovered_object"]),
        (5, ["00130004-0000-4000-8000-000000000000"], []),
    ]


def test_e13_offset_stops_at_first_byte_of_torn_line_six(field_dir: Path):
    data = (field_dir / "E13.jsonl").read_bytes()
    assert complete_prefix(data) == 2342
    assert data[complete_prefix(data) - 1 : complete_prefix(data)] == b"\n"


def test_e14_one_point_two_megabyte_line_decodes(field_dir: Path):
    data = (field_dir / "E14.jsonl").read_bytes()
    records = list(iter_records(data))
    assert [(pos.line_number, len(objs), kinds(issues)) for pos, objs, issues in records] == [(1, 1, []), (2, 1, [])]
    assert records[0][0].length == 1_200_457


@given(st.binary(max_size=300))
def test_decode_line_never_raises_and_returns_clean_text(raw):
    values, issues = decode_line(raw.replace(b"\n", b" "), POS)
    assert all(i.line_number == 7 for i in issues)
    orjson.dumps(values, option=orjson.OPT_NON_STR_KEYS)  # encodable: no lone surrogates left
