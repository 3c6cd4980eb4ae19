"""This machine's rows of ``ah.source_file`` (docs/design.md §7 "Many machines"): files gone from
disk marked missing, and rows of unknown host (or this laptop's former name) claimed by the pass
that lists them. Both run in the loader's pass, on its connection, before the files are read.
"""

from __future__ import annotations

import os

import psycopg

from agent_history.db.tables import source_files
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
        rows = source_files.host_files_in(conn, host, namespaces)
    else:
        rows = source_files.host_files_at(conn, host, listed)
    gone = [i for i, path, missing in rows if not missing and path not in listed and not os.path.exists(path)]
    back = [i for i, path, missing in rows if missing and path in listed]
    if gone:
        source_files.mark_missing(conn, gone)
    if back:
        source_files.mark_returned(conn, back)
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
    if source_files.nothing_to_claim(conn, host):
        return  # the usual case once every machine has run: nothing to claim, no arrays sent
    with conn.transaction():
        claimed = source_files.claim_files(
            conn,
            host,
            [r.path for r, _ in files],
            [r.source.namespace for r, _ in files],
            [f"{r.source.agent}-local" for r, _ in files],
        )
        if claimed:
            source_files.claim_sessions(conn, host, [r[0] for r in claimed])
        moved = [(i, ns) for i, ns, was in claimed if ns != was]
        if moved:
            source_files.move_namespaces(conn, moved)
