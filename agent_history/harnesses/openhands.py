"""OpenHands V1 (the software-agent-sdk and its CLI): one directory per conversation,
``~/.openhands/conversations/<id>/`` with ``base_state.json`` and ``events/event-<NNNNN>-<event
id>.json``, every file a whole JSON document (`parsers.openhands`).

Sources: FORMATS-NEW.md §11 — OpenHands/software-agent-sdk ``openhands-sdk/openhands/sdk/
conversation/persistence_const.py`` (``BASE_STATE``, ``EVENTS_DIR``, ``EVENT_NAME_RE``),
``conversation/state.py`` and ``event/`` @ 611629e6999a; kenn-io/agentsview ``types.go`` (the CLI's
``~/.openhands/conversations``). SDK programs choose their own ``persistence_dir``: add it as a
``[sources]`` entry. The real captures are listed in fixtures/samples/openhands/PROVENANCE.md,
not committed (fetched); the committed conversation is hand-written in their shape. The V0 app's
``~/.openhands/sessions/<sid>/events/<n>.json`` is not read. Hooks (``.openhands/hooks.json``) and
the MCP configuration of the CLI are not verified: ``connect`` writes neither.
"""

from __future__ import annotations

from agent_history.harnesses.spec import Capabilities, Harness, KindRule, Layout, Place, Signature

HARNESS = Harness(
    name="openhands",
    product="OpenHands",
    aliases=("all-hands", "openhands-cli"),
    parser="openhands.parser",
    source_kinds=("document",),
    home=Place(("~/.openhands",)),
    layout=Layout(
        kinds=(
            KindRule("conversations", r"conversations/[^/]+/base_state\.json", "document"),
            KindRule("conversations", r"conversations/[^/]+/events/event-\d{5,}-[0-9a-fA-F-]{8,}\.json", "document"),
        ),
        globs=("conversations/*/base_state.json", "conversations/*/events/event-*.json"),
    ),
    signatures=(
        Signature(
            34,
            head=(r'"kind"\s*:\s*"[A-Za-z]+(Event|Observation|Condensation|CondensationRequest)"',),
            path="/events/event-",
        ),
        Signature(35, head=(r'"usage_to_metrics"|"agent_state"',), path="base_state.json"),
    ),
    path_hint=r"(^|/)conversations/[^/]+/(base_state\.json|events/event-\d+-[^/]+\.json)$",
    capabilities=Capabilities(
        frozenset(
            {
                "tokens.input_uncached",
                "tokens.cache_read",
                "tokens.cache_write_5m",
                "tokens.output",
                "cost",
                "model",
                "timestamps",
                "compactions",
                "tool_results",
                "reasoning",
                "cwd",
            }
        )
    ),
    built_from="schema",
    built_from_why="real captures listed but fetched (not committed); the SDK's event and state models, a hand-written conversation",
)
