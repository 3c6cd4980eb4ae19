"""Tool declarations for the MCP server: each tool is data — name, description, JSON schema — plus
a thin handler ``handler(conn, scope, args, env) -> dict`` that calls the library and shapes the result.

`ToolEnv.call(spec, arguments)` is the one path every call takes: validate the arguments against
the tool's schema (defaults filled in), open a guarded read-only connection (`mcp.reader`),
resolve the scope (context / namespaces → `Scope`), run the handler, and render compact JSON
whose first key is ``scope`` (what was searched). Failures raise `ToolFailure` with one line.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import jsonschema
import psycopg

from agent_history.config import EmbeddingSettings
from agent_history.embed.redact import redact_tree
from agent_history.mcp.reader import guarded_connection
from agent_history.mcp.render import MAX_RESULT_CHARS, to_json
from agent_history.mcp.scope import Scope, ScopeError, resolve_scope

Handler = Callable[[psycopg.Connection, Scope, dict[str, Any], "ToolEnv"], dict[str, Any]]


class ToolFailure(Exception):
    """A tool call failed; the message (one line) goes back to the agent as an error result."""


# Schema fragments shared by several tools.
SCOPE_PROPERTIES: dict[str, Any] = {
    "context": {
        "type": "string",
        "description": "A named context from the agent-history config ([contexts]): a list of namespaces "
        "to search. Omit to search every namespace.",
    },
    "namespaces": {
        "type": "array",
        "items": {"type": "string"},
        "description": 'Namespaces to search, e.g. ["claude-local", "codex-work"] (<agent>-<profile>). '
        "Intersected with `context` when both are given.",
    },
}
SINCE = {
    "type": "string",
    "description": "Only after this time: relative (30m, 12h, 7d, 2w) or ISO date/timestamp (naive = UTC).",
}
UNTIL = {
    "type": "string",
    "description": "Only before this time: relative (e.g. 1d = a day ago) or ISO date/timestamp.",
}


def limit_schema(default: int, maximum: int, what: str) -> dict[str, Any]:
    """A `limit` property: integer 1…`maximum`, defaulting to `default`."""
    return {
        "type": "integer",
        "minimum": 1,
        "maximum": maximum,
        "default": default,
        "description": f"Maximum {what} returned.",
    }


@dataclass(frozen=True)
class ToolSpec:
    """One MCP tool. `properties`/`required` form the input JSON schema; `scoped` adds the
    context/namespaces properties; `max_chars` caps the rendered result."""

    name: str
    title: str
    description: str
    properties: dict[str, Any]
    handler: Handler
    required: tuple[str, ...] = ()
    scoped: bool = True
    max_chars: int = MAX_RESULT_CHARS
    statement_timeout_ms: int | None = None

    @property
    def input_schema(self) -> dict[str, Any]:
        """The tool's JSON schema (draft 2020-12 object schema)."""
        props = dict(self.properties)
        if self.scoped:
            props.update(SCOPE_PROPERTIES)
        schema: dict[str, Any] = {"type": "object", "properties": props, "additionalProperties": False}
        if self.required:
            schema["required"] = list(self.required)
        return schema


def _with_defaults(schema: dict[str, Any], arguments: dict[str, Any]) -> dict[str, Any]:
    args = dict(arguments)
    for name, prop in schema["properties"].items():
        if name not in args and "default" in prop:
            args[name] = prop["default"]
    return args


def validate_arguments(spec: ToolSpec, arguments: dict[str, Any] | None) -> dict[str, Any]:
    """`arguments` checked against the tool's schema, defaults filled in. Raises ToolFailure."""
    schema = spec.input_schema
    arguments = arguments or {}
    errors = sorted(jsonschema.Draft202012Validator(schema).iter_errors(arguments), key=lambda e: list(e.path))
    if errors:
        first = errors[0]
        where = ".".join(str(p) for p in first.path) or "arguments"
        raise ToolFailure(f"invalid {where} for {spec.name}: {first.message}")
    return _with_defaults(schema, arguments)


@dataclass
class ToolEnv:
    """What handlers need besides arguments: the reader DSN (resolved lazily), the contexts, and
    the embedding settings (None: embeddings off, searches are keyword-only)."""

    reader_dsn: Callable[[], str]
    contexts: dict[str, list[str]] = field(default_factory=dict)
    embedding: EmbeddingSettings | None = None

    def call(self, spec: ToolSpec, arguments: dict[str, Any] | None) -> str:
        """Run `spec` with `arguments`; compact JSON text with secret-shaped spans ``[REDACTED]``
        (`embed.redact.redact_tree`). Raises ToolFailure (one line)."""
        args = validate_arguments(spec, arguments)
        context = args.pop("context", None)
        namespaces = args.pop("namespaces", None)
        kwargs = {"statement_timeout_ms": spec.statement_timeout_ms} if spec.statement_timeout_ms else {}
        try:
            with guarded_connection(self.reader_dsn(), **kwargs) as conn:
                scope = resolve_scope(conn, self.contexts, context=context, namespaces=namespaces)
                result = spec.handler(conn, scope, args, self)
        except (ScopeError, ValueError, LookupError) as exc:
            raise ToolFailure(str(exc)) from None
        except OverflowError as exc:  # a date or number beyond its type's range: say which tool
            raise ToolFailure(f"{spec.name}: a value is out of range ({exc})") from None
        except psycopg.Error as exc:
            first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            raise ToolFailure(f"{spec.name} failed: {first}") from None
        # Results go into an agent's context and on to a model provider: secret-shaped spans are
        # [REDACTED] in every string but identifiers (the CLI, the user's own terminal, shows them).
        return to_json(redact_tree({"scope": scope.as_dict(), **result}), max_chars=spec.max_chars)
