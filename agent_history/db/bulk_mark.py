"""The mark an unfinished bulk load leaves in ``ah.meta`` (written by `agent_history.ingest.bulk`).

Kept on the database floor so a read path — `search` notes an unfinished load — can ask without
importing the loader (the search command's start-up stays clear of `agent_history.ingest`).
"""

from __future__ import annotations

import psycopg

BULK_PASS_KEY = "bulk_pass"
"""``ah.meta`` key of an unfinished bulk pass (value: JSON ``{"run_id", "indexes"}``)."""


def bulk_load_unfinished(conn: psycopg.Connection) -> bool:
    """Whether an index pass left a bulk load unfinished (searches run without the GIN indexes)."""
    return conn.execute("SELECT 1 FROM ah.meta WHERE key = %s", (BULK_PASS_KEY,)).fetchone() is not None
