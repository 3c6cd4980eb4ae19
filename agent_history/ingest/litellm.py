"""Fill unknown token counts of Claude calls from a LiteLLM proxy's spend log (issue 19).

A Claude Code session that talks to Anthropic through a LiteLLM proxy (or another adapter) can
carry usage the transcript does not know: the parser stores NULL there (never 0). LiteLLM writes
one row per request to its ``"LiteLLM_SpendLogs"`` table (columns used: ``request_id`` — the
provider's response id, Anthropic's ``msg_…``; ``prompt_tokens``, ``completion_tokens``;
``metadata->'usage_object'`` with ``cache_read_input_tokens`` / ``cache_creation_input_tokens``
when the proxy recorded them).

Rules:
- Only calls of the configured namespaces (``[litellm] namespaces``), agent ``claude``, not API
  error notices, with at least one NULL bucket among input_uncached, cache_read,
  cache_write_5m, output.
- Matched by id: the spend-log ``request_id`` equals the call's ``call_uid`` (``message.id``)
  or its ``request_id`` (Claude Code's ``requestId``).
- Buckets from the spend log: output = completion_tokens; cache_read / cache_write_5m = the usage
  object's cache fields; input_uncached = prompt_tokens − cache_read − cache_write_5m, only when
  both cache fields are known (LiteLLM's prompt_tokens include cached input, so without them the
  split is unknown and input stays NULL).
- Never overwrite: a bucket that is not NULL is left alone (``coalesce``); a negative or missing
  spend-log value fills nothing.
- Every filled call gets a row in ``ah.usage_fill`` naming the buckets filled and the
  spend-log key; its session is marked dirty so the next post-pass refreshes the rollup.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import psycopg

from agent_history.db.tables import sessions, usage_fill

BUCKETS = ("input_uncached", "cache_read", "cache_write_5m", "output")

_SPEND_SQL = """
SELECT request_id, prompt_tokens, completion_tokens,
       (metadata -> 'usage_object' ->> 'cache_read_input_tokens'),
       (metadata -> 'usage_object' ->> 'cache_creation_input_tokens')
FROM "LiteLLM_SpendLogs"
WHERE request_id = ANY(%s)
"""


class LiteLLMError(RuntimeError):
    """The spend log could not be read (connection refused, no such table, …): one line."""


@dataclass
class FillSummary:
    """What a fill did: calls looked at, calls matched in the spend log, calls with at least one
    bucket filled, and per bucket the number of calls filled."""

    candidates: int = 0
    matched: int = 0
    filled: int = 0
    buckets: dict[str, int] = field(default_factory=lambda: dict.fromkeys(BUCKETS, 0))

    def as_dict(self) -> dict:
        """JSON-ready form."""
        return {"candidates": self.candidates, "matched": self.matched, "filled": self.filled, "buckets": self.buckets}


def _count(value) -> int | None:
    if value is None:
        return None
    try:
        n = int(value)
    except (TypeError, ValueError):
        return None
    return n if n >= 0 else None


def spend_buckets(prompt, completion, cache_read, cache_creation) -> dict[str, int | None]:
    """One spend-log row → our buckets (rules in the module docstring); None = unknown."""
    prompt, completion = _count(prompt), _count(completion)
    cr, cw = _count(cache_read), _count(cache_creation)
    uncached = None
    if prompt is not None and cr is not None and cw is not None and prompt >= cr + cw:
        uncached = prompt - cr - cw
    return {"input_uncached": uncached, "cache_read": cr, "cache_write_5m": cw, "output": completion}


def fill_from_litellm(conn: psycopg.Connection, litellm_dsn: str, namespaces: list[str]) -> FillSummary:
    """Fill NULL buckets of the `namespaces`' Claude calls from the spend log at `litellm_dsn`
    (opened read-only), in one transaction on `conn`. Raises LiteLLMError when the spend log
    cannot be read."""
    summary = FillSummary()
    rows = usage_fill.unknown_claude_calls(conn, namespaces)
    summary.candidates = len(rows)
    ids = sorted({k for r in rows for k in (r[2], r[3]) if k})
    try:  # read even when nothing is unknown: a wrong dsn or table is an error, not "0 filled"
        with psycopg.connect(litellm_dsn, autocommit=True, connect_timeout=10) as src:
            src.execute("SET default_transaction_read_only = on")
            spend = {r[0]: spend_buckets(*r[1:]) for r in src.execute(_SPEND_SQL, (ids,)).fetchall()}
    except psycopg.Error as exc:
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise LiteLLMError(f"LiteLLM spend log: {first}") from None
    dirty: set[int] = set()
    with conn.transaction():
        for mc_id, agent, call_uid, request_id, session_id, *known in rows:
            key = call_uid if call_uid in spend else request_id if request_id in spend else None
            if key is None:
                continue
            summary.matched += 1
            got = spend[key]
            filled = [b for b, have in zip(BUCKETS, known, strict=True) if have is None and got[b] is not None]
            if not filled:
                continue
            usage_fill.fill_call(conn, mc_id, filled, got, agent=agent, call_uid=call_uid, key=key)
            dirty.add(session_id)
            summary.filled += 1
            for b in filled:
                summary.buckets[b] += 1
        if dirty:
            sessions.mark_dirty(conn, sorted(dirty))
    return summary
