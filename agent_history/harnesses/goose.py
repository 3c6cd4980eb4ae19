"""Goose (block/goose, now aaif-goose/goose): before its SQLite store, one JSONL file per
session that Goose rewrote whole after each message — read as a whole document
(`parsers.goose`).

Sources: FORMATS-NEW.md §5 and the real lines in fixtures/samples/goose (issue #2529, PR #283);
kenn-io/agentsview ``internal/parser/goose_paths.go`` (``GOOSE_PATH_ROOT``; the XDG layout on
Linux and macOS; Windows ``%APPDATA%/Block/goose/data``). Nov-2024 builds wrote to
``~/.config/goose/sessions``: add that directory's parent as a ``[sources]`` entry
(``goose-old = "~/.config/goose"``). ``sessions.db`` (v1.10+) is not read: its schema changes
with most releases and no real copy is public. Goose configures MCP servers as YAML
``extensions`` (``connect`` cannot edit YAML without losing comments) and has no per-turn hook.
"""

from __future__ import annotations

from agent_history.harnesses.spec import Capabilities, Harness, KindRule, Layout, Place, Signature

HARNESS = Harness(
    name="goose",
    product="Goose",
    aliases=("block-goose",),
    parser="goose.parser",
    source_kinds=("document",),
    home=Place(
        ("${GOOSE_PATH_ROOT}/data", "${XDG_DATA_HOME}/goose", "~/.local/share/goose"),
        win32=("${GOOSE_PATH_ROOT}/data", "${APPDATA}/Block/goose/data", "~/AppData/Roaming/Block/goose/data"),
    ),
    layout=Layout(kinds=(KindRule("sessions", r"sessions/[^/]+\.jsonl", "document"),)),
    signatures=(
        Signature(27, first=(r'^\{"working_dir"\s*:',), head=(r'"accumulated_total_tokens"|"message_count"',)),
        Signature(28, first=(r'^\{"role"\s*:\s*"(user|assistant)"\s*,\s*"created"\s*:\s*\d',)),
    ),
    path_hint=r"(^|/)goose/sessions/[^/]+\.jsonl$",
    capabilities=Capabilities(
        frozenset({"tokens.input_uncached", "tokens.output", "timestamps", "tool_results", "reasoning", "cwd"}),
        unsampled=(("reasoning", "thinking blocks: the real lines have none (shape: FORMATS-NEW.md §5)"),),
    ),
    built_from="real",
    built_from_why="real session lines pasted in an issue and a pull request (fixtures/samples/goose)",
)
