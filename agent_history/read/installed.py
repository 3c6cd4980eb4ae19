"""`skills` and `permissions` (issue 30): what `collect` read of the harnesses' configuration.

- `list_skills`: installed skills and plugins (``ah.installed_skill``) with the sessions that
  used them (view ``ah.skill_use``: Claude Code ``Skill`` tool calls naming them, reads of their
  SKILL.md, a Codex ``<skill>`` injection naming its path), most used first.
- `invoked_skills`: which sessions used which installed skill or plugin (the same view), one
  row per (skill, session), for `skills --sessions`.
- `permission_view`: the allow / deny / ask rules of the settings files (``ah.permission_rule``)
  beside the denials transcripts record (tool calls classified ``denied``, per agent and tool).
  A rule of a ``json`` settings file (the harness row's `PermissionFile` whose path matches)
  names a tool before its parenthesis (Claude Code's ``Bash(npm run test:*)`` → ``Bash``) and
  shows the denials of that tool in the harness's own transcripts; a Codex execpolicy rule names
  a command prefix, not a tool: its tool and denials are None (unknown, not zero).
- `loop_files`: loop charters and closeouts (``ah.loop_run_metadata``): metadata, never a body.

Every function returns [] on a catalogue before migration 0022. Curated-out sessions never count.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import PurePath

import psycopg

from agent_history.harnesses import BY_NAME
from agent_history.session.exclusions import not_excluded

SESSIONS_PER_SKILL = 20
"""Session uids listed per skill (the count is whole)."""


def _has(conn: psycopg.Connection, table: str) -> bool:
    return conn.execute("SELECT to_regclass(%s)", (f"ah.{table}",)).fetchone()[0] is not None


def collected_repositories(conn: psycopg.Connection) -> int | None:
    """Repositories `collect` holds (not gone), or None when `collect` never ran (no
    ``ah.collect_run`` row): the difference between "nothing collected" and "collected, none found"."""
    if not _has(conn, "collect_run") or conn.execute("SELECT NOT EXISTS (SELECT 1 FROM ah.collect_run)").fetchone()[0]:
        return None
    return conn.execute("SELECT count(*) FROM ah.repository WHERE NOT gone").fetchone()[0]


@dataclass(slots=True)
class SkillRow:
    """An installed skill or plugin and its use: sessions (count) and the newest uids."""

    harness: str
    kind: str
    scope: str
    name: str
    source: str | None
    version: str | None
    path: str
    repository: str | None
    gone: bool
    sessions: int
    uses: int
    last_used_at: datetime | None
    session_uids: list[str] = field(default_factory=list)

    def as_dict(self) -> dict:
        return asdict(self)


def list_skills(conn: psycopg.Connection, *, harness: str | None = None, include_gone: bool = False) -> list[SkillRow]:
    """Installed skills and plugins (gone ones only with `include_gone`), most used first, then
    by harness, kind and name."""
    if not _has(conn, "installed_skill"):
        return []
    rows = conn.execute(
        f"""
        SELECT k.harness, k.kind, k.scope, k.name, k.source, k.version, k.path, r.name, k.gone,
               count(u.session_id) FILTER (WHERE s.id IS NOT NULL), coalesce(sum(u.uses) FILTER (WHERE s.id IS NOT NULL), 0),
               max(u.last_used_at) FILTER (WHERE s.id IS NOT NULL),
               (array_agg(s.session_uid ORDER BY u.last_used_at DESC NULLS LAST) FILTER (WHERE s.id IS NOT NULL))
                   [1:{SESSIONS_PER_SKILL}]
        FROM ah.installed_skill AS k
        LEFT JOIN ah.repository AS r ON r.id = k.repository_id
        LEFT JOIN ah.skill_use AS u ON u.skill_id = k.id
        LEFT JOIN ah.session AS s ON s.id = u.session_id AND {not_excluded("s")}
        WHERE (%(harness)s::text IS NULL OR k.harness = %(harness)s) AND (%(gone)s OR NOT k.gone)
        GROUP BY k.id, r.name
        ORDER BY 10 DESC, k.harness, k.kind, k.name, k.path
        """,
        {"harness": harness, "gone": include_gone},
    ).fetchall()
    return [SkillRow(*r[:12], session_uids=list(r[12] or [])) for r in rows]


@dataclass(slots=True)
class InvocationRow:
    """One session's use of an installed skill or plugin (`harness`, `kind`, `name`, `path` name
    the skill): the session, its agent and title, uses (tool calls, SKILL.md reads, injections)
    and the first and last of them (UTC; None when the events carry no time)."""

    harness: str
    kind: str
    name: str
    path: str
    session_uid: str
    agent: str
    title: str | None
    uses: int
    first_used_at: datetime | None
    last_used_at: datetime | None

    def as_dict(self) -> dict:
        return asdict(self)


def invoked_skills(
    conn: psycopg.Connection, *, harness: str | None = None, include_gone: bool = False
) -> list[InvocationRow]:
    """Every (installed skill or plugin, session that used it) pair, for the skills `list_skills`
    lists with the same filters; by harness, kind, name, path, then the newest use first."""
    if not _has(conn, "installed_skill"):
        return []
    rows = conn.execute(
        f"""
        SELECT k.harness, k.kind, k.name, k.path, s.session_uid, s.agent, s.title, u.uses::int,
               u.first_used_at, u.last_used_at
        FROM ah.installed_skill AS k
        JOIN ah.skill_use AS u ON u.skill_id = k.id
        JOIN ah.session AS s ON s.id = u.session_id AND {not_excluded("s")}
        WHERE (%(harness)s::text IS NULL OR k.harness = %(harness)s) AND (%(gone)s OR NOT k.gone)
        ORDER BY k.harness, k.kind, k.name, k.path, u.last_used_at DESC NULLS LAST, s.session_uid
        """,
        {"harness": harness, "gone": include_gone},
    ).fetchall()
    return [InvocationRow(*r) for r in rows]


@dataclass(slots=True)
class RuleRow:
    """One permission rule, with the denials the harness's transcripts record for its tool (0:
    none; None with `tool` None: the rule names no tool)."""

    harness: str
    scope: str
    settings_path: str
    list: str
    rule: str
    tool: str | None
    denials: int | None

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass(slots=True)
class DenialRow:
    """Tool calls a harness recorded as denied (error class ``denied``), per agent and tool."""

    agent: str
    tool: str | None
    denials: int
    sessions: int
    last_at: datetime | None

    def as_dict(self) -> dict:
        return asdict(self)


def _names_tool(harness: str, settings_path: str) -> bool:
    """Whether the rules of `settings_path` name a tool: the harness row's permission file
    matching it (its path from the right, ``*`` within a directory) is a ``json`` one."""
    row = BY_NAME.get(harness)
    specs = row.installed.permissions if row is not None and row.installed is not None else ()
    path = PurePath(settings_path)
    return any(s.fmt == "json" for s in specs if path.match(s.path))


def permission_view(conn: psycopg.Connection) -> tuple[list[RuleRow], list[DenialRow]]:
    """(rules, denials): rules by harness, scope, list, rule; denials most first."""
    denials = [
        DenialRow(*r)
        for r in conn.execute(
            f"""
            SELECT t.agent, t.name, count(*), count(DISTINCT t.session_id), max(t.started_at)
            FROM ah.tool_call AS t JOIN ah.session AS s ON s.id = t.session_id
            WHERE t.error_class = 'denied' AND {not_excluded("s")}
            GROUP BY t.agent, t.name ORDER BY 3 DESC, 1, 2
            """
        ).fetchall()
    ]
    if not _has(conn, "permission_rule"):
        return [], denials
    by_tool = {(d.agent, d.tool): d.denials for d in denials}
    rules = []
    for harness, scope, path, kind, rule in conn.execute(
        "SELECT harness, scope, settings_path, list, rule FROM ah.permission_rule "
        "ORDER BY harness, scope, settings_path, list, rule"
    ).fetchall():
        if _names_tool(harness, path):
            tool = rule.split("(", 1)[0].strip()
            rules.append(RuleRow(harness, scope, path, kind, rule, tool, by_tool.get((harness, tool), 0)))
        else:
            rules.append(RuleRow(harness, scope, path, kind, rule, None, None))
    return rules, denials


@dataclass(slots=True)
class LoopFileRow:
    """A loop charter or closeout as collected: repository, relative path, SHA-256, first line,
    mtime, size in bytes; `gone` when no longer in the work tree."""

    repository: str
    kind: str
    path: str
    sha256: str
    first_line: str
    mtime: datetime
    size_bytes: int
    gone: bool

    def as_dict(self) -> dict:
        return asdict(self)


def loop_files(conn: psycopg.Connection) -> list[LoopFileRow]:
    """Every collected charter and closeout, by repository and path."""
    if not _has(conn, "loop_run_metadata"):
        return []
    rows = conn.execute(
        "SELECT r.path, m.kind, m.path, m.sha256, m.first_line, m.mtime, m.size_bytes, m.gone "
        "FROM ah.loop_run_metadata AS m JOIN ah.repository AS r ON r.id = m.repository_id ORDER BY r.path, m.path"
    ).fetchall()
    return [LoopFileRow(*r) for r in rows]
