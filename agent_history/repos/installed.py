"""Installed skills and plugins, permission rules, and loop charters/closeouts — read from disk.

Every reader takes directories as arguments (a home laid out like ``~`` reads as laid out) and
returns plain values; a file that cannot be read or parsed is a `Problem` (path, one line), the
rest are read. Nothing here touches the database.

Where each harness keeps them is its registry row's `installed` (`harnesses.spec.InstalledPlaces`);
this module holds the readers the rows name.

- **Skills** (`skills_in`): a skill is a directory holding ``SKILL.md`` (the open Agent Skills
  layout: YAML front matter with ``name`` and ``description``). The name is the front matter's
  ``name`` (else the directory's); the version is its ``version`` (else ``metadata.version``,
  the Agent Skills spec's place for it), else the SHA-256 of ``SKILL.md``.
- **Plugins** (`PLUGIN_READERS`): Claude Code's ``plugins/installed_plugins.json``. Version 2:
  ``{"version": 2, "plugins": {"<name>@<marketplace>": [{"scope", "installPath", "version",
  "gitCommitSha", "projectPath"?}, …]}}``; version 1 has one object per id instead of a list.
  The source is the marketplace; the version is ``version`` (else ``gitCommitSha``).
- **Permission rules** (`RULE_READERS`): ``json`` settings files (Claude Code, Gemini CLI), the
  lists their row names (`PermissionFile.lists`); Codex ``execpolicy`` ``.rules`` files:
  Starlark ``prefix_rule(pattern = [tokens, [alternatives]], decision = "allow" | "prompt" |
  "forbidden", justification?, match?, not_match?)`` calls (decision defaults to allow; stored as
  allow / ask / deny; the rule is the pattern as a command prefix, alternatives in braces:
  ``git {push,fetch}``); ``host_executable(…)`` declares no rule and is skipped. Read with
  Python's `ast` (these files are the Python-compatible subset of Starlark) — a file Codex could
  not load (not that syntax, another call, a pattern or decision of the wrong shape) is one
  `Problem`, as Codex rejects the whole policy. Source: developers.openai.com/codex ("Rules"),
  openai/codex ``codex-rs/execpolicy/README.md``.
- **Loop files** (`loop_files`): closeouts (``…codex/closeout-<date>-loop<N>.md``, the loop
  rules' `CLOSEOUT_PATH`) and charters (the other ``.md`` files in a closeout's directory, issue
  12's rule) as metadata only: path, SHA-256, first line, mtime, size — never the body.
"""

from __future__ import annotations

import ast
import hashlib
import json
import shlex
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import yaml

from agent_history.loops import rules

SKILL_FILE = "SKILL.md"
FIRST_LINE_CHARS = 300
ListKeys = tuple[tuple[tuple[str, ...], str], ...]
"""(key path in a JSON settings file, list stored as) — `harnesses.spec.PermissionFile.lists`."""


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


def _skill_version(meta: dict, data: bytes) -> str:
    """The front matter's ``version`` (else ``metadata.version``) as text, else the SHA-256 (hex)
    of the SKILL.md bytes."""
    for value in (meta.get("version"), _at(meta.get("metadata"), ("version",))):
        if isinstance(value, (str, int, float)) and not isinstance(value, bool) and str(value).strip():
            return str(value).strip()
    return _sha256(data)


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
        found.append(Installed(harness, "skill", scope, name, str(skill_md), None, _skill_version(meta, data), desc))
    return found, problems


def claude_plugins(path: Path, harness: str) -> tuple[list[Installed], list[Problem]]:
    """Plugins in a Claude Code ``installed_plugins.json`` at `path` (v1 or v2); ([], []) when
    the file does not exist."""
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
                    harness, "plugin", scope, name, str(e.get("installPath") or path), marketplace or None,
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


def json_rules(path: Path, harness: str, scope: str, lists: ListKeys) -> tuple[list[Rule], list[Problem]]:
    """Rules in the `lists` of one JSON settings file; ([], []) when the file does not exist."""
    if not path.is_file():
        return [], []
    try:
        data = json.loads(path.read_bytes())
    except (OSError, ValueError) as exc:
        return [], [Problem(str(path), f"settings file is not JSON: {exc}".splitlines()[0])]
    out: list[Rule] = []
    for keys, kind in lists:
        values = _at(data, keys)
        if isinstance(values, list):
            out.extend(Rule(harness, scope, str(path), kind, v) for v in values if isinstance(v, str) and v.strip())
    return list(dict.fromkeys(out)), []


EXECPOLICY_DECISIONS: dict[str, str] = {"allow": "allow", "prompt": "ask", "forbidden": "deny"}
"""Codex execpolicy decision → the list a rule is stored in (``decision`` defaults to allow)."""
EXECPOLICY_SKIPPED: frozenset[str] = frozenset({"host_executable"})
"""Execpolicy calls that declare no permission rule (where a program lives)."""


def _token(part: object) -> str:
    """One pattern element as command text: a token (shell-quoted), or alternatives in braces.
    Raises ValueError for anything else."""
    if isinstance(part, str) and part:
        return shlex.quote(part)
    if isinstance(part, list) and part and all(isinstance(p, str) and p for p in part):
        return "{" + ",".join(shlex.quote(p) for p in part) + "}"
    raise ValueError(f"a pattern element must be a token or a list of tokens, not {part!r}")


def _prefix_rule(call: ast.Call) -> tuple[str, str]:
    """(list, rule) of one ``prefix_rule(…)`` call. Raises ValueError naming what is wrong."""
    if call.args:
        raise ValueError("prefix_rule takes keyword arguments only")
    try:
        args = {k.arg: ast.literal_eval(k.value) for k in call.keywords}
    except (ValueError, TypeError, SyntaxError) as exc:
        raise ValueError(f"prefix_rule argument is not a literal: {exc}") from exc
    pattern, decision = args.get("pattern"), args.get("decision", "allow")
    if not isinstance(pattern, list) or not pattern:
        raise ValueError("prefix_rule has no pattern list")
    if decision not in EXECPOLICY_DECISIONS:
        raise ValueError(f"decision {decision!r} is not allow, prompt or forbidden")
    return EXECPOLICY_DECISIONS[decision], " ".join(_token(p) for p in pattern)


def execpolicy_rules(path: Path, harness: str, scope: str, lists: ListKeys = ()) -> tuple[list[Rule], list[Problem]]:
    """Rules of one Codex execpolicy ``.rules`` file (see the module docstring; `lists` unused);
    ([], []) when the file does not exist."""
    if not path.is_file():
        return [], []
    try:
        tree = ast.parse(path.read_bytes(), filename=str(path))
        out: list[Rule] = []
        for node in tree.body:
            call = node.value if isinstance(node, ast.Expr) else None
            name = call.func.id if isinstance(call, ast.Call) and isinstance(call.func, ast.Name) else None
            if name in EXECPOLICY_SKIPPED:
                continue
            if name != "prefix_rule":
                raise ValueError(f"line {node.lineno}: not a prefix_rule(…) call")
            kind, rule = _prefix_rule(call)  # type: ignore[arg-type]
            out.append(Rule(harness, scope, str(path), kind, rule))
    except (OSError, SyntaxError, ValueError) as exc:
        detail = f"line {exc.lineno}: {exc.msg}" if isinstance(exc, SyntaxError) else str(exc)
        return [], [Problem(str(path), f"not a Codex rules file: {detail}".splitlines()[0])]
    return list(dict.fromkeys(out)), []


RULE_READERS: dict[str, Callable[[Path, str, str, ListKeys], tuple[list[Rule], list[Problem]]]] = {
    "json": json_rules,
    "execpolicy": execpolicy_rules,
}
"""`harnesses.spec.RULE_FORMATS` value → reader (path, harness, scope, lists)."""

PLUGIN_READERS: dict[str, Callable[[Path, str], tuple[list[Installed], list[Problem]]]] = {
    "claude-installed-plugins": claude_plugins,
}
"""`harnesses.spec.PLUGIN_FORMATS` value → reader (path, harness)."""


def permission_files(base: Path, rel: str) -> list[Path]:
    """The files a `PermissionFile` path `rel` names under `base`: itself, or the matches of its
    ``*`` (sorted)."""
    return sorted(base.glob(rel)) if "*" in rel else [base / rel]


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
