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

import fnmatch
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from agent_history.config import vscode_user_dir

_AGENT_PREFIX = {"claude": "claude", "codex": "codex", "pi": "pi"}
_ROOTS = {"claude": ("projects",), "codex": ("sessions", "archived_sessions"), "pi": ("sessions",)}

# issue 16, part 1 (h-src): harnesses whose sources are not (only) append-only JSONL. Per agent:
# (root below the home, path pattern relative to the home, source kind), first match wins.
# Sources: FORMATS.md §4 (Gemini), §5 (OpenCode), §8 (claude.ai). Files under one root are
# yielded in this order (OpenCode: sessions, then messages, then parts).
_AGENT_PREFIX.update({"gemini": "gemini", "opencode": "opencode", "claude-ai": "claude-ai"})
KIND_RULES: dict[str, tuple[tuple[str, str, str], ...]] = {
    # ~/.gemini/tmp/<project hash>/chats/session-*.json (≤ 0.39) and .jsonl (0.40+)
    "gemini": (
        ("tmp", r"tmp/[^/]+/chats/[^/]+\.jsonl", "jsonl"),
        ("tmp", r"tmp/[^/]+/chats/[^/]+\.json", "document"),
    ),
    # ~/.local/share/opencode/opencode.db (≥ 1.2) and the older storage/ tree
    "opencode": (
        ("", r"opencode\.db", "database"),
        ("storage/session", r"storage/session/.+\.json", "document"),
        ("storage/message", r"storage/message/.+\.json", "document"),
        ("storage/part", r"storage/part/.+\.json", "document"),
    ),
    # an unzipped data export: its conversations.json (not users.json / projects.json beside it);
    # a source may also name the file itself (`index --claude-export FILE`, any name)
    "claude-ai": (("", r"conversations\.json", "document"),),
}


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
    memory_root: bool = False
    """A configured ``[memories]`` root: every Markdown file under it is a memory of the
    namespace's agent, and it holds no transcripts (issue 16)."""


@dataclass(frozen=True, slots=True)
class FileRef:
    """A discovered transcript file."""

    path: str
    rel_path: str
    role: str  # main | subagent
    source: Source
    kind: str = "jsonl"
    """How the loader reads it: jsonl | document | database (DESIGN §7 source kinds)."""
    doc_kind: str | None = None
    """For a document read by a parser other than its agent's own: the `parsers.DOCUMENT_MODULES`
    key, or ``memory`` (`parsers.document_parser_class`)."""


def agent_of_namespace(namespace: str) -> str:
    """The harness of a namespace (`claude-work` → `claude`, `claude-ai-export` → `claude-ai`):
    the longest known agent name followed by ``-``. Raises ValueError if unknown."""
    for prefix in sorted(_AGENT_PREFIX, key=len, reverse=True):
        if namespace.startswith(prefix + "-"):
            return _AGENT_PREFIX[prefix]
    names = ", ".join(f"{p}-" for p in sorted(_AGENT_PREFIX))
    raise ValueError(f"namespace {namespace!r} must start with one of {names}")


def home_layout(home: Path) -> dict[str, Path]:
    """Namespaces for a directory laid out like ``~`` (``--home DIR``)."""
    return {
        "claude-local": home / ".claude",
        "codex-local": home / ".codex",
        "pi-local": home / ".pi" / "agent",
        # issue 16, part 1 (h-src)
        "gemini-local": home / ".gemini",
        "opencode-local": home / ".local" / "share" / "opencode",
        **_home_layout_16(home),
    }


def _walk(root: Path, skipped: list[str] | None, suffixes: tuple[str, ...] = (".jsonl",)) -> Iterator[os.DirEntry]:
    """Yield regular files ending in `suffixes` under `root`, sorted; symlinks and dot-dirs are skipped.

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
            if skipped is not None and (entry.name.endswith(suffixes) or entry.is_dir()):
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
        elif entry.name.endswith(suffixes) and entry.is_file(follow_symlinks=False):
            yield entry
    for d in dirs:
        yield from _walk(Path(d.path), skipped, suffixes)


def _role(agent: str, rel: str) -> str:
    if agent == "claude":
        name = rel.rsplit("/", 1)[-1]
        if "/subagents/" in f"/{rel}" or name.startswith("agent-"):
            return "subagent"
    if agent == "cursor" and "/subagents/" in f"/{rel}":
        return "subagent"
    return "main"


def iter_files(source: Source, skipped: list[str] | None = None) -> Iterator[FileRef]:
    """Every transcript file of `source`, main files first, then sub-agent files.

    Paths passed over (symlinks, unreadable directories, undecodable names) go to `skipped`.
    """
    if source.agent in KIND_RULES:
        yield from _iter_kind_files(source, skipped)
        return
    if not source.memory_root:  # a `[memories]` root holds documents only
        yield from _iter_jsonl_files(source, skipped)
    yield from _iter_documents(source, skipped)


def _iter_jsonl_files(source: Source, skipped: list[str] | None) -> Iterator[FileRef]:
    """The append-only JSONL transcripts of `source` (`_ROOTS`, `JSONL_RULES`), main files first."""
    later: list[FileRef] = []
    for top in _ROOTS[source.agent]:
        for entry in _walk(source.home / top, skipped):
            rel = os.path.relpath(entry.path, source.home).replace(os.sep, "/")
            rule = JSONL_RULES.get(source.agent)
            if rule is not None and not rule.match(rel):
                continue
            if any((h / rel).is_file() for h in source.shadowed_by):
                continue
            ref = FileRef(entry.path, rel, _role(source.agent, rel), source)
            if ref.role == "subagent":
                later.append(ref)
            else:
                yield ref
    yield from later


def _iter_kind_files(source: Source, skipped: list[str] | None) -> Iterator[FileRef]:
    """Files of a harness in `KIND_RULES`, each with its source kind. A source whose home is a
    file (``--claude-export FILE``) is that one file, as a document."""
    if source.home.is_file():
        yield FileRef(str(source.home), source.home.name, "main", source, "document")
        return
    seen: set[str] = set()
    for top, pattern, kind in KIND_RULES[source.agent]:
        rx = re.compile(pattern)
        root = source.home / top if top else source.home
        entries = _walk(root, skipped, (".json", ".jsonl", ".db")) if top else _top_files(root)
        for entry in entries:
            rel = os.path.relpath(entry.path, source.home).replace(os.sep, "/")
            if rel in seen or not rx.fullmatch(rel):
                continue
            if any((h / rel).is_file() for h in source.shadowed_by):
                continue
            seen.add(rel)
            yield FileRef(entry.path, rel, "main", source, kind)


def _top_files(root: Path) -> Iterator[os.DirEntry]:
    """Regular files directly in `root` (no recursion), sorted."""
    try:
        entries = sorted(os.scandir(root), key=lambda e: e.name)
    except OSError:
        return
    for entry in entries:
        if not entry.name.startswith(".") and entry.is_file(follow_symlinks=False):
            yield entry


# -- issue 16: Cursor, GitHub Copilot CLI, VS Code Copilot Chat (JSONL transcripts) ---------------
# Layouts (relative to the agent home), from FORMATS §6–§7 and the harnesses' docs:
# - cursor (`~/.cursor`): ``projects/<project>/agent-transcripts/**/*.jsonl``; a file under a
#   ``subagents/`` directory is a sub-agent thread.
# - copilot (`$COPILOT_HOME` or `~/.copilot`, docs.github.com "Copilot CLI configuration
#   directory"): ``session-state/<id>/events.jsonl`` (older CLIs: ``session-state/<id>.jsonl``).
# - copilot-vscode (VS Code's user dir): the "copilot-agent" event log, ``events.jsonl`` under
#   the Copilot Chat extension's storage (location unconfirmed: the only sample is hand-written).
_AGENT_PREFIX.update({"cursor": "cursor", "copilot": "copilot", "copilot-vscode": "copilot-vscode"})
_ROOTS.update(
    {
        "cursor": ("projects",),
        "copilot": ("session-state",),
        "copilot-vscode": ("workspaceStorage", "globalStorage"),
    }
)
JSONL_RULES: dict[str, re.Pattern[str]] = {
    "cursor": re.compile(r"^projects/[^/]+/agent-transcripts/.+\.jsonl$"),
    "copilot": re.compile(r"^session-state/[^/]+(/events)?\.jsonl$"),
    "copilot-vscode": re.compile(
        r"^(workspaceStorage/[^/]+/GitHub\.copilot-chat|globalStorage/github\.copilot-chat)/(.+/)?events\.jsonl$"
        # the extension's own transcript, the file VS Code's hook payload names as transcript_path
        # (microsoft/vscode-copilot-chat#3545; the same event vocabulary)
        r"|^workspaceStorage/[^/]+/GitHub\.copilot-chat/transcripts/[^/]+\.jsonl$"
    ),
}
"""Which ``*.jsonl`` files under an agent's roots are transcripts (a path relative to the home)."""


def _home_layout_16(home: Path) -> dict[str, Path]:
    """The issue-16 namespaces of a directory laid out like ``~``."""
    return {
        "cursor-local": home / ".cursor",
        "copilot-local": home / ".copilot",
        "copilot-vscode-local": vscode_user_dir(home, env={}),
    }


# -- issue 16: whole-document sources (kind="document") --------------------------------------------
# Files the harness rewrites in place, parsed whole by a `parsers.base.DocumentParser` (the
# loader re-reads one when its size, mtime or content changes). Rules as data, by agent:
# - codex: Markdown memories ``memories/**.md`` (issue 16);
# - claude: Markdown memories in each project's ``memory/`` directory, ``projects/<p>/memory/**.md``
#   (Claude Code auto memory: ``MEMORY.md`` index + topic files);
# - copilot: legacy session documents ``history-session-state/<id>.json`` (Copilot CLI before
#   ``session-state/``; FORMATS §7);
# - copilot-vscode: ``workspaceStorage/<hash>/chatSessions/<id>.json`` and
#   ``globalStorage/emptyWindowChatSessions/<id>.json`` (FORMATS §7).
# Instruction files (AGENTS.md, CLAUDE.md, rules/ …) are never memories
# (`parsers.memory.parser.is_instruction_file`).


@dataclass(frozen=True, slots=True)
class DocumentRule:
    """Which files under an agent home are whole documents, and of which kind."""

    agent: str
    doc_kind: str
    """The document parser (`parsers.DOCUMENT_MODULES` key, or ``memory``)."""
    pattern: re.Pattern[str]
    """Matched against the path relative to the home (``/``-separated)."""
    roots: tuple[str, ...] = ("",)
    """Directory globs (relative to the home) walked for it, so a big home is not walked whole."""
    kind: str = "document"
    """The loader source kind (`document`, as opposed to append-only JSONL)."""


DOCUMENT_RULES: tuple[DocumentRule, ...] = (
    DocumentRule("codex", "memory", re.compile(r"^memories/(.+/)?[^/]+\.md$"), ("memories",)),
    DocumentRule("claude", "memory", re.compile(r"^projects/[^/]+/memory/(.+/)?[^/]+\.md$"), ("projects/*/memory",)),
    DocumentRule(
        "copilot", "copilot-legacy", re.compile(r"^history-session-state/[^/]+\.json$"), ("history-session-state",)
    ),
    DocumentRule(
        "copilot-vscode",
        "copilot-vscode-chat",
        re.compile(r"^(workspaceStorage/[^/]+/chatSessions|globalStorage/emptyWindowChatSessions)/[^/]+\.json$"),
        ("workspaceStorage/*/chatSessions", "globalStorage/emptyWindowChatSessions"),
    ),
)
MEMORY_ROOT_RULE = re.compile(r"^(.+/)?[^/]+\.md$")
"""Under a configured ``[memories]`` root every Markdown file is a memory."""


def _iter_documents(source: Source, skipped: list[str] | None) -> Iterator[FileRef]:
    """Every whole-document file of `source` (`DOCUMENT_RULES`, or every Markdown file of a
    ``[memories]`` root), instruction files excluded."""
    if source.memory_root:
        rules = [DocumentRule(source.agent, "memory", MEMORY_ROOT_RULE)]
    else:
        rules = [r for r in DOCUMENT_RULES if r.agent == source.agent]
    if not rules:
        return
    roots: list[Path] = []
    for rule in rules:
        for pattern in rule.roots:
            for d in sorted(source.home.glob(pattern)) if pattern else [source.home]:
                if d.is_dir() and not d.is_symlink() and d not in roots:
                    roots.append(d)
    for path in (e.path for root in roots for e in _walk(root, skipped, (".md", ".json"))):
        rel = os.path.relpath(path, source.home).replace(os.sep, "/")
        for rule in rules:
            if rule.pattern.match(rel):
                if rule.doc_kind == "memory":
                    # imported here: the memory parser loads yaml, which a home without memories never needs
                    from agent_history.parsers.memory.parser import is_instruction_file

                    if is_instruction_file(rel):
                        break
                if any((h / rel).is_file() for h in source.shadowed_by):
                    break
                yield FileRef(path, rel, "main", source, "document", rule.doc_kind)
                break


def file_ref(sources: list[Source], path: Path) -> FileRef | None:
    """The FileRef `iter_files` would yield for the file at `path` (e.g. named by an after-turn
    hook): same path, rel_path, role, kind and doc_kind, found by matching the path against the
    same rule tables (`_ROOTS` + `JSONL_RULES`, `KIND_RULES`, `DOCUMENT_RULES`, a ``[memories]``
    root) without walking the home. None when no source discovers it: no rule matches, a symlink
    or dot-name on the way below the home, an instruction file, or shadowed by a hot copy."""
    target = Path(os.path.abspath(path))
    if target.is_symlink() or not target.is_file():
        return None
    for source in sources:
        home = Path(os.path.abspath(source.home))
        if source.agent in KIND_RULES and home == target:  # `--claude-export FILE`
            return FileRef(str(source.home), source.home.name, "main", source, "document")
        try:
            parts = target.relative_to(home).parts
        except ValueError:
            continue
        if any(p.startswith(".") for p in parts) or _symlink_between(home, target):
            continue
        rel = "/".join(parts)
        if any((h / rel).is_file() for h in source.shadowed_by):
            continue
        ref = _ref_by_rules(source, rel)
        if ref is not None:
            return ref
    return None


def _symlink_between(home: Path, target: Path) -> bool:
    """True when a directory between `home` (exclusive) and `target` is a symlink (`_walk` does
    not follow those)."""
    d = target.parent
    while d != home and d != d.parent:
        if d.is_symlink():
            return True
        d = d.parent
    return False


def _ref_by_rules(source: Source, rel: str) -> FileRef | None:
    """The FileRef of `rel` (relative to `source.home`) by the discovery rules, in the order
    `iter_files` applies them (first match wins), or None."""
    path = str(source.home / rel)
    if source.agent in KIND_RULES:
        if source.home.is_file():
            return None
        for top, pattern, kind in KIND_RULES[source.agent]:
            # a rule with a root sees `_walk`'s suffixes below it; one without, top-level files
            if (top and not rel.startswith(top + "/")) or (not top and "/" in rel):
                continue
            if top and not rel.endswith((".json", ".jsonl", ".db")):
                continue
            if re.fullmatch(pattern, rel):
                return FileRef(path, rel, "main", source, kind)
        return None
    if not source.memory_root and rel.endswith(".jsonl"):
        rule = JSONL_RULES.get(source.agent)
        in_root = any(rel.startswith(top + "/") for top in _ROOTS.get(source.agent, ()))
        if in_root and (rule is None or rule.match(rel)):
            return FileRef(path, rel, _role(source.agent, rel), source)
    from agent_history.parsers.memory.parser import is_instruction_file

    if source.memory_root:
        rules = [DocumentRule(source.agent, "memory", MEMORY_ROOT_RULE)]
    else:
        rules = [r for r in DOCUMENT_RULES if r.agent == source.agent]
    if not rel.endswith((".md", ".json")):
        return None
    for rule in rules:
        if not any(_under_glob(rel, g) for g in rule.roots):
            continue
        if rule.pattern.match(rel):
            if rule.doc_kind == "memory" and is_instruction_file(rel):
                return None
            return FileRef(path, rel, "main", source, "document", rule.doc_kind)
    return None


def _under_glob(rel: str, root_glob: str) -> bool:
    """True when `rel` lies below a directory matching `root_glob` (``""``: the home itself), as
    `Path.glob` matches it (``*`` one name)."""
    if not root_glob:
        return True
    n = root_glob.count("/") + 1
    parts = rel.split("/")
    return len(parts) > n and fnmatch.fnmatchcase("/".join(parts[:n]), root_glob)
