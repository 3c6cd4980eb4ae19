"""The capability vocabulary — what a transcript format can record — and what a parser's rows
show of it (pure; rows from `agent_history.model.rows`).

Each harness row declares the capabilities its format records (`spec.Capabilities`); the
capability sync test (``tests/test_harness_capabilities.py``) parses the shared corpus, the
samples and the field cases with each harness's parser and checks `observed` against the
declaration, as agentsview's ``capabilities_sync_test.go`` does: an emitted capability that is
not declared always fails; a declared one never emitted fails unless the row names it unsampled.
A report may use the table to tell "not recorded by this format" (NULL, never 0) from "none".
"""

from __future__ import annotations

from collections.abc import Iterable

from agent_history.model import classes
from agent_history.model.rows import (
    CompactionRow,
    MessageRow,
    ModelCallRow,
    Row,
    SessionRow,
    SubagentSpawnRow,
    ToolCallRow,
)

TOKEN_BUCKETS: tuple[str, ...] = (
    "input_uncached",
    "cache_read",
    "cache_write_5m",
    "cache_write_1h",
    "output",
    "reasoning",
)
"""The ``ah.model_call`` token columns (disjoint buckets, docs/design.md §5)."""

CAPABILITIES: dict[str, str] = {
    **{f"tokens.{b}": f"token counts of the `{b}` bucket on model calls" for b in TOKEN_BUCKETS},
    "cost": "a cost the harness recorded (USD) on model calls",
    "model": "the model of a call, message or session",
    "timestamps": "when each message or model call happened",
    "subagents": "sub-agent threads and the spawns that start them",
    "compactions": "context compactions",
    "interrupts": "the person interrupting a turn (an interrupt marker, or a tool call ended as `interrupted`)",
    "tool_results": "the result (output or error flag) of tool calls",
    "reasoning": "reasoning / thinking text as messages",
    "cwd": "the working directory of a session",
    "git_branch": "the git branch a session ran on",
}
"""Capability name → what a row must carry to show it (`observed` is the rule as code)."""

TITLES: dict[str, str] = {
    "cost": "cost",
    "model": "model",
    "timestamps": "times",
    "subagents": "sub-agents",
    "compactions": "compactions",
    "interrupts": "interrupts",
    "tool_results": "tool results",
    "reasoning": "reasoning",
    "cwd": "cwd",
    "git_branch": "git branch",
}
"""Short column titles for the README's agent table (token buckets go in one column)."""


def observed(rows: Iterable[Row]) -> set[str]:
    """The capabilities `rows` (one parser's output) show, by the rules of `CAPABILITIES`: a
    non-NULL token bucket or recorded cost on a model call that is not an API-error notice; a
    model on a call, message or session; a timestamp on a message or call; a sub-agent session
    or spawn; a compaction; a tool call with an output or error flag; a ``reasoning`` message; a
    session cwd; a session git branch."""
    out: set[str] = set()
    for r in rows:
        if isinstance(r, ModelCallRow):
            if not r.is_api_error:
                out.update(f"tokens.{b}" for b in TOKEN_BUCKETS if getattr(r, b) is not None)
                if r.recorded_cost_usd is not None:
                    out.add("cost")
            if r.model:
                out.add("model")
            if r.ts is not None:
                out.add("timestamps")
        elif isinstance(r, MessageRow):
            if r.model:
                out.add("model")
            if r.ts is not None:
                out.add("timestamps")
            if r.message_class == classes.REASONING:
                out.add("reasoning")
            if r.message_class == classes.INTERRUPT_MARKER:
                out.add("interrupts")
        elif isinstance(r, SessionRow):
            if r.cwd:
                out.add("cwd")
            if r.git_branch:
                out.add("git_branch")
            if r.model:
                out.add("model")
            if r.is_subagent or r.agent_id or r.parent_session_uid:
                out.add("subagents")
        elif isinstance(r, SubagentSpawnRow):
            out.add("subagents")
        elif isinstance(r, CompactionRow):
            out.add("compactions")
        elif isinstance(r, ToolCallRow):
            if r.output is not None or r.is_error is not None:
                out.add("tool_results")
            if r.error_class == "interrupted":
                out.add("interrupts")
    return out
