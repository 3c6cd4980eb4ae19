"""The shape of a harness row (`Harness`) and of the rules it declares — data only, no I/O.

A row says, for one coding-agent harness, everything the rest of the system needs to know that
is not in its parser: names, where its files live on each OS and how discovery finds them, how
its files are recognised, how it resumes a session, where its after-turn hook and its MCP
configuration go, and what its format records (`capabilities`). The rows themselves are the
modules beside this one; `agent_history.harnesses` lists them in order.

Paths are `Place`s: per OS (``sys.platform``: ``darwin``, ``win32``, anything else = ``default``)
a tuple of alternatives tried in order — the first whose ``${VARIABLES}`` are all set (non-empty)
wins; ``~`` is the user's home (`places.resolve`). Regular expressions are kept as source text
(compiled by their users) and match home-relative paths with ``/`` separators.
"""

from __future__ import annotations

from dataclasses import dataclass, field

SOURCE_KINDS: tuple[str, ...] = ("jsonl", "document", "database", "markdown")
BUILT_FROM: tuple[str, ...] = ("real", "schema")
"""What a harness's support was built from: ``real`` files (the shared corpus, or samples in
``fixtures/samples/<harness>/`` with their provenance), or only its published ``schema`` (its
source code, a peer's reader) when no real file could be found."""
"""How the loader reads a file (docs/design.md §7): append-only JSONL, a whole document re-read
when it changes, a SQLite database read by a saved cursor, append-only Markdown read line by
line like JSONL (Aider's chat history; the parser's ``RAW_LINES``)."""

HOOK_STYLES: tuple[str, ...] = ("groups", "flat", "notify")
"""After-turn hook config shapes: JSON matcher groups under ``hooks[event]`` (Claude Code, Gemini
CLI), a flat JSON list under ``hooks[event]`` (Cursor, VS Code), a top-level TOML ``notify`` argv
(Codex)."""

MCP_ENTRIES: tuple[str, ...] = ("stdio-typed", "stdio", "opencode")
"""MCP server entry shapes: ``{"type": "stdio", "command", "args", "env"}``, the same without
``type``, OpenCode's ``{"type": "local", "command": [cmd, …args], "enabled", "environment"}``."""


@dataclass(frozen=True, slots=True)
class Place:
    """A path on this machine, per OS; each a tuple of alternatives (see the module docstring)."""

    default: tuple[str, ...]
    darwin: tuple[str, ...] | None = None
    win32: tuple[str, ...] | None = None

    def for_platform(self, platform: str) -> tuple[str, ...]:
        """The alternatives for ``sys.platform`` value `platform`."""
        if platform == "darwin" and self.darwin is not None:
            return self.darwin
        if platform == "win32" and self.win32 is not None:
            return self.win32
        return self.default

    def joined(self, *parts: str) -> Place:
        """This place with `parts` appended to every alternative."""
        tail = "/" + "/".join(parts)

        def add(alts: tuple[str, ...] | None) -> tuple[str, ...] | None:
            return None if alts is None else tuple(a + tail for a in alts)

        return Place(add(self.default), add(self.darwin), add(self.win32))  # type: ignore[arg-type]


def vscode_family(app: str) -> Place:
    """The user directory of a VS Code-family app (`app` = ``Code``, ``Cursor``): Linux
    ``$XDG_CONFIG_HOME/<app>/User`` (default ``~/.config/<app>/User``), macOS ``~/Library/
    Application Support/<app>/User``, Windows ``%APPDATA%/<app>/User`` (default
    ``~/AppData/Roaming/<app>/User``) — code.visualstudio.com, "User and workspace settings"."""
    return Place(
        (f"${{XDG_CONFIG_HOME}}/{app}/User", f"~/.config/{app}/User"),
        darwin=(f"~/Library/Application Support/{app}/User",),
        win32=(f"${{APPDATA}}/{app}/User", f"~/AppData/Roaming/{app}/User"),
    )


@dataclass(frozen=True, slots=True)
class KindRule:
    """Files below ``root`` (home-relative; ``""`` = files directly in the home) whose path
    matches ``pattern`` are read as source ``kind`` (`SOURCE_KINDS`). First match wins."""

    root: str
    pattern: str
    kind: str


@dataclass(frozen=True, slots=True)
class ProjectFile:
    """A file a harness keeps inside each project it ran in, not in a home (Aider's
    ``.aider.chat.history.md``, Crush's ``.crush/crush.db``): ``path`` relative to the project
    directory, read as source ``kind``. Discovery looks for it in the directories the catalogue
    knows as sessions' working directories (and their parents up to the repository root) and
    below configured roots (``[<harness>] roots``; ``--home DIR``: DIR)."""

    path: str
    kind: str


@dataclass(frozen=True, slots=True)
class DocumentRule:
    """Whole-document files of a harness that appends JSONL elsewhere (memories, legacy
    documents), read by a parser other than the harness's own."""

    doc_kind: str
    """``memory`` (`parsers.memory`) or the name of the document parser (`parser`)."""
    pattern: str
    """Matched against the home-relative path."""
    roots: tuple[str, ...] = ("",)
    """Directory globs (home-relative) walked for it, so a big home is not walked whole."""
    parser: str | None = None
    """Module below ``agent_history.parsers`` whose ``PARSER`` is a `DocumentParser` (None for
    ``memory``)."""


@dataclass(frozen=True, slots=True)
class Layout:
    """How discovery finds a harness's transcripts below its home (docs/design.md §7).

    Either ``kinds`` (a harness whose files are not, or not only, append-only JSONL: every file
    by the first matching `KindRule`), or ``roots`` walked for ``*.jsonl`` transcripts (kept when
    ``transcript`` matches, or always when it is None) plus ``documents``."""

    roots: tuple[str, ...] = ()
    transcript: str | None = None
    subagent: str | None = None
    """A JSONL file whose ``"/" + relative path`` this regex finds is a sub-agent thread (read
    after the main files, so parents exist first)."""
    kinds: tuple[KindRule, ...] = ()
    documents: tuple[DocumentRule, ...] = ()
    home_may_be_file: bool = False
    """A source may name one file instead of a directory (a claude.ai ``conversations.json``)."""
    projects: tuple[ProjectFile, ...] = ()
    """Files found in project directories instead of a home (`ProjectFile`)."""
    globs: tuple[str, ...] = ()
    """The files read, for people: globs relative to the home (``*`` within one directory, ``**/``
    any depth) shown in the README's agent table. Not used by discovery (the rules above are);
    ``tests/test_harness_layout_globs.py`` checks every file discovery finds in the sample homes
    matches one of them."""


@dataclass(frozen=True, slots=True)
class Signature:
    """How a transcript of the harness looks in its first bytes (`detect.detect_harness`):
    every regex of ``head`` is found in the decoded head, every one of ``first`` in its first
    line, none of ``absent`` in the head, and ``path`` (when set) in the file's path. Signatures
    of all harnesses are tried by ascending ``rank``; the first match names the harness."""

    rank: int
    head: tuple[str, ...] = ()
    first: tuple[str, ...] = ()
    absent: tuple[str, ...] = ()
    path: str | None = None


@dataclass(frozen=True, slots=True)
class TranscriptLookup:
    """Where a hook finds the transcript when the payload names only an id: the newest file
    below ``root`` matching one of the globs ``patterns`` with ``{id}`` replaced by the first
    payload value of ``id_keys``; ``no_id`` is the error when none is a plain id, ``what`` names
    the file in "no <what> <id> under <root>"."""

    id_keys: tuple[str, ...]
    root: Place
    patterns: tuple[str, ...]
    no_id: str
    what: str


@dataclass(frozen=True, slots=True)
class HookSpec:
    """The after-turn hook (`connect AGENT --hook`): where it is configured and in which shape,
    and how the payload names the transcript to index."""

    name: str
    """The word after ``agent-history hook`` in the installed command (also accepted by
    ``connect NAME --hook``); installs in the wild carry it, so it never changes."""
    config: Place
    style: str
    """`HOOK_STYLES`."""
    event: str = "Stop"
    entry: tuple[tuple[str, str], ...] = ()
    """Keys a flat entry of ours carries besides ``command`` (VS Code: ``type = command``)."""
    top: tuple[tuple[str, int], ...] = ()
    """Top-level keys a config we create or edit must have (Cursor: ``version = 1``)."""
    own_file: bool = False
    """The file is ours alone: removed when nothing else is left in it."""
    transcript_key: str | None = "transcript_path"
    """The payload key naming the transcript (None: the payload names none)."""
    lookup: TranscriptLookup | None = None
    """When the payload has no usable ``transcript_key``."""


@dataclass(frozen=True, slots=True)
class McpSpec:
    """Where `connect` installs the read-only MCP server, in which shape, and where the usage
    note goes (a SKILL.md file, or a marker-delimited section of an instructions file)."""

    name: str
    """The name `connect` / `disconnect` show (a product name: ``claude-code``, ``vscode``)."""
    config: Place
    fmt: str
    """``json`` | ``toml``."""
    entry: str
    """`MCP_ENTRIES`."""
    servers_key: tuple[str, ...]
    """Key path of the table of servers (ours is added under ``agent-history``)."""
    note: Place
    note_kind: str
    """``skill`` | ``section``."""
    env_key: str = "env"


@dataclass(frozen=True, slots=True)
class Retention:
    """A harness that deletes its own transcripts after a configurable age: where the setting is
    and what it defaults to (`archive.retention` warns when it is unset or below its floor)."""

    file: str
    """The settings file, relative to the harness's home (JSON)."""
    key: str
    """The top-level key holding the number of days transcripts are kept."""
    default_days: int
    """What the harness keeps when the key is unset (its documented default)."""


RULE_FORMATS: tuple[str, ...] = ("json", "execpolicy")
"""How a permission file is read (`repos.installed.RULE_READERS`): a JSON settings file whose
lists (`PermissionFile.lists`) hold rules naming a tool (``Bash(npm test:*)``), or Codex's
execpolicy ``.rules`` file (Starlark ``prefix_rule(pattern=[…], decision=…)`` calls naming a
command prefix)."""

PLUGIN_FORMATS: tuple[str, ...] = ("claude-installed-plugins",)
"""How a plugin list is read (`repos.installed.PLUGIN_READERS`): Claude Code's
``installed_plugins.json`` (v1 or v2)."""


@dataclass(frozen=True, slots=True)
class PermissionFile:
    """A file holding permission rules: ``path`` relative to the harness's home (scope ``user``)
    or to a project (scopes ``project``, ``local``); a ``*`` matches within one directory (Codex's
    ``rules/*.rules``). Read as ``fmt`` (`RULE_FORMATS`)."""

    path: str
    scope: str
    fmt: str = "json"
    lists: tuple[tuple[tuple[str, ...], str], ...] = ()
    """For ``json``: (key path in the settings JSON, list stored as: allow | deny | ask)."""


@dataclass(frozen=True, slots=True)
class InstalledPlaces:
    """Where the harness keeps installed skills, plugins and permission rules, read by `collect`
    (`ingest.collect_installed`): skill directories (each ``<dir>/<skill>/SKILL.md``, the open
    Agent Skills layout) under its home and under a project, plugin lists (path under the home,
    `PLUGIN_FORMATS`), and permission files (`PermissionFile`)."""

    user_skills: tuple[str, ...] = ()
    project_skills: tuple[str, ...] = ()
    plugins: tuple[tuple[str, str], ...] = ()
    permissions: tuple[PermissionFile, ...] = ()


@dataclass(frozen=True, slots=True)
class Capabilities:
    """What the harness's format records (`capabilities.CAPABILITIES` names), and which of those
    no input in the shared corpus, samples or field cases shows, with the reason (the capability
    sync test checks both against what the parser emits)."""

    records: frozenset[str]
    unsampled: tuple[tuple[str, str], ...] = ()
    """(capability, why no sample shows it) — each must be in ``records`` and never observed."""


@dataclass(frozen=True, slots=True)
class Harness:
    """One coding-agent harness (see the module docstring)."""

    name: str
    """The ``agent`` column value, the namespace prefix (``<name>-<profile>``), the label value."""
    product: str
    """What people call it."""
    parser: str
    """Module below ``agent_history.parsers`` exporting ``PARSER`` (and ``DOCUMENT_PARSER`` /
    ``DATABASE_PARSER`` for the other source kinds)."""
    source_kinds: tuple[str, ...]
    layout: Layout
    capabilities: Capabilities
    aliases: tuple[str, ...] = ()
    """Other names a person or an agent may use for it (product names)."""
    home: Place | None = None
    """The default home (namespace ``<name>-local``); None: configured explicitly only."""
    signatures: tuple[Signature, ...] = ()
    path_hint: str | None = None
    """Regex found in a path of this harness's files (detection's last resort)."""
    resume: str | None = None
    """The command resuming a session, run in its cwd: ``{uid}`` / ``{path}`` filled in."""
    fork: str | None = None
    """The command starting a new session from a copy of this one (None: the harness has none)."""
    retention: Retention | None = None
    """The harness's own deletion of old transcripts, if it has one."""
    hook: HookSpec | None = None
    mcp: McpSpec | None = None
    app_state: Place | None = None
    """The app's own state database read as a sidecar (Cursor's ``state.vscdb``)."""
    notes: tuple[str, ...] = field(default=())
    """Sources for the facts above (format docs, FORMATS.md sections, field cases)."""
    built_from: str = "real"
    """`BUILT_FROM`: real files, or the published schema only."""
    built_from_why: str = ""
    """Which files, or why no real file was used (shown in the README's table)."""
    explicit: str | None = None
    """How a person names a source of a harness with no default home (an export file)."""
    installed: InstalledPlaces | None = None
    """Its installed skills, plugins and permission files (None: `collect` reads none)."""
