"""``task_metadata.json`` and Roo's ``history_item.json`` → the task's session row (pure).

- ``task_metadata.json`` (Cline, Kilo Code): ``model_usage[]{ts, model_id, model_provider_id,
  mode}`` (the model: the last one), ``environment_history[]{ts, os_name, host_name,
  host_version, cline_version}`` (the harness version: the last ``cline_version``), and
  ``files_in_context[]`` — files the task read or edited, by Cline's own bookkeeping. Those
  repeat the tool calls of the API history without a call id (and add the user's own edits), so
  they are counted, not turned into file touches (which are one per tool call).
- ``history_item.json`` (Roo Code, RooCodeInc/Roo-Code ``packages/types/src/history.ts``):
  ``{id, ts, task, workspace, parentTaskId, rootTaskId, childIds, tokensIn, tokensOut,
  cacheWrites, cacheReads, totalCost, status, mode}`` — the working directory, the start time,
  the first prompt and the parent task (a sub-task is a session of its own whose
  ``parent_session_uid`` is the parent task). Its token and cost totals are the sums of the
  task's ``api_req_started`` counts (the UI messages' model calls), so they give no rows:
  counting both would count every request twice.
"""

from __future__ import annotations

from typing import Any

from agent_history.model.rows import ParseIssueRow, Row, SessionRow
from agent_history.parsers.base import record_type_row
from agent_history.parsers.cline.family import Task
from agent_history.parsers.common.coerce import as_dict, as_list, as_nonempty_str
from agent_history.parsers.common.timeutil import parse_ts

METADATA_KEYS = frozenset({"files_in_context", "model_usage", "environment_history"})
HISTORY_ITEM = "history_item"


def metadata_rows(doc: Any, task: Task) -> list[Row]:
    """Rows of one ``task_metadata.json`` (decoded) of `task` (module docstring)."""
    if not isinstance(doc, dict):
        return [ParseIssueRow("non_object", 0, 1, "task metadata is not a JSON object")]
    rows: list[Row] = [record_type_row(task.agent, doc, "task_metadata", None, set(doc) <= METADATA_KEYS)]
    times = []
    model = version = None
    for key in sorted(METADATA_KEYS):
        for entry in as_list(doc.get(key)):
            e = as_dict(entry)
            rows.append(record_type_row(task.agent, e, key, None, True))
            ts = parse_ts(e.get("ts"))
            if ts is not None:
                times.append(ts)
            if key == "model_usage":
                model = as_nonempty_str(e.get("model_id")) or model
            elif key == "environment_history":
                version = as_nonempty_str(e.get("cline_version")) or version
    rows.append(
        SessionRow(
            agent=task.agent,
            session_uid=task.sid,
            agent_id="",
            model=model,
            cli_version=version,
            started_at=min(times) if times else None,
            byte_offset=0,
            line_number=1,
        )
    )
    return rows


def history_item_rows(doc: Any, task: Task) -> list[Row]:
    """Rows of one Roo ``history_item.json`` (decoded) of `task` (module docstring)."""
    if not isinstance(doc, dict):
        return [ParseIssueRow("non_object", 0, 1, "history item is not a JSON object")]
    parent = as_nonempty_str(doc.get("parentTaskId"))
    return [
        record_type_row(task.agent, doc, HISTORY_ITEM, None, True),
        SessionRow(
            agent=task.agent,
            session_uid=task.sid,
            agent_id="",
            is_subagent=bool(parent),
            parent_session_uid=parent,
            cwd=as_nonempty_str(doc.get("workspace")),
            first_prompt=as_nonempty_str(doc.get("task")),
            started_at=parse_ts(doc.get("ts")),
            byte_offset=0,
            line_number=1,
        ),
    ]
