"""Pure row model: row dataclasses, natural keys, merge policies, message classes. No I/O."""

from agent_history.model.policy import Merge, merge_value
from agent_history.model.rows import (
    ROW_TYPES,
    CompactionRow,
    FileTouchRow,
    GitEventRow,
    MessageRow,
    ModelCallRow,
    ParseIssueRow,
    RecordTypeRow,
    Row,
    SessionRow,
    SubagentSpawnRow,
    ToolCallRow,
    TurnRow,
)

__all__ = [
    "ROW_TYPES",
    "CompactionRow",
    "FileTouchRow",
    "GitEventRow",
    "Merge",
    "MessageRow",
    "ModelCallRow",
    "ParseIssueRow",
    "RecordTypeRow",
    "Row",
    "SessionRow",
    "SubagentSpawnRow",
    "ToolCallRow",
    "TurnRow",
    "merge_value",
]
