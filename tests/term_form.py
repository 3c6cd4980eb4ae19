"""The term-id form of a tool call's vector (migration 0028_term_ids) recomputed from its text, for
tests that check what the loader stored: read-only (a lexeme missing from the dictionary gives a
NULL id, so the comparison fails instead of adding it)."""

from __future__ import annotations

POSITIONAL = "ah.search_tsv(ah.tool_call_doc({t}name, {t}input, {t}output))"
"""A tool call's positional vector, from its text (migrations 0015, 0016)."""

TERM_FORM_TEXT = (
    "(SELECT coalesce(array_agg(s.id ORDER BY s.id), '{{}}')::text || ' ' || "
    "coalesce(string_agg(ah.tf_byte(coalesce(nullif(cardinality(u.positions), 0), 1)), ''::bytea ORDER BY s.id), "
    "''::bytea)::text FROM unnest(" + POSITIONAL + ") AS u "
    "LEFT JOIN ah.search_term AS s ON s.corpus = 'tool_call' AND s.lexeme = u.lexeme)"
)
"""``terms::text || ' ' || tf::text`` as recomputed from the text (format with ``t``: the row's
alias and a dot, or '')."""


def terms_differ(alias: str = "") -> str:
    """SQL condition: the stored ``terms``/``tf`` of the tool call (`alias`, e.g. ``d``) are not
    what its text gives."""
    t = f"{alias}." if alias else ""
    return f"({t}terms::text || ' ' || {t}tf::text) IS DISTINCT FROM {TERM_FORM_TEXT.format(t=t)}"
