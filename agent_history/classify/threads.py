"""Triggers of every model call from parsed rows: the Python twin of ``ah.refresh_efficiency``.

Input: the folded rows of one or more source files, each file with its order (the catalogue
uses ``source_id``). Rows are grouped into threads by (agent, session_uid, agent_id); a thread
is a worker when its SessionRow says ``is_subagent`` (else when ``agent_id`` is not '').
API-error notices (``is_api_error``) are not calls. Pure: no I/O.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from agent_history.classify.attribute import Event, attribute
from agent_history.classify.results import eff_message, eff_result
from agent_history.model.rows import MessageRow, ModelCallRow, Row, SessionRow, ToolCallRow

Thread = tuple[str, str, str]
"""(agent, session_uid, agent_id)."""


def thread_triggers(files: Iterable[tuple[int, Iterable[Row]]]) -> dict[Thread, list[tuple[str, str]]]:
    """(source order, folded rows) per file → per thread, ``[(call_uid, trigger)]`` in file order.

    Threads without a model call map to ``[]`` when a SessionRow names them.
    """
    rows_by_file = [(order, list(rows)) for order, rows in files]
    worker: dict[Thread, bool] = {}
    for _, rows in rows_by_file:
        for r in rows:
            if isinstance(r, SessionRow):
                key = (r.agent, r.session_uid, r.agent_id)
                worker[key] = bool(r.is_subagent) if r.is_subagent is not None else worker.get(key, r.agent_id != "")
    events: dict[Thread, list[Event]] = defaultdict(list)
    calls: dict[Thread, list[tuple[tuple[int, int], str]]] = defaultdict(list)
    for order, rows in rows_by_file:
        for r in rows:
            key = (r.agent, r.session_uid, r.agent_id) if hasattr(r, "session_uid") else None
            if isinstance(r, ModelCallRow) and not r.is_api_error and r.byte_offset is not None:
                events[key].append(Event("call", (order, r.byte_offset), None, r.call_uid))
                calls[key].append(((order, r.byte_offset), r.call_uid))
            elif isinstance(r, ToolCallRow) and r.output_byte_offset is not None:
                trig = eff_result(r.agent, r.name, r.input, r.output, r.is_error)
                events[key].append(Event("result", (order, r.output_byte_offset), trig, r.tool_call_uid))
            elif isinstance(r, MessageRow) and r.byte_offset is not None:
                in_worker = worker.get(key, r.agent_id != "")
                trig = eff_message(r.agent, r.message_class, r.role, r.text, r.record_type, r.record_origin, in_worker)
                if trig is not None:
                    events[key].append(Event("message", (order, r.byte_offset), trig, r.message_uid))
    out: dict[Thread, list[tuple[str, str]]] = {k: [] for k in worker}
    for key, evs in events.items():
        by_uid = attribute(evs)
        out[key] = [(uid, by_uid[uid]) for _, uid in sorted(calls[key])]
    return out
