"""What `status` says about the archive: copies, bytes, bad copies, sessions only the archive holds."""

from __future__ import annotations

import os
from pathlib import Path

import psycopg

from agent_history.db.tables import archive
from agent_history.ingest.archive.restore import archived


def archive_status(conn: psycopg.Connection, root: Path, host: str = "") -> dict:
    """The archive at `root` as a JSON-ready dict: ``path``; ``files`` (transcripts with a copy),
    ``copies`` (versions), ``bytes`` (uncompressed) and ``compressed_bytes``; ``bad_copies`` (failed
    their last verification); ``last_archived_at``; ``archive_only_sessions``: catalogued sessions
    (main threads) whose transcript is gone from its home and kept only in the archive. Of
    machine `host`'s copies (`manifest.all_copies`): another machine's archive is its own."""
    files, copies, size, compressed, bad, last = archive.manifest_totals(conn, host)
    only = 0
    if copies:
        kept = archived(conn, root, host)
        for namespace, rel, path in archive.main_thread_files(conn):
            if (namespace, rel) in kept and not os.path.isfile(path):
                only += 1
    return {
        "path": str(root),
        "files": files,
        "copies": copies,
        "bytes": int(size),
        "compressed_bytes": int(compressed),
        "bad_copies": bad,
        "last_archived_at": last,
        "archive_only_sessions": only,
    }
