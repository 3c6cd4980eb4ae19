"""Price data in the catalogue: ``ah.model_pricing`` loaded from the price library
(`usage.prices`) and ``ah.model_price_ref`` — each model name seen, resolved to its price row
(`usage.model_names`).

- `load_prices` runs at `db upgrade` and whenever `usage.prices.data_key()` (the installed
  genai-prices version, our rules and own rows) differs from ``ah.meta['prices']`` — checked by
  `db.migrate.ensure_schema` at every command's first connection. In one transaction, under the
  migration lock: the rows are staged and merged (changed rows rewritten, vanished ones deleted),
  every name seen is resolved again, and the sessions whose calls may now cost something else are
  marked dirty (their stored ``cost_usd`` is re-rolled by the next index pass; reports price
  calls live and are right at once).
- `resolve_new_models` runs in the post-pass before the rollup: names of the dirty sessions'
  calls (and the sessions' own model) not resolved yet are resolved and recorded.

Importing genai-prices' data costs ~0.7 s: both import it only when there is work.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import psycopg

from agent_history.usage.prices import COLUMNS, OWN_PRICES, OwnPrice, data_key, installed_version

PRICES_KEY = "prices"
"""``ah.meta`` key holding the data key of the loaded prices."""

MIGRATION_LOCK = 0x61685F6D6967  # db.migrate's: loading prices must not race a migration

_SEEN_NAMES = """
SELECT model FROM ah.model_price_ref
UNION SELECT model FROM ah.model_call WHERE model IS NOT NULL
UNION SELECT model FROM ah.session WHERE model IS NOT NULL
"""


@dataclass(frozen=True, slots=True)
class PriceLoad:
    """What `load_prices` did: rows written (new or changed) and deleted, names resolved and how
    many of them changed price row, sessions marked dirty, and the data key now recorded."""

    rows: int
    written: int
    deleted: int
    names: int
    names_changed: int
    sessions_marked: int
    key: str


def recorded_key(conn: psycopg.Connection) -> str | None:
    """The data key of the prices in the database (None: never loaded)."""
    row = conn.execute("SELECT value FROM ah.meta WHERE key = %s", (PRICES_KEY,)).fetchone()
    return row[0] if row else None


def load_prices(conn: psycopg.Connection, *, own: Sequence[OwnPrice] = OWN_PRICES) -> PriceLoad:
    """(Re)load the price rows and re-resolve every model name seen (module docstring). Commits
    on success; raises RuntimeError when genai-prices is not installed."""
    from genai_prices.data_snapshot import get_snapshot

    from agent_history.usage.model_names import resolve
    from agent_history.usage.prices import price_rows

    key = data_key(own)
    rows, left_out = price_rows(own)
    cols = ", ".join(COLUMNS)
    updates = ", ".join(f"{c} = EXCLUDED.{c}" for c in COLUMNS[2:])
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
        conn.execute("CREATE TEMP TABLE price_stage (LIKE ah.model_pricing INCLUDING DEFAULTS) ON COMMIT DROP")
        with conn.cursor().copy(f"COPY price_stage ({cols}) FROM STDIN") as copy:
            for r in rows:
                copy.write_row(
                    [
                        ("-infinity" if r.effective_from is None else r.effective_from)
                        if c == "effective_from"
                        else getattr(r, c)
                        for c in COLUMNS
                    ]
                )
        written = conn.execute(
            f"""
            INSERT INTO ah.model_pricing AS p ({cols}) SELECT {cols} FROM price_stage
            ON CONFLICT (price_key, effective_from) DO UPDATE SET {updates}
            WHERE ({", ".join("p." + c for c in COLUMNS[2:])}) IS DISTINCT FROM
                  ({", ".join("EXCLUDED." + c for c in COLUMNS[2:])})
            RETURNING price_key
            """
        ).fetchall()
        deleted = conn.execute(
            """
            DELETE FROM ah.model_pricing AS p
            WHERE NOT EXISTS (SELECT 1 FROM price_stage AS s
                              WHERE s.price_key = p.price_key AND s.effective_from = p.effective_from)
            RETURNING price_key
            """
        ).fetchall()
        changed_keys = sorted({k for (k,) in [*written, *deleted]})
        names = [n for (n,) in conn.execute(_SEEN_NAMES).fetchall()]
        priced = {r.price_key for r in rows}
        snapshot = get_snapshot()
        version = installed_version()
        refs = [
            resolve(n, priced, left_out=left_out, own=own, snapshot=snapshot, library_version=version) for n in names
        ]
        changed_names = _write_refs(conn, refs, key)
        marked = conn.execute(
            """
            INSERT INTO ah.dirty_session (session_id)
            SELECT DISTINCT mc.session_id
            FROM ah.model_call AS mc
            JOIN ah.session AS s ON s.id = mc.session_id
            LEFT JOIN ah.model_price_ref AS r ON r.model = coalesce(mc.model, s.model)
            WHERE coalesce(mc.model, s.model) = ANY(%s) OR r.price_key = ANY(%s)
            ON CONFLICT DO NOTHING
            RETURNING session_id
            """,
            (changed_names, changed_keys),
        ).fetchall()
        conn.execute(
            "INSERT INTO ah.meta (key, value) VALUES (%s, %s) "
            "ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, updated_at = now()",
            (PRICES_KEY, key),
        )
    return PriceLoad(len(rows), len(written), len(deleted), len(names), len(changed_names), len(marked), key)


def _write_refs(conn: psycopg.Connection, refs, key: str) -> list[str]:
    """Upsert `refs` (`usage.model_names.ModelRef`); returns the names whose price key changed."""
    if not refs:
        return []
    changed = conn.execute(
        """
        WITH given (model, price_key, matched_as, reason) AS (
            SELECT * FROM unnest(%s::text[], %s::text[], %s::text[], %s::text[])
        ), old AS (
            SELECT g.model, r.price_key AS old_key, r.model IS NULL AS is_new
            FROM given AS g LEFT JOIN ah.model_price_ref AS r ON r.model = g.model
        ), up AS (
            INSERT INTO ah.model_price_ref AS r (model, price_key, matched_as, reason, resolved_by)
            SELECT model, price_key, matched_as, reason, %s FROM given
            ON CONFLICT (model) DO UPDATE SET price_key = EXCLUDED.price_key, matched_as = EXCLUDED.matched_as,
                reason = EXCLUDED.reason, resolved_by = EXCLUDED.resolved_by
            WHERE (r.price_key, r.matched_as, r.reason, r.resolved_by)
                  IS DISTINCT FROM (EXCLUDED.price_key, EXCLUDED.matched_as, EXCLUDED.reason, EXCLUDED.resolved_by)
            RETURNING r.model, r.price_key
        )
        SELECT up.model FROM up JOIN old ON old.model = up.model
        WHERE old.is_new OR old.old_key IS DISTINCT FROM up.price_key
        """,
        (
            [r.model for r in refs],
            [r.price_key for r in refs],
            [r.matched_as for r in refs],
            [r.reason for r in refs],
            key,
        ),
    ).fetchall()
    return [m for (m,) in changed]


def resolve_models(conn: psycopg.Connection, names: Sequence[str]) -> int:
    """Resolve and record each of `names` (model names as written) that ``ah.model_price_ref``
    does not hold yet; returns how many were new. ``ah.price_for`` prices only recorded names:
    the post-pass records the names of what it indexes (`resolve_new_models`); a caller pricing
    names of its own (a test, an import) records them first. Runs in the caller's transaction."""
    new = [
        n
        for (n,) in conn.execute(
            "SELECT DISTINCT x.model FROM unnest(%s::text[]) AS x (model) WHERE x.model IS NOT NULL "
            "AND NOT EXISTS (SELECT 1 FROM ah.model_price_ref AS r WHERE r.model = x.model)",
            (list(names),),
        ).fetchall()
    ]
    if not new:
        return 0
    from agent_history.usage.model_names import resolve

    priced = {k for (k,) in conn.execute("SELECT DISTINCT price_key FROM ah.model_pricing").fetchall()}
    version = installed_version()
    key = recorded_key(conn) or data_key()
    _write_refs(conn, [resolve(n, priced, library_version=version) for n in new], key)
    return len(new)


def resolve_new_models(conn: psycopg.Connection, session_ids: Sequence[int]) -> int:
    """Resolve and record the model names of sessions `session_ids` (their calls' and their own)
    that ``ah.model_price_ref`` does not hold yet (`resolve_models`); returns how many. Runs in
    the caller's transaction (the post-pass, before the rollup prices the calls)."""
    if not session_ids:
        return 0
    names = [
        n
        for (n,) in conn.execute(
            """
            SELECT model FROM ah.model_call WHERE session_id = ANY(%s) AND model IS NOT NULL
            UNION SELECT model FROM ah.session WHERE id = ANY(%s) AND model IS NOT NULL
            """,
            (list(session_ids), list(session_ids)),
        ).fetchall()
    ]
    return resolve_models(conn, names)


def priced_model_ids(conn: psycopg.Connection) -> dict[str, str]:
    """``{lower-cased model name seen: the library's model id of its price row}`` for every
    priced name (the telemetry ``model`` label values)."""
    rows = conn.execute(
        "SELECT r.model, p.model_id FROM ah.model_price_ref AS r "
        "JOIN (SELECT DISTINCT price_key, model_id FROM ah.model_pricing) AS p ON p.price_key = r.price_key"
    ).fetchall()
    return {m.lower(): mid for m, mid in rows}
