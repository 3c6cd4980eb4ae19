"""OpenAI Codex CLI: append-only JSONL rollouts under ``~/.codex/sessions``.

Sources: FORMATS.md §2 (current ``{timestamp, type, payload}`` envelope; legacy pre-envelope
rollouts: a bare header line, then unwrapped items and ``record_type: state`` markers);
developers.openai.com/codex (``CODEX_HOME``, ``config.toml``: ``[mcp_servers.<name>]`` and the
top-level ``notify`` program, whose JSON argument names the thread whose rollout file is
``sessions/YYYY/MM/DD/rollout-<time>-<thread-id>.jsonl``); Codex memories (``memories/**.md``).
"""

from __future__ import annotations

from agent_history.harnesses.spec import (
    Capabilities,
    DocumentRule,
    Harness,
    HookSpec,
    InstalledPlaces,
    Layout,
    McpSpec,
    PermissionFile,
    Place,
    Signature,
    TranscriptLookup,
)

HARNESS = Harness(
    name="codex",
    product="Codex CLI",
    aliases=("codex-cli",),
    parser="codex.parser",
    source_kinds=("jsonl", "document"),
    home=Place(("${CODEX_HOME}", "~/.codex")),
    layout=Layout(
        roots=("sessions", "archived_sessions"),
        documents=(DocumentRule("memory", r"^memories/(.+/)?[^/]+\.md$", ("memories",)),),
        globs=("sessions/**/*.jsonl", "archived_sessions/**/*.jsonl", "memories/**/*.md"),
    ),
    signatures=(
        # legacy rollout (0.3x–0.4x): a bare header line (an id and a timestamp, no `type` key),
        # then unwrapped items
        Signature(
            60,
            first=(r'^\{"id"\s*:', r'"timestamp"'),
            absent=(r'^[^\n]*"type"',),
            head=(r'(?mi)^\{"(type|record_type)"\s*:\s*"(message|reasoning|function_call|state)"',),
        ),
        Signature(70, head=(r'"type"\s*:\s*"(session_meta|response_item|event_msg|turn_context)"',)),
        Signature(71, head=(r'"record_type"\s*:\s*"state"',)),
    ),
    path_hint=r"(^|/)\.codex/|(^|/)rollout-[^/]*\.jsonl$",
    resume="codex resume {uid}",
    fork="codex fork {uid}",  # `codex fork [SESSION_ID] [PROMPT]` (codex-cli 0.145)
    # skills: $CODEX_HOME/skills and a project's .codex/skills; execpolicy rules: `rules/*.rules`
    # next to the user config (the TUI's "always allow" appends to rules/default.rules) and a
    # trusted project's .codex/rules (developers.openai.com/codex, "Agent Skills", "Rules")
    installed=InstalledPlaces(
        user_skills=("skills",),
        project_skills=(".codex/skills",),
        permissions=(
            PermissionFile("rules/*.rules", "user", "execpolicy"),
            PermissionFile(".codex/rules/*.rules", "project", "execpolicy"),
        ),
    ),
    hook=HookSpec(
        "codex",
        Place(("${CODEX_HOME}/config.toml", "~/.codex/config.toml")),
        "notify",
        transcript_key=None,
        lookup=TranscriptLookup(
            ("thread-id",),
            Place(("${CODEX_HOME}/sessions", "~/.codex/sessions")),
            ("**/rollout-*-{id}.jsonl",),
            "notify payload has no thread-id",
            "rollout file for thread",
        ),
    ),
    mcp=McpSpec(
        "codex",
        Place(("${CODEX_HOME}/config.toml", "~/.codex/config.toml")),
        "toml",
        "stdio",
        ("mcp_servers",),
        Place(("${CODEX_HOME}/AGENTS.md", "~/.codex/AGENTS.md")),
        "section",
    ),
    capabilities=Capabilities(
        frozenset(
            {
                "tokens.input_uncached",
                "tokens.cache_read",
                "tokens.output",
                "tokens.reasoning",
                "model",
                "timestamps",
                "subagents",
                "compactions",
                "interrupts",
                "tool_results",
                "reasoning",
                "cwd",
                "git_branch",
            }
        ),
        unsampled=(
            ("interrupts", "`<turn_aborted>` user messages (the parser's prefix table): no corpus turn was aborted"),
        ),
    ),
)
