"""Discovery: namespaces → agent homes → transcript files (docs/design.md §4, §7).

Where each harness keeps its files is its registry row's `Layout` (`agent_history.harnesses`):
JSONL roots walked for transcripts (a path rule may narrow them; a sub-agent rule marks the
files read after the main ones, so parents exist first), whole-document rules (memories, legacy
documents), or — for a harness whose files are not only append-only JSONL — `KindRule`s giving
each file its source kind (jsonl | document | database). Symlinks and dot-dirs below the home
are skipped (a home may itself be a dot-dir such as ``~/.claude``). A namespace is
``<agent>-<profile>``; its agent is the longest harness name before a ``-``.

A harness that keeps its files inside each project (Aider, Crush: the row's
`spec.ProjectFile`s) has no home: its source lists project directories instead —
``project_dirs`` (the working directories the catalogue knows; each is tried with its parents
up to the repository root, where Aider writes) and ``roots`` (configured ``[<harness>] roots``,
or the ``--home`` directory, searched `PROJECT_DEPTH` levels deep; dot-dirs, symlinks and
`SKIP_DIRS` are not entered). Its ``home`` is ``/``, so a file's relative path is its absolute
path.
"""

from __future__ import annotations

import errno
import fnmatch
import os
import re
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from agent_history.harnesses import BY_NAME, HARNESSES, of_namespace
from agent_history.harnesses.places import resolve
from agent_history.harnesses.spec import DocumentRule, Layout


@cache
def _rx(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


def _layout(agent: str) -> Layout:
    return BY_NAME[agent].layout


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
    roots: tuple[Path, ...] = ()
    """A project harness's directories searched for projects (module docstring)."""
    project_dirs: tuple[str, ...] = ()
    """A project harness's known project directories (sessions' working directories)."""
    known_projects: bool = False
    """The loader fills `project_dirs` with the working directories the catalogue knows."""


@dataclass(frozen=True, slots=True)
class FileRef:
    """A discovered transcript file."""

    path: str
    rel_path: str
    role: str  # main | subagent
    source: Source
    kind: str = "jsonl"
    """How the loader reads it: jsonl | document | database (docs/design.md §7 source kinds)."""
    doc_kind: str | None = None
    """For a document read by a parser other than its agent's own: its `DocumentRule.doc_kind`
    (`parsers.document_parser_class`)."""


def agent_of_namespace(namespace: str) -> str:
    """The harness of a namespace (`claude-work` → `claude`, `claude-ai-export` → `claude-ai`):
    the longest known agent name followed by ``-``. Raises ValueError if unknown."""
    return of_namespace(namespace)


def home_layout(home: Path, profile: str = "local") -> dict[str, Path]:
    """Namespaces for a directory laid out like ``~`` (``--home DIR``): ``<agent>-<profile>``
    (``local``, or this machine's host name: `config.Settings.profile`) → each harness's
    default home under `home`, ignoring the environment (registry order)."""
    return {f"{h.name}-{profile}": resolve(h.home, home=home, env={}) for h in HARNESSES if h.home is not None}


def _walk(root: Path, skipped: list[str] | None, suffixes: tuple[str, ...] = (".jsonl",)) -> Iterator[os.DirEntry]:
    """Yield regular files ending in `suffixes` under `root`, sorted; symlinks and dot-dirs are skipped.

    What is passed over for a reason a user may not expect (a symlink, a directory that cannot
    be read, a name that is not valid UTF-8, a FIFO, socket or device named like a transcript, a
    directory named ``*.jsonl``) is appended to `skipped` as one line each.
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
            if skipped is not None and (entry.name.endswith(suffixes) or _links_to_dir(entry)):
                skipped.append(f"{entry.path}: symlink (not followed)")
            continue
        try:
            entry.path.encode("utf-8")
        except UnicodeEncodeError:
            if skipped is not None:
                skipped.append(f"{entry.path.encode('utf-8', 'backslashreplace').decode()}: name is not valid UTF-8")
            continue
        if entry.is_dir(follow_symlinks=False):
            if skipped is not None and entry.name.endswith(".jsonl"):
                skipped.append(f"{entry.path}: a directory, not a transcript (the files in it are searched)")
            dirs.append(entry)
        elif entry.name.endswith(suffixes):
            if entry.is_file(follow_symlinks=False):
                yield entry
            elif skipped is not None:
                skipped.append(f"{entry.path}: not a regular file ({_special_kind(entry)})")
    for d in dirs:
        yield from _walk(Path(d.path), skipped, suffixes)


def _links_to_dir(entry: os.DirEntry) -> bool:
    """True when the symlink `entry` leads to a directory, or to nothing that can be resolved
    (a loop, ``ELOOP``): both are worth naming as a link not followed. False for a dangling
    link or one to a file."""
    try:
        return entry.is_dir()
    except OSError:  # a symlink loop: os.DirEntry.is_dir raises ELOOP rather than answering
        return True


def missing_home_reason(home: Path) -> str:
    """Why a home that is neither a directory nor a file is passed over: "is a symlink loop"
    (``ELOOP``: a link leading back to itself) or "does not exist"."""
    try:
        os.stat(home)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return "is a symlink loop"
    return "does not exist"


def _special_kind(entry: os.DirEntry) -> str:
    """What a path that is neither a regular file, a directory nor a symlink is: "a FIFO",
    "a socket", "a device" (else "special file"; "gone" if it vanished meanwhile)."""
    try:
        mode = entry.stat(follow_symlinks=False).st_mode
    except OSError:
        return "gone"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "special file"


def _role(agent: str, rel: str) -> str:
    """``subagent`` when the harness's sub-agent rule finds ``"/" + rel``, else ``main``."""
    rule = _layout(agent).subagent
    return "subagent" if rule is not None and _rx(rule).search(f"/{rel}") else "main"


def iter_files(source: Source, skipped: list[str] | None = None) -> Iterator[FileRef]:
    """Every transcript file of `source`, main files first, then sub-agent files.

    Paths passed over (symlinks, unreadable directories, undecodable names) go to `skipped`.
    """
    if _layout(source.agent).projects:
        yield from _iter_project_files(source, skipped)
        return
    if _layout(source.agent).kinds:
        yield from _iter_kind_files(source, skipped)
        return
    if not source.memory_root:  # a `[memories]` root holds documents only
        yield from _iter_jsonl_files(source, skipped)
    yield from _iter_documents(source, skipped)


def _iter_jsonl_files(source: Source, skipped: list[str] | None) -> Iterator[FileRef]:
    """The append-only JSONL transcripts of `source` (its layout's roots and transcript rule),
    main files first."""
    layout = _layout(source.agent)
    later: list[FileRef] = []
    for top in layout.roots:
        for entry in _walk(source.home / top, skipped):
            rel = os.path.relpath(entry.path, source.home).replace(os.sep, "/")
            if layout.transcript is not None and not _rx(layout.transcript).match(rel):
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
    """Files of a harness whose layout has kind rules, each with its source kind. A source whose
    home is a file (``--claude-export FILE``) is that one file, as a document."""
    if source.home.is_file():
        yield FileRef(str(source.home), source.home.name, "main", source, "document")
        return
    seen: set[str] = set()
    for top, pattern, kind in ((r.root, r.pattern, r.kind) for r in _layout(source.agent).kinds):
        rx = _rx(pattern)
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


PROJECT_DEPTH = 4
"""How many directory levels below a configured root are searched for projects."""
SKIP_DIRS = frozenset({"node_modules", "__pycache__", "venv", "site-packages", "target", "dist", "build"})
"""Directories never entered when searching a root for projects (besides dot-dirs)."""
PROJECT_HOME = Path("/")
"""The ``home`` of a project harness's source: file paths relative to it are absolute paths."""


def project_source_dirs(cwd: str) -> list[str]:
    """`cwd` and its parents up to the first one holding ``.git`` (the repository root, where
    Aider writes), at most `PROJECT_DEPTH` levels up; just `cwd` outside a repository."""
    out: list[str] = []
    d = os.path.abspath(cwd)
    for _ in range(PROJECT_DEPTH + 1):
        out.append(d)
        if os.path.exists(os.path.join(d, ".git")):
            return out
        parent = os.path.dirname(d)
        if parent == d:
            break
        d = parent
    return out[:1]


def _project_dirs_below(root: Path, skipped: list[str] | None, depth: int = PROJECT_DEPTH) -> Iterator[str]:
    """`root` and the directories below it to `depth` levels, sorted; dot-dirs, symlinks and
    `SKIP_DIRS` are not entered."""
    yield str(root)
    if depth <= 0:
        return
    try:
        entries = sorted(os.scandir(root), key=lambda e: e.name)
    except (FileNotFoundError, NotADirectoryError):
        return
    except PermissionError:
        if skipped is not None:
            skipped.append(f"{root}: directory cannot be read")
        return
    for entry in entries:
        if entry.name.startswith(".") or entry.name in SKIP_DIRS or entry.is_symlink():
            continue
        if entry.is_dir(follow_symlinks=False):
            yield from _project_dirs_below(Path(entry.path), skipped, depth - 1)


def _iter_project_files(source: Source, skipped: list[str] | None) -> Iterator[FileRef]:
    """The project files of a project harness's `source` (module docstring), each once."""
    dirs: list[str] = []
    for d in source.project_dirs:
        dirs += project_source_dirs(d)
    for root in source.roots:
        dirs += _project_dirs_below(root, skipped)
    seen: set[str] = set()
    for d in dirs:
        for rule in _layout(source.agent).projects:
            path = os.path.join(d, rule.path)
            if path in seen or not os.path.isfile(path) or os.path.islink(path):
                continue
            seen.add(path)
            rel = os.path.relpath(path, source.home).replace(os.sep, "/")
            yield FileRef(path, rel, "main", source, rule.kind)


MEMORY_ROOT_RULE = DocumentRule("memory", r"^(.+/)?[^/]+\.md$")
"""Under a configured ``[memories]`` root every Markdown file is a memory (instruction files
excepted, `parsers.memory.parser.is_instruction_file`)."""


def _document_rules(source: Source) -> tuple[DocumentRule, ...]:
    """The whole-document rules of `source`: its harness's, or the memory rule of a ``[memories]`` root."""
    return (MEMORY_ROOT_RULE,) if source.memory_root else _layout(source.agent).documents


def _iter_documents(source: Source, skipped: list[str] | None) -> Iterator[FileRef]:
    """Every whole-document file of `source` (its harness's document rules, or every Markdown
    file of a ``[memories]`` root), instruction files excluded."""
    rules = _document_rules(source)
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
            if _rx(rule.pattern).match(rel):
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
    same layout rules (JSONL roots and transcript rule, kind rules, document rules, a
    ``[memories]`` root) without walking the home. None when no source discovers it: no rule matches, a symlink
    or dot-name on the way below the home, an instruction file, or shadowed by a hot copy."""
    target = Path(os.path.abspath(path))
    if target.is_symlink() or not target.is_file():
        return None
    for source in sources:
        rules = _layout(source.agent).projects
        if rules:  # a project file is itself the evidence: its name says which harness wrote it
            rule = next((r for r in rules if target.as_posix().endswith("/" + r.path)), None)
            if rule is not None:
                rel = os.path.relpath(target, source.home).replace(os.sep, "/")
                return FileRef(str(target), rel, "main", source, rule.kind)
            continue
        home = Path(os.path.abspath(source.home))
        if _layout(source.agent).kinds and home == target:  # `--claude-export FILE`
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
    layout = _layout(source.agent)
    if layout.kinds:
        if source.home.is_file():
            return None
        for top, pattern, kind in ((r.root, r.pattern, r.kind) for r in layout.kinds):
            # a rule with a root sees `_walk`'s suffixes below it; one without, top-level files
            if (top and not rel.startswith(top + "/")) or (not top and "/" in rel):
                continue
            if top and not rel.endswith((".json", ".jsonl", ".db")):
                continue
            if _rx(pattern).fullmatch(rel):
                return FileRef(path, rel, "main", source, kind)
        return None
    if not source.memory_root and rel.endswith(".jsonl"):
        in_root = any(rel.startswith(top + "/") for top in layout.roots)
        if in_root and (layout.transcript is None or _rx(layout.transcript).match(rel)):
            return FileRef(path, rel, _role(source.agent, rel), source)
    from agent_history.parsers.memory.parser import is_instruction_file

    rules = _document_rules(source)
    if not rel.endswith((".md", ".json")):
        return None
    for rule in rules:
        if not any(_under_glob(rel, g) for g in rule.roots):
            continue
        if _rx(rule.pattern).match(rel):
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
