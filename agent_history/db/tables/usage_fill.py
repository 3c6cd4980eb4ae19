"""Usage filled in from outside the transcripts (issue 19, `ingest.litellm`): the Claude calls
with an unknown token bucket, the buckets filled (``ah.model_call``, never overwriting a known
value) and the record of each fill (``ah.usage_fill``); the filled calls' sessions are marked
dirty by `db.tables.sessions.mark_dirty`. The caller owns the transaction; nothing here commits."""

from __future__ import annotations

from collections.abc import Sequence

import psycopg

_CANDIDATES_SQL = """
SELECT mc.id, mc.agent, mc.call_uid, mc.request_id, mc.session_id,
       mc.input_uncached, mc.cache_read, mc.cache_write_5m, mc.output
FROM ah.model_call AS mc
JOIN ah.session AS s ON s.id = mc.session_id
WHERE s.namespace = ANY(%s) AND mc.agent = 'claude'
  AND NOT coalesce(mc.is_api_error, false)
  AND num_nulls(mc.input_uncached, mc.cache_read, mc.cache_write_5m, mc.output) > 0
"""


def unknown_claude_calls(conn: psycopg.Connection, namespaces: Sequence[str]) -> list[tuple]:
    """The Claude calls of `namespaces` (no API-error notices) with at least one NULL bucket:
    (id, agent, call_uid, request_id, session_id, input_uncached, cache_read, cache_write_5m,
    output)."""
    return conn.execute(_CANDIDATES_SQL, (list(namespaces),)).fetchall()


def fill_call(
    conn: psycopg.Connection, call_id: int, filled: Sequence[str], values: dict, *, agent: str, call_uid: str, key: str
) -> None:
    """Fill buckets `filled` (column names of ``ah.model_call``; each NULL before) of call
    `call_id` from `values` (bucket → tokens), keeping any value set meanwhile; record the fill
    in ``ah.usage_fill`` (source ``litellm``, spend-log `key`, the buckets merged with any
    earlier fill of the call)."""
    sets = ", ".join(f"{b} = coalesce({b}, %({b})s)" for b in filled)
    conn.execute(f"UPDATE ah.model_call SET {sets} WHERE id = %(id)s", {**values, "id": call_id})
    conn.execute(
        "INSERT INTO ah.usage_fill (agent, call_uid, source, source_key, buckets) "
        "VALUES (%s, %s, 'litellm', %s, %s) ON CONFLICT (agent, call_uid, source) DO UPDATE SET "
        "buckets = (SELECT array_agg(DISTINCT b ORDER BY b) FROM unnest(ah.usage_fill.buckets || EXCLUDED.buckets) b), "
        "source_key = EXCLUDED.source_key, filled_at = now()",
        (agent, call_uid, key, list(filled)),
    )
