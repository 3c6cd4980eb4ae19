"""Discovery: namespaces → agent homes → transcript files (DESIGN §4, issue #4).

Layout per harness (relative to the agent home):
- claude: ``projects/<project>/<session>.jsonl`` (main), ``projects/<project>/agent-<id>.jsonl``
  (older sub-agents) and ``projects/<project>/<session>/subagents/**/agent-*.jsonl`` (newer).
- codex: ``sessions/YYYY/MM/DD/rollout-*.jsonl`` and ``archived_sessions/**/*.jsonl``.
- pi: ``sessions/<cwd-slug>/*.jsonl``.

Main files are yielded before sub-agent files so parents exist first. Symlinks and dot-dirs
below the home are skipped (a home may itself be a dot-dir such as ``~/.claude``). A namespace
is ``<agent>-<profile>``; its agent is the part before the first ``-``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

_AGENT_PREFIX = {"claude": "claude", "codex": "codex", "pi": "pi"}
_ROOTS = {"claude": ("projects",), "codex": ("sessions", "archived_sessions"), "pi": ("sessions",)}


@dataclass(frozen=True, slots=True)
class Source:
    """One agent home to index: namespace, harness, path, tier (hot | cold)."""

    namespace: str
    agent: str
    home: Path
    tier: str = "hot"
    shadowed_by: tuple[Path, ...] = ()
    """Homes whose copy wins: a file is skipped when its relative path exists in one of them
    (a cold archive shadowed by the hot home during `rebuild`)."""


@dataclass(frozen=True, slots=True)
class FileRef:
    """A discovered transcript file."""

    path: str
    rel_path: str
    role: str  # main | subagent
    source: Source


def agent_of_namespace(namespace: str) -> str:
    """The harness of a namespace (`claude-work` → `claude`). Raises ValueError if unknown."""
    prefix = namespace.split("-", 1)[0]
    if prefix not in _AGENT_PREFIX:
        raise ValueError(f"namespace {namespace!r} must start with claude-, codex- or pi-")
    return _AGENT_PREFIX[prefix]


def home_layout(home: Path) -> dict[str, Path]:
    """Namespaces for a directory laid out like ``~`` (``--home DIR``)."""
    return {
        "claude-local": home / ".claude",
        "codex-local": home / ".codex",
        "pi-local": home / ".pi" / "agent",
    }


def _walk(root: Path, skipped: list[str] | None) -> Iterator[os.DirEntry]:
    """Yield regular ``*.jsonl`` files under `root`, sorted; symlinks and dot-dirs are skipped.

    What is passed over for a reason a user may not expect (a symlink, a directory that cannot
    be read, a name that is not valid UTF-8) is appended to `skipped` as one line each.
    """
    try:
        entries = sorted(os.scandir(root), key=lambda e: e.name)
    except (FileNotFoundError, NotADirectoryError):
        return
    except PermissionError:
        if skipped is not None:
            skipped.append(f"{root}: directory cannot be read")
        return
    dirs = []
    for entry in entries:
        if entry.name.startswith("."):
            continue
        if entry.is_symlink():
            if skipped is not None and (entry.name.endswith(".jsonl") or entry.is_dir()):
                skipped.append(f"{entry.path}: symlink (not followed)")
            continue
        try:
            entry.path.encode("utf-8")
        except UnicodeEncodeError:
            if skipped is not None:
                skipped.append(f"{entry.path.encode('utf-8', 'backslashreplace').decode()}: name is not valid UTF-8")
            continue
        if entry.is_dir(follow_symlinks=False):
            dirs.append(entry)
        elif entry.name.endswith(".jsonl") and entry.is_file(follow_symlinks=False):
            yield entry
    for d in dirs:
        yield from _walk(Path(d.path), skipped)


def _role(agent: str, rel: str) -> str:
    if agent == "claude":
        name = rel.rsplit("/", 1)[-1]
        if "/subagents/" in f"/{rel}" or name.startswith("agent-"):
            return "subagent"
    return "main"


def iter_files(source: Source, skipped: list[str] | None = None) -> Iterator[FileRef]:
    """Every transcript file of `source`, main files first, then sub-agent files.

    Paths passed over (symlinks, unreadable directories, undecodable names) go to `skipped`.
    """
    later: list[FileRef] = []
    for top in _ROOTS[source.agent]:
        for entry in _walk(source.home / top, skipped):
            rel = os.path.relpath(entry.path, source.home).replace(os.sep, "/")
            if any((h / rel).is_file() for h in source.shadowed_by):
                continue
            ref = FileRef(entry.path, rel, _role(source.agent, rel), source)
            if ref.role == "subagent":
                later.append(ref)
            else:
                yield ref
    yield from later


def file_ref(sources: list[Source], path: Path) -> FileRef | None:
    """The FileRef `iter_files` would yield for the transcript at `path` (e.g. named by an
    after-turn hook), or None when no source discovers it: not a regular ``*.jsonl`` file under a
    source's transcript roots, a symlink or dot-directory on the way, or shadowed by a hot copy."""
    target = Path(os.path.abspath(path))
    if target.suffix != ".jsonl" or target.is_symlink() or not target.is_file():
        return None
    for source in sources:
        home = Path(os.path.abspath(source.home))
        for top in _ROOTS.get(source.agent, ()):
            try:
                rel_top = target.relative_to(home / top)
            except ValueError:
                continue
            if any(part.startswith(".") for part in rel_top.parts):
                continue
            rel = (Path(top) / rel_top).as_posix()
            if any((h / rel).is_file() for h in source.shadowed_by):
                continue
            return FileRef(str(source.home / rel), rel, _role(source.agent, rel), source)
    return None
