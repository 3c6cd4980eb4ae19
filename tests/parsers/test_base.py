"""Spec for the helpers every parser shares (`parsers.base`): the record-type observation and the
stamping of a record's messages with its raw type and origin."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime

from agent_history.model.rows import MessageRow, ToolCallRow
from agent_history.parsers.base import record_type_row, stamp_messages


def _message(offset: int, **kw) -> MessageRow:
    values = {
        "agent": "claude",
        "message_uid": f"m{offset}",
        "session_uid": "s1",
        "agent_id": "a1",
        "turn_uid": "t1",
        "parent_uid": "p1",
        "role": "assistant",
        "message_class": "reply",
        "text": "hello",
        "ts": datetime(2026, 12, 2, 13, 0, tzinfo=UTC),
        "model": "m",
        "on_active_branch": True,
        "attachments": [{"media_type": "image/png", "bytes": 3}],
        "byte_offset": offset,
        "line_number": 7,
    }
    return MessageRow(**{**values, **kw})


def test_stamp_messages_equals_dataclasses_replace_on_the_record_s_messages_only():
    mine, other, stamped = _message(100), _message(200), _message(100, record_type="user", record_origin="human")
    call = ToolCallRow(agent="claude", tool_call_uid="c1", byte_offset=100)
    rows = stamp_messages([mine, other, stamped, call], "assistant", "model", 100)
    assert rows[0] == dataclasses.replace(mine, record_type="assistant", record_origin="model")
    assert (rows[0].text, rows[0].attachments, rows[0].line_number) == (
        "hello",
        [{"media_type": "image/png", "bytes": 3}],
        7,
    )
    assert rows[1:] == [other, stamped, call]  # another record's message, an already stamped one, not a message


def test_message_row_rebuilds_from_its_field_values():
    """`stamp_messages` builds a MessageRow positionally from its field values: that holds only
    while every field is in ``__init__``, none keyword-only, and there is no ``__post_init__``."""
    assert all(f.init and not f.kw_only for f in dataclasses.fields(MessageRow))
    assert not hasattr(MessageRow, "__post_init__")


def test_record_type_row_key_set_is_the_sorted_top_keys_whatever_their_order():
    a = record_type_row("codex", {"type": 1, "payload": 2, "timestamp": 3}, "event_msg", None, True)
    b = record_type_row("codex", {"timestamp": 3, "type": 1, "payload": 2}, "event_msg", "x", False)
    again = record_type_row("codex", {"type": 0, "payload": 0, "timestamp": 0}, "event_msg", None, True)
    assert a.key_set == b.key_set == again.key_set == "payload,timestamp,type"
    assert (b.subtype, b.known, b.count) == ("x", False, 1)
    # equal but differently spelled keys (1 == True) keep their own spelling
    assert record_type_row("x", {1: 0}, "t", None, True).key_set == "1"
    assert record_type_row("x", {True: 0}, "t", None, True).key_set == "True"
