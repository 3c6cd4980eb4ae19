"""What is installed (migration 0022): ``ah.installed_skill`` (skills and plugins) and
``ah.permission_rule`` (settings' permission rules), user level (no repository) and project level.

`ingest.collect_installed` reads the harness homes and checkouts and builds the rows; the
functions here write them, one statement per row as before (the counts are `collect`'s rows
written). A skill or plugin seen before and not found now is marked ``gone`` (its row kept);
permission rules are current configuration, so a rule no longer in its file is deleted. Every
upsert is guarded by ``IS DISTINCT FROM``. Nothing here commits; writes need the
``ah_collector`` role (or the schema owner).
"""

from __future__ import annotations

from collections.abc import Sequence

import psycopg


def upsert_installed(conn: psycopg.Connection, items: Sequence[tuple], repo_id: int | None) -> int:
    """Upsert skills and plugins — (harness, kind, scope, name, path, source, version,
    description) rows — found in a harness home (`repo_id` None) or in the repository `repo_id`
    (not gone any more); returns rows written."""
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
            (*it, repo_id),
        ).rowcount
    return written


def mark_installed_gone(
    conn: psycopg.Connection, seen: Sequence[tuple[str, str, str, str]], repo_id: int | None
) -> int:
    """Rows of this level (user: `repo_id` None; project: the repository `repo_id`) whose
    (harness, kind, path, name) is not in `seen` → gone; returns rows written."""
    keys = [f"{harness}\x1f{kind}\x1f{path}\x1f{name}" for harness, kind, path, name in seen]
    return conn.execute(
        """
        UPDATE ah.installed_skill SET gone = true
        WHERE NOT gone AND repository_id IS NOT DISTINCT FROM %s
          AND NOT (harness || chr(31) || kind || chr(31) || path || chr(31) || name = ANY (%s))
        """,
        (repo_id, keys),
    ).rowcount


def replace_rules(conn: psycopg.Connection, path: str, rules: Sequence[tuple], repo_id: int | None) -> int:
    """The permission rules of the settings file `path` become `rules` — (harness, scope,
    settings_path, list, rule) rows: rules of the file not among them are deleted, the others
    upserted; returns rows written."""
    keep = [f"{r[3]}\x1f{r[4]}" for r in rules]
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
            (*r, repo_id),
        ).rowcount
    return written


def delete_user_rules_except(conn: psycopg.Connection, read: list[str]) -> int:
    """Delete the user-level rules of settings files not in `read` (files this run did not read:
    a home gone or moved); returns rows deleted."""
    return conn.execute(
        "DELETE FROM ah.permission_rule WHERE repository_id IS NULL AND NOT (settings_path = ANY (%s))", (read,)
    ).rowcount


def delete_project_rules_except(conn: psycopg.Connection, repo_id: int, read: list[str]) -> int:
    """Delete the rules of the repository's permission files not in `read` (a removed
    `.codex/rules/x.rules`); returns rows deleted."""
    return conn.execute(
        "DELETE FROM ah.permission_rule WHERE repository_id = %s AND NOT (settings_path = ANY (%s))", (repo_id, read)
    ).rowcount
