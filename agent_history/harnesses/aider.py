"""Aider: one append-only Markdown chat history per repository, ``<repository>/.aider.chat.
history.md`` — no home of its own: found in the projects the catalogue knows (sessions'
working directories and their parents up to the repository root) and below configured roots
(``[aider] roots``) (`parsers.aider`).

Sources: FORMATS-NEW.md §4 and the real histories in fixtures/samples/aider; Aider-AI/aider
``aider/io.py``, ``aider/args.py`` (``--chat-history-file`` / ``AIDER_CHAT_HISTORY_FILE`` move the
file: add its directory under ``[aider] roots`` only when it keeps the default name) at
5dc9490bb35f. Aider has no per-turn hook (``--notifications-command`` fires when it waits for
input) and reads no MCP configuration.
"""

from __future__ import annotations

from agent_history.harnesses.spec import Capabilities, Harness, Layout, ProjectFile, Signature

HARNESS = Harness(
    name="aider",
    product="Aider",
    aliases=("aider-chat",),
    parser="aider.parser",
    source_kinds=("markdown",),
    layout=Layout(projects=(ProjectFile(".aider.chat.history.md", "markdown"),)),
    signatures=(Signature(33, head=(r"(?m)^# aider chat started at \d{4}-\d\d-\d\d \d\d:\d\d",)),),
    path_hint=r"(^|/)\.aider\.chat\.history\.md$",
    capabilities=Capabilities(
        frozenset(
            {
                "tokens.input_uncached",
                "tokens.cache_read",
                "tokens.cache_write_5m",
                "tokens.output",
                "cost",
                "model",
                "tool_results",
                "cwd",
            }
        )
    ),
    built_from="real",
    built_from_why="excerpts of three real chat histories, one the Aider author's own (fixtures/samples/aider)",
    explicit="[aider] roots",
)
