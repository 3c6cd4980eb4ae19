"""Goose (block/goose, now aaif-goose/goose): before its SQLite store, one JSONL file per
session that Goose rewrote whole after each message — read as a whole document
(`parsers.goose`).

Sources: FORMATS-NEW.md §5 and the real lines in fixtures/samples/goose (issue #2529, PR #283);
kenn-io/agentsview ``internal/parser/goose_paths.go`` (``GOOSE_PATH_ROOT``; the XDG layout on
Linux and macOS; Windows ``%APPDATA%/Block/goose/data``). Nov-2024 builds wrote to
``~/.config/goose/sessions``: add that directory's parent as a ``[sources]`` entry
(``goose-old = "~/.config/goose"``). ``sessions/sessions.db`` (v1.10+, SQLite in WAL mode) is read
read-only by cursor, its schema verified against goose's ``session_manager.rs`` (version 10); no
real copy is public, so the tests build one from that schema. Goose configures MCP servers as YAML
``extensions`` (``connect`` cannot edit YAML without losing comments) and has no per-turn hook.
"""

from __future__ import annotations

from agent_history.harnesses.spec import Capabilities, Harness, KindRule, Layout, Place, Signature

HARNESS = Harness(
    name="goose",
    product="Goose",
    aliases=("block-goose",),
    parser="goose.parser",
    source_kinds=("document", "database"),
    home=Place(
        ("${GOOSE_PATH_ROOT}/data", "${XDG_DATA_HOME}/goose", "~/.local/share/goose"),
        win32=("${GOOSE_PATH_ROOT}/data", "${APPDATA}/Block/goose/data", "~/AppData/Roaming/Block/goose/data"),
    ),
    layout=Layout(
        kinds=(
            KindRule("sessions", r"sessions/sessions\.db", "database"),
            KindRule("sessions", r"sessions/[^/]+\.jsonl", "document"),
        ),
        globs=("sessions/sessions.db", "sessions/*.jsonl"),
    ),
    signatures=(
        Signature(27, first=(r'^\{"working_dir"\s*:',), head=(r'"accumulated_total_tokens"|"message_count"',)),
        Signature(28, first=(r'^\{"role"\s*:\s*"(user|assistant)"\s*,\s*"created"\s*:\s*\d',)),
        Signature(29, head=(r"^SQLite format 3\x00",), path="sessions/sessions.db"),
    ),
    path_hint=r"(^|/)goose/sessions/[^/]+\.(jsonl|db)$",
    capabilities=Capabilities(
        # model (model_config_json), sub-agent sessions (session_type) and thinking blocks: only
        # sessions.db shows them, and only the schema-built one (the real legacy lines have none)
        frozenset(
            {
                "tokens.input_uncached",
                "tokens.output",
                "model",
                "timestamps",
                "subagents",
                "tool_results",
                "reasoning",
                "cwd",
            }
        ),
    ),
    built_from="real",
    built_from_why="real session lines pasted in an issue and a pull request (fixtures/samples/goose); "
    "sessions.db from goose's schema (no real copy public)",
)
