"""ChatGPT (chatgpt.com, the chat product): a data export's ``conversations.json`` (or its
``conversations-NNN.json`` shards), indexed only when a source names it — no default home
(`parsers.chatgpt`).

Sources: FORMATS-NEW.md §15 (the export zip from Settings › Data controls › Export; a message
tree per conversation; no usage, no cwd, no git); kenn-io/agentsview
``internal/parser/chatgpt.go`` (shards, content types). Real: one conversation of a real export
(aucontraire/echomine's fixture); no real export with branches or tool runs is public, so those
paths are checked on hand-written trees.
"""

from __future__ import annotations

from agent_history.harnesses.spec import Capabilities, Harness, KindRule, Layout, Signature

HARNESS = Harness(
    name="chatgpt",
    product="ChatGPT (data export)",
    aliases=("chatgpt-export",),
    parser="chatgpt.parser",
    source_kinds=("document",),
    # an unzipped export: its conversations.json or shards (not chat.html, user.json,
    # message_feedback.json …); a source may also name one file (`--source chatgpt-export=FILE`)
    layout=Layout(
        kinds=(KindRule("", r"conversations(-\d+)?\.json", "document"),),
        home_may_be_file=True,
        globs=("conversations.json", "conversations-*.json"),
    ),
    signatures=(Signature(21, head=(r'"mapping"\s*:', r'"current_node"\s*:')),),
    path_hint=r"(^|/)conversations-\d+\.json$",
    capabilities=Capabilities(frozenset({"model", "timestamps", "tool_results", "reasoning"})),
    built_from="real",
    built_from_why="one conversation of a real export (fixtures/samples/chatgpt-export); branches and tools hand-written",
    explicit="index --source chatgpt-export=FILE",
)
