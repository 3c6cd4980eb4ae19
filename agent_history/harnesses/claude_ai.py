"""claude.ai (the chat product): a data export's ``conversations.json``, indexed only when a
source names it (``index --claude-export FILE`` or a ``[sources]`` entry): no default home.

Sources: FORMATS.md §8 (conversation objects with ``chat_messages`` and
``current_leaf_message_uuid``; no cwd, git or usage).
"""

from __future__ import annotations

from agent_history.harnesses.spec import Capabilities, Harness, KindRule, Layout, Signature

HARNESS = Harness(
    name="claude-ai",
    product="claude.ai",
    parser="claude_ai.parser",
    source_kinds=("document",),
    # an unzipped data export: its conversations.json (not users.json / projects.json beside it);
    # a source may also name the file itself (`index --claude-export FILE`, any name)
    layout=Layout(
        kinds=(KindRule("", r"conversations\.json", "document"),), home_may_be_file=True, globs=("conversations.json",)
    ),
    signatures=(Signature(20, head=(r'"(chat_messages|current_leaf_message_uuid)"\s*:',)),),
    path_hint=r"(^|/)conversations\.json$",
    capabilities=Capabilities(frozenset({"model", "timestamps", "tool_results", "reasoning"})),
    explicit="index --claude-export FILE",
)
