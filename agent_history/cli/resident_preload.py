"""What the resident query process (`cli.resident_server`) loads before it serves, and how it
knows its code changed.

- `preload` imports the CLI with every eligible command (`resident.ELIGIBLE`) registered, the
  modules of `PRELOAD` and every module of `PRELOAD_PACKAGES`, and computes the revision chain
  and the health data key once, so each forked child starts warm.
- `code_files` / `code_stamp`: the mtime and size of every loaded ``agent_history`` module, of the
  migration and ``sql/`` files with their directories, and of the installed distribution's
  METADATA — a request that finds the stamp changed is refused, so an upgrade is never served by
  old code.
"""

from __future__ import annotations

import glob
import logging
import os
import sys

from agent_history.cli import resident

PRELOAD: tuple[str, ...] = (
    "psycopg",
    "typer",
    "click",
    "rich.console",
    "rich.table",
    "rich.text",
    "orjson",
    "tzlocal",
    "zoneinfo",
    "agent_history.cli.statusline",
    "agent_history.usage.statusline",
    "agent_history.read.statusline",
    "agent_history.db.connection",
    "agent_history.db.embedded",
    "agent_history.db.idle_stop",
    "agent_history.db.migrate",
    "agent_history.db.health",
    "agent_history.classify.health",
    "agent_history.db.status",
    "agent_history.embed.status",
    "agent_history.ingest.status",
    "agent_history.ingest.archive.retention",
    "agent_history.ingest.archive.status",
    "agent_history.ingest.collect",
    "agent_history.ingest.rebuild",
    "agent_history.ingest.sources",
    "agent_history.journal.status",
    "psycopg_pool",
    "agent_history.ingest.bulk",
    "agent_history.ingest.chunks",
    "agent_history.parsers.driver",
    "agent_history.harnesses.detect",
    "agent_history.parsers.claude_code.parser",
    "agent_history.parsers.codex.parser",
    "agent_history.parsers.pi.parser",
)
"""Modules imported before serving, besides the command modules of `resident.ELIGIBLE` and every
module of `PRELOAD_PACKAGES` (what the eligible commands import on their way: the first-use
check's `db.migrate` and `db.health`, and the status sources `status` imports inside its
function — left to the child, they were ≈ 90 ms of its 109 ms of CPU, measured 2026-12-02; an
`index` pass's connection pool and bulk-path check, and for a file that changed the chunk reader
and the common harnesses' parsers, as `ingest.parse_pool` preloads them)."""
PRELOAD_PACKAGES: tuple[str, ...] = ("agent_history.read", "agent_history.search", "agent_history.usage")
log = logging.getLogger("agent_history.cli.resident_server.preload")
"""A child of the server's logger: its warnings go to ``service.log`` with the server's."""


def preload() -> int:
    """Import the CLI with every eligible command registered, and `PRELOAD`; returns the number
    of modules loaded. A module that fails to import is logged and skipped (the child imports it
    again and fails as the in-process path would)."""
    import importlib
    import pkgutil

    from agent_history.cli import app as cli_app

    for command in resident.ELIGIBLE:
        cli_app._register(command)
    cli_app.prepare_command()
    names = list(PRELOAD)
    for package in PRELOAD_PACKAGES:
        try:
            module = importlib.import_module(package)
        except Exception as exc:  # noqa: BLE001 - logged; the child reports it properly
            log.warning("preload %s: %s", package, exc)
            continue
        names += [m.name for m in pkgutil.iter_modules(module.__path__, f"{package}.")]
    for name in names:
        try:
            importlib.import_module(name)
        except Exception as exc:  # noqa: BLE001
            log.warning("preload %s: %s", name, exc)
    try:  # the revision chain and the health data key, computed once for every child (the migration files are in `code_files`)
        from agent_history.db.health import data_key
        from agent_history.db.migrate import revision_graph

        revision_graph()
        data_key()
    except Exception as exc:  # noqa: BLE001 - the child reads it again and reports it
        log.warning("preload revision_graph: %s", exc)
    return len(sys.modules)


def package_dir() -> str:
    """The directory of the loaded ``agent_history`` package (absolute)."""
    return os.path.dirname(os.path.abspath(sys.modules["agent_history"].__file__ or ""))


def code_files() -> list[str]:
    """The files whose change means new code: every loaded ``agent_history`` module's source,
    the migration files and ``sql/*.sql`` with their directories (the revision chain is read once
    by `preload`; a file added or removed changes its directory), and the installed
    distribution's METADATA (its version; rewritten by any reinstall)."""
    package = package_dir() + os.sep
    loaded = (
        getattr(m, "__file__", None) for m in list(sys.modules.values())
    )  # the server's module is __main__, its file all the same
    files = sorted({os.path.abspath(f) for f in loaded if f and os.path.abspath(f).startswith(package)})
    try:
        from agent_history.db.resources import migrations_dir, sql_dir

        for directory, pattern in ((migrations_dir() / "versions", "*.py"), (sql_dir(), "*.sql")):
            files += [str(directory), *sorted(str(p) for p in directory.glob(pattern))]
    except FileNotFoundError:
        pass  # an installation without them fails its first command in the child, as in process
    for entry in sys.path:
        files += sorted(glob.glob(os.path.join(entry or ".", "agent_history-*.dist-info", "METADATA")))
    return files


def code_stamp(files: list[str]) -> tuple[tuple[int, int], ...]:
    """(mtime_ns, size) of each of `files` ((0, 0) for one that is gone)."""
    out = []
    for path in files:
        try:
            st = os.stat(path)
            out.append((st.st_mtime_ns, st.st_size))
        except OSError:
            out.append((0, 0))
    return tuple(out)
