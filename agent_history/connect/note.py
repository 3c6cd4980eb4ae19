"""The agent-facing usage note (`usage_note.md`) in the two shapes agents read (pure).

- As an Agent Skill (`skill_text`): ``SKILL.md`` with YAML front matter (``name``,
  ``description``) — the open Agent Skills format read by Claude Code, Cursor, OpenCode and
  Gemini CLI. A marker comment identifies the file as ours, so `is_ours` lets `disconnect`
  remove only what `connect` wrote.
- As a section of an instructions file (`with_section` / `without_section`): the note between
  ``<!-- agent-history:begin -->`` and ``<!-- agent-history:end -->`` markers, replaced in place
  when present, appended otherwise, and cut out (with the blank line before it) on removal.
"""

from __future__ import annotations

from importlib import resources

from agent_history.harnesses import products

SKILL_NAME = "agent-history"
SKILL_DESCRIPTION = (
    "Search and cite the history of past coding-agent sessions (prompts, decisions, errors, fixes, "
    "commits, files touched) with the agent-history MCP tools. Use when the user refers to earlier "
    "work, when an error, decision or fix may have come up before, or to find which session changed "
    "a file or made a commit."
)
OWNER_MARK = "<!-- installed by `agent-history connect`; removed by `agent-history disconnect` -->"
BEGIN = "<!-- agent-history:begin -->"
END = "<!-- agent-history:end -->"


def usage_note() -> str:
    """The note's Markdown (packaged file ``agent_history/connect/usage_note.md``, its
    ``{harnesses}`` filled with the registry's product names)."""
    text = resources.files("agent_history.connect").joinpath("usage_note.md").read_text(encoding="utf-8")
    return text.replace("{harnesses}", products())


def skill_text(note: str | None = None) -> str:
    """``SKILL.md`` content: front matter, owner mark, note."""
    body = (note if note is not None else usage_note()).strip()
    return f"---\nname: {SKILL_NAME}\ndescription: {SKILL_DESCRIPTION}\n---\n\n{OWNER_MARK}\n\n{body}\n"


def is_ours(text: str) -> bool:
    """True when `text` is a note `connect` wrote (it carries the owner mark)."""
    return OWNER_MARK in text


def section(note: str | None = None) -> str:
    """The marker-delimited section (no surrounding blank lines)."""
    body = (note if note is not None else usage_note()).strip()
    return f"{BEGIN}\n{OWNER_MARK}\n\n{body}\n{END}"


def _span(text: str) -> tuple[int, int] | None:
    start = text.find(BEGIN)
    if start < 0:
        return None
    end = text.find(END, start)
    if end < 0:
        return None
    return start, end + len(END)


def with_section(text: str, note: str | None = None) -> str:
    """`text` with the section replaced in place, or appended after a blank line."""
    block = section(note)
    span = _span(text)
    if span:
        return text[: span[0]] + block + text[span[1] :]
    if not text.strip():
        return block + "\n"
    return text.rstrip("\n") + "\n\n" + block + "\n"


def without_section(text: str) -> str:
    """`text` without the section and the blank lines that separated it (unchanged when absent)."""
    span = _span(text)
    if not span:
        return text
    before, after = text[: span[0]].rstrip("\n"), text[span[1] :].lstrip("\n")
    if before and after:
        return before + "\n\n" + after
    return (before + "\n") if before else after
