"""The session-health rule and the harness capability table in the catalogue (issue 32).

`load_health` writes ``ah.health_signal``, ``ah.health_rule``, ``ah.health_grade`` (from
`agent_history.classify.health`) and ``ah.harness_capability`` (from the harness registry) whole,
in one transaction under the migration lock, and records their data key in
``ah.meta['health']``. `db.migrate.ensure_schema` calls it when the key differs from `data_key()`
(a rule, a band or a harness row changed), so the view ``ah.session_health`` always grades by
the rule this code declares.
"""

from __future__ import annotations

import hashlib
import json
from functools import cache

import psycopg

from agent_history.classify.health import GRADES, RULES, SIGNALS
from agent_history.harnesses import HARNESSES

HEALTH_KEY = "health"
"""``ah.meta`` key holding the data key of the loaded rule and capability rows."""

MIGRATION_LOCK = 0x61685F6D6967  # db.migrate's: loading must not race a migration


def capability_rows() -> list[tuple[str, str]]:
    """(agent, capability) for every capability each harness row declares, sorted."""
    return sorted((h.name, c) for h in HARNESSES for c in h.capabilities.records)


@cache
@cache
def data_key() -> str:
    """sha256 hex of the signals, rules, bands and capability rows (what `load_health` writes);
    computed once per process (all of it is code)."""
    data = {
        "signals": [[s.name, s.label, s.unit, s.capability, s.definition] for s in SIGNALS],
        "rules": [[r.signal, r.threshold, r.points, r.source] for r in RULES],
        "grades": [list(g) for g in GRADES],
        "capabilities": capability_rows(),
    }
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()


def load_health(conn: psycopg.Connection) -> int:
    """Rewrite the four tables and record the data key; commits. Returns the rows written."""
    with conn.transaction():
        conn.execute(f"SELECT pg_advisory_xact_lock({MIGRATION_LOCK})")
        conn.execute("DELETE FROM ah.health_rule")
        conn.execute("DELETE FROM ah.health_signal")
        conn.execute("DELETE FROM ah.health_grade")
        conn.execute("DELETE FROM ah.harness_capability")
        with conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO ah.health_signal (name, position, label, unit, capability, definition) "
                "VALUES (%s, %s, %s, %s, %s, %s)",
                [(s.name, i, s.label, s.unit, s.capability, s.definition) for i, s in enumerate(SIGNALS)],
            )
            cur.executemany(
                "INSERT INTO ah.health_rule (signal, threshold, points, source) VALUES (%s, %s, %s, %s)",
                [(r.signal, r.threshold, r.points, r.source) for r in RULES],
            )
            cur.executemany("INSERT INTO ah.health_grade (grade, min_score) VALUES (%s, %s)", list(GRADES))
            caps = capability_rows()
            cur.executemany("INSERT INTO ah.harness_capability (agent, capability) VALUES (%s, %s)", caps)
        conn.execute(
            "INSERT INTO ah.meta (key, value) VALUES (%s, %s) "
            "ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, updated_at = now()",
            (HEALTH_KEY, data_key()),
        )
    return len(SIGNALS) + len(RULES) + len(GRADES) + len(caps)
