"""The collector's installed-things half (issue 30, migration 0022): skills and plugins, permission
rules, loop charter/closeout metadata — read with `repos.installed`, written here.

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


def _upsert_installed(conn: psycopg.Connection, items: list[Installed], repo_id: int | None) -> int:
    written = 0
    for it in items:
        written += conn.execute(
            """
            INSERT INTO ah.installed_skill AS k (harness, kind, scope, name, path, source, version, description,
                repository_id, gone)
            VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, false)
            ON CONFLICT (harness, kind, path, name) DO UPDATE SET scope = EXCLUDED.scope, source = EXCLUDED.source,
                version = EXCLUDED.version, description = EXCLUDED.description,
                repository_id = EXCLUDED.repository_id, gone = false
            WHERE (k.scope, k.source, k.version, k.description, k.repository_id, k.gone)
                  IS DISTINCT FROM (EXCLUDED.scope, EXCLUDED.source, EXCLUDED.version, EXCLUDED.description,
                  EXCLUDED.repository_id, false)
            """,
            (it.harness, it.kind, it.scope, it.name, it.path, it.source, it.version, it.description, repo_id),
        ).rowcount
    return written


def _mark_gone(conn: psycopg.Connection, items: list[Installed], repo_id: int | None) -> int:
    """Rows of this level (user: no repository; project: `repo_id`) not among `items` → gone."""
    seen = [f"{i.harness}\x1f{i.kind}\x1f{i.path}\x1f{i.name}" for i in items]
    return conn.execute(
        """
        UPDATE ah.installed_skill SET gone = true
        WHERE NOT gone AND repository_id IS NOT DISTINCT FROM %s
          AND NOT (harness || chr(31) || kind || chr(31) || path || chr(31) || name = ANY (%s))
        """,
        (repo_id, seen),
    ).rowcount


def _replace_rules(conn: psycopg.Connection, path: str, rules: list[Rule], repo_id: int | None) -> int:
    keep = [f"{r.list}\x1f{r.rule}" for r in rules]
    written = conn.execute(
        "DELETE FROM ah.permission_rule WHERE settings_path = %s AND NOT (list || chr(31) || rule = ANY (%s))",
        (path, keep),
    ).rowcount
    for r in rules:
        written += conn.execute(
            """
            INSERT INTO ah.permission_rule AS p (harness, scope, settings_path, list, rule, repository_id)
            VALUES (%s, %s, %s, %s, %s, %s)
            ON CONFLICT (settings_path, list, rule) DO UPDATE SET harness = EXCLUDED.harness, scope = EXCLUDED.scope,
                repository_id = EXCLUDED.repository_id
            WHERE (p.harness, p.scope, p.repository_id)
                  IS DISTINCT FROM (EXCLUDED.harness, EXCLUDED.scope, EXCLUDED.repository_id)
            """,
            (r.harness, r.scope, r.settings_path, r.list, r.rule, repo_id),
        ).rowcount
    return written


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
    written = _upsert_installed(conn, items, None) + _mark_gone(conn, items, None)
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
    written += conn.execute(
        "DELETE FROM ah.permission_rule WHERE repository_id IS NULL AND NOT (settings_path = ANY (%s))", (read,)
    ).rowcount
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
    written = _upsert_installed(conn, items, repo_id) + _mark_gone(conn, items, repo_id)
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
    written += conn.execute(
        "DELETE FROM ah.permission_rule WHERE repository_id = %s AND NOT (settings_path = ANY (%s))", (repo_id, read)
    ).rowcount
    files = installed.loop_files(top, git.loop_md_files(top))
    for f in files:
        written += conn.execute(
            """
            INSERT INTO ah.loop_run_metadata AS m (repository_id, kind, path, sha256, first_line, mtime, size_bytes,
                gone)
            VALUES (%s, %s, %s, %s, %s, %s, %s, false)
            ON CONFLICT (repository_id, path) DO UPDATE SET kind = EXCLUDED.kind, sha256 = EXCLUDED.sha256,
                first_line = EXCLUDED.first_line, mtime = EXCLUDED.mtime, size_bytes = EXCLUDED.size_bytes, gone = false
            WHERE (m.kind, m.sha256, m.first_line, m.mtime, m.size_bytes, m.gone)
                  IS DISTINCT FROM (EXCLUDED.kind, EXCLUDED.sha256, EXCLUDED.first_line, EXCLUDED.mtime,
                  EXCLUDED.size_bytes, false)
            """,
            (repo_id, f.kind, f.rel, f.sha256, f.first_line, f.mtime, f.size_bytes),
        ).rowcount
    written += conn.execute(
        "UPDATE ah.loop_run_metadata SET gone = true WHERE repository_id = %s AND NOT gone AND NOT (path = ANY (%s))",
        (repo_id, [f.rel for f in files]),
    ).rowcount
    return len(items), n_rules, len(files), problems, written
