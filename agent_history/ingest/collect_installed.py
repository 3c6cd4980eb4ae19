"""The collector's installed-things half (issue 30, migration 0022): skills and plugins, permission
rules, loop charter/closeout metadata — read with `repos.installed`, written through
`db.tables.installed` (and `db.tables.loops` for the loop files).

Where each harness keeps them is its registry row's `installed` (`harnesses.spec.InstalledPlaces`:
skill directories, plugin lists, permission files with their reader); nothing here names a harness.

- `write_user_level(conn, homes)`: the harness homes' skills, plugins and user-level permission
  rules. `homes` maps a harness name to its home directory (`default_homes`: the `home` place of
  each harness with an `installed` row, resolved on this machine).
- `write_project_level(conn, repo_id, top)`: a repository's project skills and permission files,
  and its loop charters and closeouts (`ah.loop_run_metadata`: metadata only, never the body).

Every write is an upsert guarded by ``IS DISTINCT FROM``, so a second run changes nothing. A skill
or plugin seen before and not found now is marked ``gone`` (its row kept); a charter or closeout
no longer in the work tree likewise. Permission rules are current configuration: a rule no longer
in its file is deleted with the file's other rules re-read, and the user-level rules of a settings
file the run did not read (its home gone or moved) are deleted too. A file that cannot be read is one
`Problem` (returned, for `collect` to report and record as an issue); the rest are collected.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import psycopg

from agent_history.db.tables import installed as installed_rows
from agent_history.db.tables import loops as loop_rows
from agent_history.harnesses import HARNESSES as ROWS
from agent_history.harnesses.places import resolve
from agent_history.harnesses.spec import Harness, PermissionFile
from agent_history.repos import git, installed
from agent_history.repos.installed import Installed, Problem, Rule

INSTALLED: tuple[Harness, ...] = tuple(h for h in ROWS if h.installed is not None)
"""Harness rows whose homes or projects hold skills, plugins or permission rules, in registry order."""


def default_homes(home: Path | None = None, env: Mapping[str, str] | None = None) -> dict[str, Path]:
    """harness → its home directory on this machine (`harnesses.places.resolve`), for each row
    of `INSTALLED` with a default home."""
    return {h.name: resolve(h.home, home=home, env=env) for h in INSTALLED if h.home is not None}


def _rules(base: Path, harness: str, spec: PermissionFile) -> list[tuple[Path, list[Rule], list[Problem]]]:
    """(file, rules, problems) of each file permission file `spec` names under `base`."""
    reader = installed.RULE_READERS[spec.fmt]
    return [
        (path, *reader(path, harness, spec.scope, spec.lists)) for path in installed.permission_files(base, spec.path)
    ]


def _write_items(conn: psycopg.Connection, items: list[Installed], repo_id: int | None) -> int:
    """Upsert `items` of this level (user: no repository; project: `repo_id`) and mark the level's
    rows not among them gone; returns rows written."""
    written = installed_rows.upsert_installed(
        conn,
        [(i.harness, i.kind, i.scope, i.name, i.path, i.source, i.version, i.description) for i in items],
        repo_id,
    )
    return written + installed_rows.mark_installed_gone(
        conn, [(i.harness, i.kind, i.path, i.name) for i in items], repo_id
    )


def _replace_rules(conn: psycopg.Connection, path: str, rules: list[Rule], repo_id: int | None) -> int:
    return installed_rows.replace_rules(
        conn, path, [(r.harness, r.scope, r.settings_path, r.list, r.rule) for r in rules], repo_id
    )


def write_user_level(conn: psycopg.Connection, homes: Mapping[str, Path]) -> tuple[int, int, list[Problem], int]:
    """User-level skills, plugins and permission rules of `homes`; returns (skills and plugins
    found, rules found, problems, rows written)."""
    items: list[Installed] = []
    problems: list[Problem] = []
    rows = [h for h in INSTALLED if h.name in homes]
    for h in rows:
        for sub in h.installed.user_skills:
            found, bad = installed.skills_in(homes[h.name] / sub, h.name, "user")
            items += found
            problems += bad
    for h in rows:
        for rel, fmt in h.installed.plugins:
            found, bad = installed.PLUGIN_READERS[fmt](homes[h.name] / rel, h.name)
            items += found
            problems += bad
    written = _write_items(conn, items, None)
    n_rules = 0
    read: list[str] = []
    for h in rows:
        for spec in h.installed.permissions:
            if spec.scope != "user":
                continue
            for path, rules, bad in _rules(homes[h.name], h.name, spec):
                read.append(str(path))
                problems += bad
                if not bad:
                    n_rules += len(rules)
                    written += _replace_rules(conn, str(path), rules, None)
    # user-level rules of settings files this run did not read (a home gone or moved) are no
    # longer in force here: the permissions report shows what collect found, nothing older
    written += installed_rows.delete_user_rules_except(conn, read)
    return len(items), n_rules, problems, written


def write_project_level(conn: psycopg.Connection, repo_id: int, top: Path) -> tuple[int, int, int, list[Problem], int]:
    """A repository's project skills and permission rules, and its loop charters and closeouts;
    returns (skills, rules, loop files, problems, rows written)."""
    items: list[Installed] = []
    problems: list[Problem] = []
    for h in INSTALLED:
        for sub in h.installed.project_skills:
            found, bad = installed.skills_in(top / sub, h.name, "project")
            items += found
            problems += bad
    written = _write_items(conn, items, repo_id)
    n_rules = 0
    read: list[str] = []
    for h in INSTALLED:
        for spec in h.installed.permissions:
            if spec.scope == "user":
                continue
            for path, rules, bad in _rules(top, h.name, spec):
                read.append(str(path))
                problems += bad
                if not bad:
                    n_rules += len(rules)
                    written += _replace_rules(conn, str(path), rules, repo_id)
    # rules of a project's permission files no longer there (a removed `.codex/rules/x.rules`)
    written += installed_rows.delete_project_rules_except(conn, repo_id, read)
    files = installed.loop_files(top, git.loop_md_files(top))
    written += loop_rows.upsert_loop_files(
        conn, repo_id, [(f.kind, f.rel, f.sha256, f.first_line, f.mtime, f.size_bytes) for f in files]
    )
    written += loop_rows.mark_loop_files_gone(conn, repo_id, [f.rel for f in files])
    return len(items), n_rules, len(files), problems, written
