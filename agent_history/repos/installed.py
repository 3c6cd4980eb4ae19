"""Installed skills and plugins, permission rules, and loop charters/closeouts — read from disk.

Every reader takes directories as arguments (a home laid out like ``~`` reads as laid out) and
returns plain values; a file that cannot be read or parsed is a `Problem` (path, one line), the
rest are read. Nothing here touches the database.

- **Skills** (`skills_in`): a skill is a directory holding ``SKILL.md`` (the open Agent Skills
  layout: YAML front matter with ``name`` and ``description``). Where each harness keeps them
  (`USER_SKILL_DIRS`, `PROJECT_SKILL_DIRS`): Claude Code ``~/.claude/skills`` and a project's
  ``.claude/skills``; Codex ``$CODEX_HOME/skills`` and ``.codex/skills``; pi ``~/.pi/agent/skills``
  and ``.pi/skills`` (each harness's documentation of its skills directory). The name is the
  front matter's ``name`` (else the directory's); the version is the SHA-256 of ``SKILL.md``.
- **Plugins** (`claude_plugins`): Claude Code's ``plugins/installed_plugins.json``. Version 2:
  ``{"version": 2, "plugins": {"<name>@<marketplace>": [{"scope", "installPath", "version",
  "gitCommitSha", "projectPath"?}, …]}}``; version 1 has one object per id instead of a list.
  The source is the marketplace; the version is ``version`` (else ``gitCommitSha``).
- **Permission rules** (`permission_rules`): Claude Code ``settings.json`` (user:
  ``~/.claude/settings.json``; project: ``.claude/settings.json``; local:
  ``.claude/settings.local.json``) ``permissions.allow`` / ``deny`` / ``ask`` lists; Gemini CLI
  ``settings.json`` (``~/.gemini``, project ``.gemini``) ``tools.allowed`` / ``tools.exclude``
  (and the older top-level ``allowedTools`` / ``excludeTools``), stored as allow / deny.
- **Loop files** (`loop_files`): closeouts (``…codex/closeout-<date>-loop<N>.md``, the loop
  rules' `CLOSEOUT_PATH`) and charters (the other ``.md`` files in a closeout's directory, issue
  12's rule) as metadata only: path, SHA-256, first line, mtime, size — never the body.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import yaml

from agent_history.loops import rules

USER_SKILL_DIRS: tuple[tuple[str, str], ...] = (("claude", "skills"), ("codex", "skills"), ("pi", "skills"))
"""(harness, directory under the harness's home) where its user-level skills live."""
PROJECT_SKILL_DIRS: tuple[tuple[str, str], ...] = (
    ("claude", ".claude/skills"),
    ("codex", ".codex/skills"),
    ("pi", ".pi/skills"),
)
"""(harness, directory under a repository) where its project skills live."""
SKILL_FILE = "SKILL.md"
PLUGINS_FILE = "plugins/installed_plugins.json"
"""Claude Code's plugin registry, under its home."""
USER_SETTINGS: tuple[tuple[str, str], ...] = (("claude", "settings.json"), ("gemini", "settings.json"))
"""(harness, file under the harness's home) holding user-level permission rules."""
PROJECT_SETTINGS: tuple[tuple[str, str, str], ...] = (
    ("claude", "project", ".claude/settings.json"),
    ("claude", "local", ".claude/settings.local.json"),
    ("gemini", "project", ".gemini/settings.json"),
)
"""(harness, scope, file under a repository) holding project permission rules."""
RULE_LISTS: dict[str, tuple[tuple[tuple[str, ...], str], ...]] = {
    "claude": ((("permissions", "allow"), "allow"), (("permissions", "deny"), "deny"), (("permissions", "ask"), "ask")),
    "gemini": (
        (("tools", "allowed"), "allow"),
        (("tools", "exclude"), "deny"),
        (("allowedTools",), "allow"),
        (("excludeTools",), "deny"),
    ),
}
"""Per harness: (key path in its settings JSON, list stored as)."""
FIRST_LINE_CHARS = 300


@dataclass(frozen=True, slots=True)
class Problem:
    """A file that could not be read: its path and one line saying why."""

    path: str
    detail: str


@dataclass(frozen=True, slots=True)
class Installed:
    """A skill or plugin: `kind` skill | plugin, `scope` user | project | local, `path` the
    SKILL.md or install path, `source` the marketplace (plugins) or None, `version` the plugin's
    version or the SKILL.md's SHA-256."""

    harness: str
    kind: str
    scope: str
    name: str
    path: str
    source: str | None
    version: str | None
    description: str | None


@dataclass(frozen=True, slots=True)
class Rule:
    """One permission rule: which settings file, its scope, the list (allow | deny | ask), the rule."""

    harness: str
    scope: str
    settings_path: str
    list: str
    rule: str


@dataclass(frozen=True, slots=True)
class LoopFile:
    """A closeout or charter as metadata: `rel` relative to the repository, SHA-256 (hex) of its
    bytes, its first line (at most `FIRST_LINE_CHARS`), mtime (UTC), size in bytes."""

    kind: str
    rel: str
    sha256: str
    first_line: str
    mtime: datetime
    size_bytes: int


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _front_matter(text: str) -> dict:
    """The YAML front matter of a SKILL.md (``---`` … ``---``); {} when there is none. Raises
    ValueError for front matter that is not a YAML mapping."""
    if not text.startswith("---"):
        return {}
    end = text.find("\n---", 3)
    if end < 0:
        raise ValueError("front matter has no closing ---")
    try:
        data = yaml.safe_load(text[3:end])
    except yaml.YAMLError as exc:
        raise ValueError(f"front matter is not YAML: {str(exc).splitlines()[0]}") from exc
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ValueError("front matter is not a mapping")
    return data


def skills_in(directory: Path, harness: str, scope: str) -> tuple[list[Installed], list[Problem]]:
    """Skills in `directory` (each ``<dir>/<skill>/SKILL.md``), sorted by path."""
    found: list[Installed] = []
    problems: list[Problem] = []
    if not directory.is_dir():
        return found, problems
    for skill_md in sorted(directory.glob(f"*/{SKILL_FILE}")):
        try:
            data = skill_md.read_bytes()
            meta = _front_matter(data.decode("utf-8", "replace"))
        except (OSError, ValueError) as exc:
            problems.append(Problem(str(skill_md), str(exc).splitlines()[0] if str(exc) else type(exc).__name__))
            continue
        name = meta.get("name") if isinstance(meta.get("name"), str) else skill_md.parent.name
        desc = meta.get("description") if isinstance(meta.get("description"), str) else None
        found.append(Installed(harness, "skill", scope, name, str(skill_md), None, _sha256(data), desc))
    return found, problems


def claude_plugins(home: Path) -> tuple[list[Installed], list[Problem]]:
    """Plugins in Claude Code's ``installed_plugins.json`` under `home` (v1 or v2)."""
    path = home / PLUGINS_FILE
    if not path.is_file():
        return [], []
    try:
        data = json.loads(path.read_bytes())
        plugins = data["plugins"]
        if not isinstance(plugins, dict):
            raise TypeError("plugins is not an object")
    except (OSError, ValueError, KeyError, TypeError) as exc:
        return [], [Problem(str(path), f"not an installed_plugins.json: {exc}".splitlines()[0])]
    found = []
    for plugin_id, entries in sorted(plugins.items()):
        name, _, marketplace = plugin_id.partition("@")
        for e in entries if isinstance(entries, list) else [entries]:
            if not isinstance(e, dict):
                continue
            version = e.get("version") if isinstance(e.get("version"), str) else e.get("gitCommitSha")
            scope = e.get("scope") if isinstance(e.get("scope"), str) else "user"
            found.append(
                Installed(
                    "claude", "plugin", scope, name, str(e.get("installPath") or path), marketplace or None,
                    version if isinstance(version, str) else None, None,
                )
            )  # fmt: skip
    return found, []


def _at(data: object, keys: tuple[str, ...]) -> object:
    for k in keys:
        if not isinstance(data, dict):
            return None
        data = data.get(k)
    return data


def permission_rules(path: Path, harness: str, scope: str) -> tuple[list[Rule], list[Problem]]:
    """Allow/deny/ask rules of one settings file (`RULE_LISTS` of `harness`); ([], []) when the
    file does not exist."""
    if not path.is_file():
        return [], []
    try:
        data = json.loads(path.read_bytes())
    except (OSError, ValueError) as exc:
        return [], [Problem(str(path), f"settings file is not JSON: {exc}".splitlines()[0])]
    out: list[Rule] = []
    for keys, kind in RULE_LISTS.get(harness, ()):
        values = _at(data, keys)
        if isinstance(values, list):
            out.extend(Rule(harness, scope, str(path), kind, v) for v in values if isinstance(v, str) and v.strip())
    return list(dict.fromkeys(out)), []


def _first_line(data: bytes) -> str:
    line = data.split(b"\n", 1)[0].decode("utf-8", "replace").removesuffix("\r")
    return line[:FIRST_LINE_CHARS]


def loop_files(repo: Path, rels: list[str]) -> list[LoopFile]:
    """Closeouts among `rels` (paths relative to `repo`) and the charters beside them (other
    ``.md`` files in a closeout's directory that are not closeouts), as metadata; files that
    vanish while read are left out."""
    closeouts = sorted({r for r in rels if rules.CLOSEOUT_PATH.fullmatch(r)})
    directories = {str(Path(r).parent) for r in closeouts}
    charters = sorted(
        {r for r in rels if r.endswith(".md") and r not in closeouts and str(Path(r).parent) in directories}
    )
    out = []
    for kind, group in (("closeout", closeouts), ("charter", charters)):
        for rel in group:
            try:
                data = (repo / rel).read_bytes()
                mtime = datetime.fromtimestamp((repo / rel).stat().st_mtime, UTC)
            except OSError:
                continue
            out.append(LoopFile(kind, rel, _sha256(data), _first_line(data), mtime, len(data)))
    return out
