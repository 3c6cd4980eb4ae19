"""Efficiency classifier (docs/design.md §11, issue 11): what triggered every model call.

Pure package (imports nothing from ``db`` or ``ingest``); its SQL twin is
``sql/35_efficiency.sql``, which the post-pass runs over dirty sessions and stores in
``ah.model_call.trigger``.

- `rules`: the rules as data (triggers, per-harness tool tables, command regexes, message rules).
- `commands`: shell command → trigger.
- `results`: `eff_result` (a tool result) and `eff_message` (a message) → trigger.
- `attribute`: a thread's ordered events → trigger per model call.
- `shares`: poll share and roles.
"""

from agent_history.classify.attribute import Event, attribute
from agent_history.classify.commands import command_trigger
from agent_history.classify.results import eff_message, eff_result
from agent_history.classify.rules import POLL_TRIGGERS, TRIGGERS
from agent_history.classify.shares import poll_share, thread_role

__all__ = [
    "POLL_TRIGGERS",
    "TRIGGERS",
    "Event",
    "attribute",
    "command_trigger",
    "eff_message",
    "eff_result",
    "poll_share",
    "thread_role",
]
