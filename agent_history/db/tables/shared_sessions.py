"""Sessions one namespace's files hold that another namespace stored first (docs/design.md §7
"Many machines": a synced home).

A session's natural key ``(agent, session_uid, agent_id)`` has no namespace: when the same
transcript sits in two homes indexed into one catalogue — a home synced between two machines,
each indexing it under its own ``[host] name`` — the second namespace's copy merges into the
session the first stored (nothing lost, nothing doubled), and the session keeps the first
namespace (``ah.session.namespace``, ``source_id``: kept first). The second namespace then
counts no session of its own. This module finds those sessions for the pass summary and
`status`: a file of namespace N holds the same transcript as the file of namespace M that
stored a session when both have the same harness (``agent``), the same path relative to their
home (``rel_path``) and the same head hash (``head_sha256``, the first 64 KiB read; documents:
``content_sha256``). The hash keeps two machines' unrelated files of one fixed name
(``opencode.db``) apart; a copy whose head differs (a short file synced mid-append) is not
counted — the rows still merge, only the note is missing.
"""

from __future__ import annotations

from collections.abc import Collection

import psycopg

_STORED_ELSEWHERE = """
SELECT f.namespace, s.namespace, count(DISTINCT s.id)
FROM ah.source_file f
JOIN ah.source_file first ON first.agent = f.agent AND first.rel_path = f.rel_path
    AND first.namespace <> f.namespace
    AND (first.head_sha256 = f.head_sha256 OR first.content_sha256 = f.content_sha256)
JOIN ah.session s ON s.source_id = first.id AND s.namespace IS DISTINCT FROM f.namespace
WHERE %(ids)s::bigint[] IS NULL OR f.id = ANY(%(ids)s::bigint[])
GROUP BY 1, 2
ORDER BY 1, 2
"""


def sessions_stored_elsewhere(
    conn: psycopg.Connection, source_ids: Collection[int] | None = None
) -> dict[str, dict[str, int]]:
    """``{namespace: {namespace that stored them: sessions}}``: the sessions the files of each
    namespace hold (the same transcript, module docstring) that another namespace stored first,
    counted once per pair. `source_ids`: only these ``source_file`` ids (a pass's changed files);
    None: every file (`status`). Read-only; needs no lock. Namespaces with none are absent."""
    ids = None if source_ids is None else sorted(source_ids)
    if ids == []:
        return {}
    out: dict[str, dict[str, int]] = {}
    for namespace, stored_by, n in conn.execute(_STORED_ELSEWHERE, {"ids": ids}):
        out.setdefault(namespace, {})[stored_by or "?"] = n
    return out
