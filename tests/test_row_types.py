"""The row types' construction (`model.rows`): every row type's ``__init__`` stores through its
slots (`rows._slot_init`) and behaves as the dataclass's generated one — same parameters and
defaults, frozen instances, `dataclasses.replace`, pickling and equality."""

from __future__ import annotations

import dataclasses
import inspect
import pickle

import pytest

from agent_history.model.rows import ROW_TYPES, MessageRow, RecordTypeRow, SessionRow


@pytest.mark.parametrize("cls", ROW_TYPES, ids=lambda c: c.__name__)
def test_every_row_types_init_takes_its_fields_in_order_with_their_defaults(cls):
    params = list(inspect.signature(cls.__init__).parameters.values())[1:]
    fields = dataclasses.fields(cls)
    assert [p.name for p in params] == [f.name for f in fields]
    assert [p.default for p in params] == [
        inspect.Parameter.empty if f.default is dataclasses.MISSING else f.default for f in fields
    ]


def test_a_row_built_positionally_or_by_keyword_holds_the_values_given_and_the_defaults():
    a = RecordTypeRow("claude", "assistant", "", "message,type")
    b = RecordTypeRow(agent="claude", record_type="assistant", subtype="", key_set="message,type", known=True, count=1)
    assert a == b and hash(a) == hash(b)
    assert a.values() == ("claude", "assistant", "", "message,type", True, 1)
    assert SessionRow("claude", "s1", "").source_type == "session"


def test_a_row_stays_frozen_and_replace_and_pickle_keep_it():
    row = MessageRow(agent="claude", message_uid="m1", session_uid="s1", agent_id="", text="hello")
    with pytest.raises(dataclasses.FrozenInstanceError):
        row.text = "changed"  # type: ignore[misc]
    assert dataclasses.replace(row, text="bye").text == "bye"
    assert pickle.loads(pickle.dumps(row)) == row


def test_a_row_missing_a_key_column_is_refused():
    with pytest.raises(TypeError, match="missing 3 required positional arguments"):
        RecordTypeRow("claude")  # type: ignore[call-arg]
