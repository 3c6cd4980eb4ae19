"""Roo Code task folders: the Cline-family reader (`parsers.cline.parser`) with Roo's
differences (FORMATS-NEW.md §2; RooCodeInc/Roo-Code ``packages/types/src/history.ts``,
``message.ts``, ``src/core/task-persistence/apiMessages.ts``):

- ``history_item.json`` beside the others: working directory (``workspace``), start time, first
  prompt, and the parent task of a sub-task (``parentTaskId``);
- ``new_task`` starts a child task (a sub-agent spawn);
- API messages carry ``ts`` (epoch ms); reasoning items and ``isSummary`` condensation messages;
- the model is named only in ``<environment_details>`` (``<model>``), and UI records carry no
  ``conversationHistoryIndex`` or ``modelInfo``: model calls have no model and no turn, and
  ``apiProtocol`` decides the token buckets (`parsers.cline.ui`);
- UI additions: ``condense_context`` / ``sliding_window_truncation`` compactions,
  ``subtask_result`` reports, ``api_req_deleted`` / ``api_req_retry_delayed`` notices.
"""

from __future__ import annotations

from agent_history.parsers.cline.parser import TaskFolderParser


class RooCodeParser(TaskFolderParser):
    """Roo Code (``rooveterinaryinc.roo-cline``)."""

    AGENT = "roo-code"
    SUBTASKS = True


PARSER = RooCodeParser
DOCUMENT_PARSER = RooCodeParser
