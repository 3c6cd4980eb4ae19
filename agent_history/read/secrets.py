"""The secrets report: secret-shaped spans found in stored text (``ah.secret_finding``).

Read-only (the owner or ``ah_reader``); the findings are written by the scan
(`ingest.secret_scan`). A finding names its detector, session, message or tool call (and which
field), the transcript file and the byte offset of the record the text came from, the character
span inside that field, and a preview in which every secret is ``[REDACTED]``. Curated-out
sessions are left out (`session.exclusions`).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from datetime import datetime

import psycopg

from agent_history.session.exclusions import not_excluded


@dataclass(frozen=True, slots=True)
class SecretFinding:
    """One secret-shaped span. ``where``: ``message`` | ``tool_call``; ``field``: ``text`` |
    ``input`` | ``output``; ``char_start``/``char_end``: characters within that field;
    ``byte_offset``: of the record in ``path``."""

    detector: str
    agent: str
    session_uid: str
    agent_id: str
    namespace: str | None
    where: str
    label: str | None
    """The message class or the tool name."""
    field: str
    char_start: int
    char_end: int
    path: str | None
    byte_offset: int | None
    ts: datetime | None
    preview: str

    def as_dict(self) -> dict:
        """JSON-ready form."""
        return asdict(self)


_SELECT = """
SELECT f.detector, s.agent, s.session_uid, s.agent_id, s.namespace,
       CASE WHEN f.message_id IS NOT NULL THEN 'message' ELSE 'tool_call' END,
       coalesce(m.message_class, t.name), f.field, f.char_start, f.char_end, sf.path, f.byte_offset,
       coalesce(m.ts, t.started_at), f.preview
FROM ah.secret_finding AS f
JOIN ah.session AS s ON s.id = f.session_id
LEFT JOIN ah.message AS m ON m.id = f.message_id
LEFT JOIN ah.tool_call AS t ON t.id = f.tool_call_id
LEFT JOIN ah.source_file AS sf ON sf.id = f.source_id
WHERE {excluded}
  AND (%(since)s::timestamptz IS NULL OR coalesce(m.ts, t.started_at, s.started_at) >= %(since)s)
  AND (cardinality(%(agents)s::text[]) = 0 OR s.agent = ANY(%(agents)s))
  AND (cardinality(%(detectors)s::text[]) = 0 OR f.detector = ANY(%(detectors)s))
ORDER BY sf.path NULLS LAST, f.byte_offset NULLS LAST, f.field, f.char_start
LIMIT %(limit)s
"""


def list_secrets(
    conn: psycopg.Connection,
    *,
    since: datetime | None = None,
    agents: tuple[str, ...] = (),
    detectors: tuple[str, ...] = (),
    limit: int = 1000,
) -> list[SecretFinding]:
    """Findings by file and byte offset; `since` by the message's or call's time (else the
    session's start), `agents` harness names, `detectors` detector types; at most `limit`."""
    rows = conn.execute(
        _SELECT.format(excluded=not_excluded("s")),
        {"since": since, "agents": list(agents), "detectors": list(detectors), "limit": limit},
    ).fetchall()
    return [SecretFinding(*r) for r in rows]


def secret_counts(
    conn: psycopg.Connection,
    *,
    since: datetime | None = None,
    agents: tuple[str, ...] = (),
    detectors: tuple[str, ...] = (),
) -> dict[str, int]:
    """Findings per detector type (curated-out sessions left out), filtered as `list_secrets`
    filters (no limit); {} when none."""
    return dict(
        conn.execute(
            _COUNT.format(excluded=not_excluded("s")),
            {"since": since, "agents": list(agents), "detectors": list(detectors)},
        ).fetchall()
    )


_COUNT = (
    "SELECT f.detector, count(*) "
    + _SELECT[_SELECT.index("FROM ah.secret_finding") : _SELECT.index("ORDER BY")]
    + "GROUP BY 1 ORDER BY 1"
)


def unscanned_rows(conn: psycopg.Connection) -> int:
    """Messages and tool calls not scanned yet at their current size (the next scan's work)."""
    return conn.execute(
        "SELECT (SELECT count(*) FROM ah.message AS m LEFT JOIN ah.secret_scan AS ss ON ss.message_id = m.id "
        "        WHERE ss.message_id IS NULL OR ss.scanned_bytes <> coalesce(octet_length(m.text), 0)) "
        "     + (SELECT count(*) FROM ah.tool_call AS t LEFT JOIN ah.secret_scan AS ss ON ss.tool_call_id = t.id "
        "        WHERE ss.tool_call_id IS NULL "
        "           OR ss.scanned_bytes <> coalesce(octet_length(t.input), 0) + coalesce(octet_length(t.output), 0))"
    ).fetchone()[0]
