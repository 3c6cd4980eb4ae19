"""Which namespaces a tool call covers: a named context (config `[contexts]`), explicit namespaces,
or everything in the catalogue. Every tool result carries `Scope.as_dict()` (docs/design.md §10: "every
result names the context/namespaces it searched"). A context is a search scope, not access control.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import psycopg

from agent_history.read.catalog import catalogue_namespaces
from agent_history.session.filters import empty_namespaces


class ScopeError(ValueError):
    """An unknown context name (the message lists the known ones)."""


@dataclass(frozen=True)
class Scope:
    """`namespaces` is None for "all namespaces"; `searched` is what was actually covered;
    `empty` the chosen namespaces with no files in the catalogue (a typo finds nothing there)."""

    context: str | None
    namespaces: list[str] | None
    searched: list[str]
    empty: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        """``{"context": name | "all" | null, "namespaces": [...]}`` for a result, plus a
        ``"warning"`` naming the namespaces without files when there are any."""
        context = self.context if self.context else ("all" if self.namespaces is None else None)
        out: dict[str, Any] = {"context": context, "namespaces": self.searched}
        if self.empty:
            names = ", ".join(repr(n) for n in self.empty)
            out["warning"] = f"no files in the catalogue for namespace {names}"
        return out


def resolve_scope(
    conn: psycopg.Connection,
    contexts: dict[str, list[str]],
    *,
    context: str | None = None,
    namespaces: list[str] | None = None,
) -> Scope:
    """Resolve `context` (a name from config) and/or explicit `namespaces` to a `Scope`.

    Both given → their intersection. Neither → every namespace in the catalogue.
    Raises ScopeError for an unknown context.
    """
    chosen: list[str] | None = None
    if context:
        if context not in contexts:
            known = ", ".join(sorted(contexts)) or "none configured"
            raise ScopeError(f"unknown context {context!r} (known contexts: {known})")
        chosen = list(contexts[context])
    if namespaces:
        chosen = [n for n in (chosen if chosen is not None else namespaces) if n in namespaces]
    if chosen is None:
        return Scope(None, None, catalogue_namespaces(conn))
    chosen = sorted(set(chosen))
    return Scope(context, chosen, chosen, tuple(empty_namespaces(conn, chosen)))
