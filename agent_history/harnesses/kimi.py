"""Kimi Code CLI (Moonshot AI's TypeScript ``kimi``, 2026): per session a directory
``~/.kimi-code/sessions/wd_<slug>_<hash>/session_<uuid>/`` with ``state.json`` (a whole
document) and one append-only journal per agent, ``agents/<agent>/wire.jsonl``
(`parsers.kimi`).

Sources: FORMATS-NEW.md §9 and the real (clipped) journals in fixtures/samples/kimi
(jazzyalex/agent-sessions); the layout from agent-sessions' ``agent-support-matrix.yml`` and
kenn-io/agentsview ``types.go``. No environment override of ``~/.kimi-code`` is documented.
The older Python ``kimi-cli`` (``~/.kimi``, ``context.jsonl`` + ``wire.jsonl``) has no public
real sample and is not read. Hooks are ``[[hooks]]`` tables in ``~/.kimi-code/config.toml``
whose Stop payload is not documented to name the transcript, and the MCP configuration file
is not verified: neither is installed by ``connect``.
"""

from __future__ import annotations

from agent_history.harnesses.spec import Capabilities, Harness, KindRule, Layout, Place, Signature

HARNESS = Harness(
    name="kimi",
    product="Kimi Code CLI",
    aliases=("kimi-code", "kimi-cli"),
    parser="kimi.parser",
    source_kinds=("jsonl", "document"),
    home=Place(("~/.kimi-code",)),
    layout=Layout(
        kinds=(
            KindRule("sessions", r"sessions/[^/]+/[^/]+/agents/[^/]+/wire\.jsonl", "jsonl"),
            KindRule("sessions", r"sessions/[^/]+/[^/]+/state\.json", "document"),
        )
    ),
    signatures=(
        Signature(
            24,
            head=(
                r'"type"\s*:\s*"(turn\.(prompt|steer|cancel)|context\.append_loop_event|llm\.request|usage\.record)"',
            ),
        ),
    ),
    path_hint=r"(^|/)\.kimi-code/sessions/",
    capabilities=Capabilities(
        frozenset(
            {
                "tokens.input_uncached",
                "tokens.cache_read",
                "tokens.cache_write_5m",
                "tokens.output",
                "model",
                "timestamps",
                "subagents",
                "compactions",
                "tool_results",
                "reasoning",
                "cwd",
            }
        )
    ),
    built_from="real",
    built_from_why="three real Kimi Code journals, long values clipped by their author (fixtures/samples/kimi)",
)
