"""The row types' construction (`model.rows`): every row type's ``__init__`` stores through its
slots (`rows._slot_init`) and behaves as the dataclass's generated one — same parameters and
defaults, frozen instances, `dataclasses.replace`, pickling and equality; and the fold's merge
(`model.merge._merger`), generated per row type, gives `policy.merge_value` for every column."""

from __future__ import annotations

import dataclasses
import inspect
import pickle
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent_history.model.merge import _mergeable, _merger, fold
from agent_history.model.policy import Merge, merge_value
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


# -- the fold's generated merge (`model.merge._merger`) is `policy.merge_value` per column -----

_VALUES = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.sampled_from([0.0, 1.0, 2.5]), st.text(max_size=2))


def _reference_merge(cls, cur: list, vals: tuple) -> list:
    """The fold's loop before it was generated: `merge_value` per mergeable column."""
    out = list(cur)
    for i, _name, policy in _mergeable(cls):
        a, b = out[i], vals[i]
        if b is None or (a == b and policy is not Merge.SUM):
            continue
        out[i] = merge_value(policy, a, b)
    return out


@pytest.mark.parametrize("cls", ROW_TYPES, ids=lambda c: c.__name__)
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_the_generated_merge_gives_merge_value_for_every_column(cls, data):
    n = len(cls.columns())
    cur = data.draw(st.lists(_VALUES, min_size=n, max_size=n))
    vals = tuple(data.draw(st.lists(_VALUES, min_size=n, max_size=n)))
    try:
        want = _reference_merge(cls, cur, vals)
    except TypeError as exc:  # e.g. max() of a str and an int: the generated merge refuses too
        with pytest.raises(TypeError, match=re.escape(str(exc))):
            _merger(cls)(cur, vals)
        return
    _merger(cls)(cur, vals)
    assert [(type(v), v) for v in cur] == [(type(v), v) for v in want]


def test_fold_sums_record_type_counts_and_keeps_the_first_seen_row_order():
    rows = [
        RecordTypeRow("pi", "message", "", "id,type"),
        RecordTypeRow("pi", "session", "", "id"),
        RecordTypeRow("pi", "message", "", "id,type", known=False, count=2),
    ]
    got = fold(rows)[RecordTypeRow]
    assert list(got.values()) == [
        RecordTypeRow("pi", "message", "", "id,type", known=True, count=3),
        RecordTypeRow("pi", "session", "", "id", known=True, count=1),
    ]
