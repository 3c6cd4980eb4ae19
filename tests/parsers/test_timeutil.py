"""Spec for `parsers.timeutil.parse_ts`: ISO strings and epoch numbers → aware UTC datetimes."""

from __future__ import annotations

from datetime import UTC, datetime

from hypothesis import given
from hypothesis import strategies as st

from agent_history.parsers.common.timeutil import parse_ts


def test_claude_iso_with_z_and_milliseconds():
    assert parse_ts("2025-06-01T12:34:56.789Z") == datetime(2025, 6, 1, 12, 34, 56, 789000, tzinfo=UTC)


def test_offset_is_converted_to_utc():
    assert parse_ts("2025-06-01T12:34:56+02:00") == datetime(2025, 6, 1, 10, 34, 56, tzinfo=UTC)


def test_offset_without_colon():
    assert parse_ts("2025-06-01T12:34:56+0530") == datetime(2025, 6, 1, 7, 4, 56, tzinfo=UTC)


def test_nanoseconds_are_truncated_to_microseconds():
    assert parse_ts("2025-06-01T12:34:56.123456789Z") == datetime(2025, 6, 1, 12, 34, 56, 123456, tzinfo=UTC)


def test_naive_string_is_taken_as_utc():
    assert parse_ts("2025-06-01 12:34:56") == datetime(2025, 6, 1, 12, 34, 56, tzinfo=UTC)


def test_date_only():
    assert parse_ts("2025-06-01") == datetime(2025, 6, 1, tzinfo=UTC)


def test_result_is_timezone_aware_utc():
    ts = parse_ts("2025-06-01T12:34:56-07:00")
    assert ts is not None
    assert ts.tzinfo is UTC


def test_epoch_seconds():
    assert parse_ts(1717236000) == datetime(2024, 6, 1, 10, 0, tzinfo=UTC)


def test_epoch_milliseconds_pi():
    assert parse_ts(1763683394021) == datetime(2025, 11, 21, 0, 3, 14, 21000, tzinfo=UTC)


def test_float_epoch_seconds():
    assert parse_ts(1717236000.5) == datetime(2024, 6, 1, 10, 0, 0, 500000, tzinfo=UTC)


def test_numeric_string_is_epoch():
    assert parse_ts("1717236000123") == datetime(2024, 6, 1, 10, 0, 0, 123000, tzinfo=UTC)


def test_aware_datetime_is_normalised_to_utc():
    assert parse_ts(datetime(2025, 1, 1, tzinfo=UTC)) == datetime(2025, 1, 1, tzinfo=UTC)


def test_invalid_values_are_none():
    bad = [None, True, "", "yesterday", "2025-13-01T00:00:00Z", "2025-06-01T25:00:00Z", float("nan"), float("inf")]
    assert [parse_ts(v) for v in bad] == [None] * len(bad)


def test_out_of_range_is_none():
    assert [parse_ts(v) for v in (1e300, 10**30, "9999-12-31T23:59:59-05:00")] == [None, None, None]


def test_containers_are_none():
    assert [parse_ts(v) for v in ({}, [], {"ts": 1})] == [None, None, None]


@given(st.one_of(st.text(max_size=80), st.integers(), st.floats(), st.none(), st.booleans()))
def test_parse_ts_never_raises_and_returns_utc(value):
    ts = parse_ts(value)
    assert ts is None or ts.tzinfo is UTC


# -- the harnesses' form (``YYYY-MM-DDTHH:MM:SS.fffZ``) read by datetime.fromisoformat ------------

_DIGIT_OR_NOT = st.sampled_from("0123456789012345678901234567890123456789Wx+-٣ ")


@given(chars=st.lists(_DIGIT_OR_NOT, min_size=17, max_size=17), seps=st.sampled_from(["--T", "-W-", "-- "]))
def test_the_canonical_form_reads_as_the_general_iso_reader_reads_it(chars, seps):
    from agent_history.parsers.common.timeutil import _from_iso, _from_iso_general

    d = iter(chars)
    shape = "dddd-dd-ddTdd:dd:dd.dddZ"
    text = "".join(next(d) if c == "d" else c for c in shape)
    text = text[:4] + seps[0] + text[5:7] + seps[1] + text[8:10] + seps[2] + text[11:]
    got, want = _from_iso(text), _from_iso_general(text)
    assert got == want
    assert got is None or (got.tzinfo is UTC and got.utcoffset() == want.utcoffset())


def test_the_canonical_form_with_a_week_date_or_hour_24_is_no_timestamp():
    assert parse_ts("2025-W01-1T12:34:56.789Z") is None
    assert parse_ts("2025-06-01T24:00:00.000Z") is None
    assert parse_ts("2025-06-01T23:59:59.999Z") == datetime(2025, 6, 1, 23, 59, 59, 999000, tzinfo=UTC)
