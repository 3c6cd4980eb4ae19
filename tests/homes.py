"""Helpers for tests that index a home (a directory laid out like ``~``) or run the CLI on one:
the sources of a home, one loader pass over it, a CLI subprocess, a writable corpus copy."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import psycopg

from agent_history.ingest.discovery import Source, agent_of_namespace, home_layout
from agent_history.ingest.loader import Loader, PassSummary

PY = sys.executable


def sources_for(home: Path) -> list[Source]:
    """One Source per agent home found under `home` (namespaces as `index --home` names them)."""
    return [Source(ns, agent_of_namespace(ns), path) for ns, path in home_layout(home).items()]


def index(db, home: Path, **kw) -> PassSummary:
    """One real loader pass over `home` into test database `db` (`kw`: Loader options)."""
    with psycopg.connect(db.dsn, autocommit=True) as conn:
        return Loader(conn, **kw).run(sources_for(home))


def cli(*args: str, env: dict, timeout: float = 300) -> subprocess.CompletedProcess:
    """``agent-history ARGS`` in a subprocess with environment `env`; output captured as text."""
    return subprocess.run([PY, "-m", "agent_history", *args], env=env, capture_output=True, text=True, timeout=timeout)


def copy_home(src: Path, dst: Path) -> Path:
    """A writable copy of home `src` at `dst` (tests that edit, grow or delete its files)."""
    shutil.copytree(src, dst)
    return dst
