"""This machine's rows of ``ah.source_file`` (docs/design.md §7 "Many machines"): files gone from
disk marked missing, and rows of unknown host (or this laptop's former name) claimed by the pass
that lists them. Both run in the loader's pass, on its connection, before the files are read.
"""

from __future__ import annotations

import os

import psycopg

from agent_history.ingest.discovery import FileRef
from agent_history.ingest.strategy import PassSummary


def mark_missing(
    conn: psycopg.Connection, host: str | None, namespaces: set[str], listed: set[str], summary: PassSummary
) -> None:
    """Set ``status = 'missing'`` on the catalogued files of `namespaces` this pass did not
    list and that no longer exist on disk (their sessions stay: nothing is deleted), and
    give a listed file marked missing earlier its status back (``error`` when it has a load
    error, ``new`` when never read, ``parser_upgraded`` when it has that issue, else ``ok``);
    counts both in `summary` (``files_missing``, ``files_returned``). A file not listed that
    still exists (another pass's home of the same namespace) is left as it is; with no
    namespace (``index --file``) only the listed files are looked at. Only this host's
    files: another machine's paths say nothing about this disk."""
    if namespaces:
        rows = conn.execute(
            "SELECT id, path, status = 'missing' FROM ah.source_file "
            "WHERE namespace = ANY(%s) AND origin_host IS NOT DISTINCT FROM %s",
            (list(namespaces), host),
        ).fetchall()
    else:
        rows = conn.execute(
            "SELECT id, path, status = 'missing' FROM ah.source_file "
            "WHERE path = ANY(%s) AND origin_host IS NOT DISTINCT FROM %s",
            (list(listed), host),
        ).fetchall()
    gone = [i for i, path, missing in rows if not missing and path not in listed and not os.path.exists(path)]
    back = [i for i, path, missing in rows if missing and path in listed]
    if gone:
        conn.execute("UPDATE ah.source_file SET status = 'missing' WHERE id = ANY(%s)", (gone,))
    if back:
        conn.execute(
            "UPDATE ah.source_file AS f SET status = CASE WHEN f.last_error IS NOT NULL THEN 'error' "
            "WHEN f.size IS NULL AND f.indexed_offset = 0 THEN 'new' "
            "WHEN EXISTS (SELECT 1 FROM ah.parse_issue AS i WHERE i.source_id = f.id "
            "AND i.kind = 'parser_upgraded') THEN 'parser_upgraded' ELSE 'ok' END WHERE f.id = ANY(%s)",
            (back,),
        )
    summary.files_missing, summary.files_returned = len(gone), len(back)


def claim(conn: psycopg.Connection, host: str | None, files: list[tuple[FileRef, os.stat_result]]) -> None:
    """Give this host's name to the unknown-host rows (loaded before migration 0024) of the
    files this pass lists — the same file, seen again by the machine indexing it — where the
    row is in the namespace the file is listed under, or in ``<agent>-local``: a machine that
    indexed into a shared server before it had host namespaces (the homelab's ``claude-local``
    becoming ``claude-<host>``), whose rows (file, sessions, messages) move to the namespace
    the file is listed under now instead of being read again beside the old ones. Also any
    host's rows of an ``<agent>-local`` namespace the file is listed under: one laptop whose
    system name changed (its single-machine namespaces are its own)."""
    if host is None or not files:
        return
    if conn.execute(
        "SELECT NOT EXISTS (SELECT 1 FROM ah.source_file WHERE origin_host IS NULL "
        "OR (origin_host <> %s AND namespace LIKE '%%-local'))",
        (host,),
    ).fetchone()[0]:
        return  # the usual case once every machine has run: nothing to claim, no arrays sent
    with conn.transaction():
        claimed = conn.execute(
            "WITH f AS (SELECT * FROM unnest(%s::text[], %s::text[], %s::text[]) AS f(path, namespace, legacy)), "
            "prior AS (SELECT sf.id, sf.namespace AS was FROM ah.source_file sf JOIN f ON sf.path = f.path "
            "AND sf.namespace IN (f.namespace, f.legacy) WHERE sf.origin_host IS NULL "
            # one laptop whose system name changed: its single-machine namespace is its own
            "OR (sf.namespace = f.legacy AND f.namespace = f.legacy AND sf.origin_host <> %s) "
            "FOR UPDATE OF sf) "
            "UPDATE ah.source_file sf SET origin_host = %s, namespace = f.namespace FROM f, prior "
            "WHERE prior.id = sf.id AND sf.path = f.path "
            "AND NOT EXISTS (SELECT 1 FROM ah.source_file x WHERE x.path = sf.path AND x.origin_host = %s) "
            "RETURNING sf.id, sf.namespace, prior.was",
            (
                [r.path for r, _ in files],
                [r.source.namespace for r, _ in files],
                [f"{r.source.agent}-local" for r, _ in files],
                host,
                host,
                host,
            ),
        ).fetchall()
        if claimed:
            conn.execute(
                "UPDATE ah.session SET origin_host = %s WHERE source_id = ANY(%s) AND origin_host IS DISTINCT FROM %s",
                (host, [r[0] for r in claimed], host),
            )
        moved = [(i, ns) for i, ns, was in claimed if ns != was]
        if moved:
            for table in ("session", "message"):
                conn.execute(
                    f"UPDATE ah.{table} t SET namespace = m.namespace FROM unnest(%s::bigint[], %s::text[]) "
                    "AS m(id, namespace) WHERE t.source_id = m.id AND t.namespace IS DISTINCT FROM m.namespace",
                    ([i for i, _ in moved], [ns for _, ns in moved]),
                )
