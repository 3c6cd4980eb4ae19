"""Settings: defaults < TOML config file < environment < command-line flags (docs/design.md §4).

The one documented place to change behaviour. The config file is
``$AGENT_HISTORY_CONFIG`` (which must exist) or ``$XDG_CONFIG_HOME/agent-history/config.toml``
(default ``~/.config/agent-history/config.toml``; absent means defaults). Unknown keys in the
sections below are errors, unknown sections warnings (`KNOWN_KEYS`). Example::

    [database]
    dsn = "postgresql://ah@db.example/agent_history"   # omit for the embedded server
    reader_dsn = "postgresql://ah_reader@db.example/agent_history"
    reader_password = "..."            # or AGENT_HISTORY_READER_PASSWORD
    writer_password = "..."            # or AGENT_HISTORY_WRITER_PASSWORD
    idle_stop_s = 1800                 # embedded server only: stop it after this many seconds
                                       # without a client connection (the next command starts it
                                       # again); 0 = never. web, mcp and --every keep it up.

    [sources]                          # namespace = agent home (adds to / overrides defaults)
    claude-work = "~/work-claude"

    [cold_sources]                     # namespace = archive copy of that home
    claude-local = "/mnt/archive/claude"

    [archive]                          # `agent-history archive`: compressed, versioned copies
    path = "/mnt/archive/agent-history"   # default: <data dir>/archive

    [host]                             # many machines, one server (README "Many machines")
    name = "laptop"                    # this machine's name: namespaces `<agent>-laptop`, origin_host;
                                       # default the system host name (short, lowercased) — used for
                                       # namespaces only with a remote (TCP) DSN or when set here

    [index]
    redact = true                      # store text with secret-shaped spans [REDACTED] (default false)

    [contexts]                         # named search scopes (lists of namespaces)
    work = ["claude-work", "codex-work"]

    [memories]                         # namespace = a directory of Markdown memories of that agent
    codex-notes = "~/notes/codex"      # every *.md below is a memory (instruction files excepted)

    [aider]                            # harnesses that keep their files in each project (Aider,
    roots = ["~/src"]                  # Crush): directories searched for projects, besides the
                                       # working directories the catalogue already knows

    [embedding]                        # absent: embeddings and vector/hybrid search are off
    provider = "openai"                # openai (any OpenAI-compatible /embeddings) | local
    base_url = "https://api.openai.com/v1"   # Ollama: http://localhost:11434/v1
    model = "text-embedding-3-small"
    dimensions = 512                   # optional: sent as `dimensions`; part of the cache key
    api_key_env = "OPENAI_API_KEY"     # env var holding the key; omit for keyless servers
    batch_size = 64                    # inputs per request
    max_tokens_per_run = 2000000       # stop a run before exceeding (estimated tokens)
    max_tokens_per_day = 10000000      # per UTC day, summed over runs (ah.embedding_usage)
    # provider = "local"; local_model_path = "/models/all-MiniLM-L6-v2"   (extra: [local])
    # service_idle_s = 600             # local: the warm embedding service (one process holding the
    #                                  # model for every command) exits after this many idle seconds;
    #                                  # 0 = no service, each process loads the model itself

    [service]                          # the resident query process (agent_history.cli.resident_server)
    query_idle_s = 900                 # it exits after this many seconds without a command;
                                       # 0 = none: every command imports psycopg/typer itself

    [metrics]                          # OTLP/HTTP export from `index --every` / `embed --every`
    endpoint = "http://127.0.0.1:4318" # base URL; OTEL_EXPORTER_OTLP_(METRICS_)ENDPOINT override
    interval = 15                      # seconds between collections and exports (1..3600)
    models = ["gpt-oss-120b"]          # extra `model` label values (priced models always are)

    [journal]                          # journal-sync: where session summaries come from (read-only)
    source = "~/.local/share/journal/journal.db"   # a SQLite file, or a postgresql:// DSN

    [web]                              # `agent-history web` (issue 20)
    token = "..."                      # required with --allow-remote (non-loopback bind); or AGENT_HISTORY_WEB_TOKEN
    [repos]                            # `collect` (issue 30): checkouts to read (globs allowed)
    paths = ["~/src/*"]                # absent: the repositories the catalogue links sessions to
    [identity]                         # `collect`: a commit stores only whether its author is you
    emails = ["me@example.org"]        # compared, never stored
    [litellm]                          # `litellm-fill`: unknown Claude token counts from a LiteLLM
    dsn = "postgresql://reader@proxy-db/litellm"   # proxy's "LiteLLM_SpendLogs" (read-only)
    namespaces = ["claude-work"]       # the Claude namespaces whose calls went through the proxy
    [plans]                            # `usage blocks --live`: plan limits per agent (usage.plans)
    claude = "max20"                   # pro | max5 | max20 | plus | chatgpt-pro, or a table:
    # [plans.codex]  block_tokens = 2000000, block_cost_usd = 40, week_tokens = …, week_cost_usd = …

Environment: AGENT_HISTORY_DSN, AGENT_HISTORY_READER_DSN, AGENT_HISTORY_DATA_DIR (embedded
server and state; default ``$XDG_DATA_HOME/agent-history``); the harnesses' own home variables
(CLAUDE_CONFIG_DIR, CODEX_HOME, COPILOT_HOME, XDG_DATA_HOME, XDG_CONFIG_HOME: each harness's
registry row, `agent_history.harnesses`, says which it honours);
AGENT_HISTORY_BATCH_LINES (lines per loader transaction; default 20,000);
AGENT_HISTORY_PARSE_WORKERS (processes parsing new files in a large pass; 0 or 1 = in-process;
default the CPU count minus 2, see agent_history.ingest.parse_pool);
AGENT_HISTORY_QUERY_IDLE_S (overrides ``service.query_idle_s``; 0 = no resident query process);
AGENT_HISTORY_JOURNAL_SOURCE (journal-sync source; overrides ``journal.source``);
AGENT_HISTORY_WEB_TOKEN (overrides ``web.token``);
AGENT_HISTORY_ARCHIVE (the archive's root; overrides ``archive.path``);
AGENT_HISTORY_HOST (this machine's name; overrides ``host.name``);
OTEL_EXPORTER_OTLP_ENDPOINT / OTEL_EXPORTER_OTLP_METRICS_ENDPOINT / OTEL_EXPORTER_OTLP_TIMEOUT
(metrics export, see agent_history.telemetry.otlp).
"""

from __future__ import annotations

import math
import os
import re
import socket
import tomllib
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from agent_history.harnesses import HARNESSES, of_namespace
from agent_history.harnesses.places import resolve


class ConfigError(Exception):
    """The config file is unreadable or invalid (message is one line, for the user)."""


def _xdg(var: str, default: str) -> Path:
    value = os.environ.get(var)
    return Path(value) if value else Path.home() / default


def config_path() -> Path:
    """Where the config file is looked for (`AGENT_HISTORY_CONFIG` when set, else the XDG path)."""
    explicit = os.environ.get("AGENT_HISTORY_CONFIG")
    if explicit:
        return Path(explicit).expanduser()
    return _xdg("XDG_CONFIG_HOME", ".config") / "agent-history" / "config.toml"


def data_dir() -> Path:
    """Directory for the embedded server and local state (`AGENT_HISTORY_DATA_DIR` overrides)."""
    explicit = os.environ.get("AGENT_HISTORY_DATA_DIR")
    if explicit:
        return Path(explicit).expanduser()
    return _xdg("XDG_DATA_HOME", ".local/share") / "agent-history"


LOCAL_PROFILE = "local"
"""The profile of the default namespaces on a machine that keeps its own catalogue (``claude-local``)."""

HOST_NAME_RE = re.compile(r"[a-z0-9](?:[a-z0-9_-]{0,61}[a-z0-9])?")
"""A host name usable as a namespace's profile part: a lowercase DNS label (RFC 1123: letters,
digits, inner hyphens, ≤ 63 characters) where ``_`` is also allowed."""


def check_host_name(name: str, where: str) -> str:
    """`name` when it can be the profile of every harness's namespace (``<agent>-<name>``): it
    matches `HOST_NAME_RE` and no ``<agent>-<name>`` reads as another harness's namespace
    (``ai-box`` would make ``claude-ai-box`` a claude.ai namespace). Raises ConfigError (one
    line naming `where`) otherwise."""
    from agent_history.harnesses import of_namespace

    if not HOST_NAME_RE.fullmatch(name):
        raise ConfigError(
            f"{where}: host name {name!r} is not a valid namespace part (lowercase letters, digits, '-' or '_', "
            "≤ 63 characters, starting and ending with a letter or digit)"
        )
    for h in HARNESSES:
        if of_namespace(f"{h.name}-{name}") != h.name:
            raise ConfigError(
                f"{where}: host name {name!r} is not a valid namespace part ({h.name}-{name} would read as a "
                f"{of_namespace(f'{h.name}-{name}')} namespace)"
            )
    return name


def system_host_name() -> str:
    """This machine's name as the system reports it (`socket.gethostname`), its first label, lowercased."""
    return socket.gethostname().split(".", 1)[0].strip().lower()


def default_host() -> str | None:
    """The host name a machine that names none gets (`Settings.host` without ``[host] name`` or
    ``$AGENT_HISTORY_HOST``): `system_host_name` when it is a valid namespace part, else None."""
    name = system_host_name()
    return name if HOST_NAME_RE.fullmatch(name) else None


def dsn_is_remote(dsn: str | None) -> bool:
    """Whether `dsn` reaches its server over TCP (a host name or address, ``localhost``
    included) rather than a Unix socket directory or the embedded default (None): a server
    several machines may push to. Both URL (``postgresql://h/db``) and key/value
    (``host=h dbname=db``) forms; an unparsable DSN counts as not remote (connecting says why)."""
    if not dsn:
        return False
    try:
        from psycopg.conninfo import conninfo_to_dict

        hosts = str(conninfo_to_dict(dsn).get("host") or "")
    except Exception:  # noqa: BLE001 - psycopg's ProgrammingError; reported when connecting
        return False
    if not hosts:
        return False  # libpq's default: the local Unix socket
    return any(h and not h.startswith("/") and not h.startswith("@") for h in hosts.split(","))


def default_sources(profile: str = LOCAL_PROFILE) -> dict[str, Path]:
    """Default namespaces → agent homes: ``<agent>-<profile>`` (``<agent>-local`` unless this
    machine indexes into a shared server, `Settings.profile`) → each harness's default home for
    this OS and environment (the registry's `Harness.home`, e.g. ``$CLAUDE_CONFIG_DIR`` or
    ``~/.claude``), in registry order; a harness with no default home (claude.ai exports) is
    configured explicitly only."""
    return {f"{h.name}-{profile}": resolve(h.home) for h in HARNESSES if h.home is not None}


EMBEDDING_PROVIDERS: tuple[str, ...] = ("openai", "local")


@dataclass
class EmbeddingSettings:
    """The ``[embedding]`` section (docs/design.md §9). Token counts are estimates (characters / 4)
    unless the endpoint reports usage; caps of 0 or absent keys use the defaults below."""

    provider: str
    model: str
    base_url: str = "https://api.openai.com/v1"
    dimensions: int | None = None
    api_key_env: str | None = None
    batch_size: int = 64
    max_tokens_per_run: int = 2_000_000
    max_tokens_per_day: int = 10_000_000
    local_model_path: Path | None = None
    timeout_s: float = 60.0  # one batch request (connect + read), seconds
    query_timeout_s: float = 3.0  # the query embedding in hybrid search, wall-clock seconds
    max_attempts: int = 6  # per batch, on 429 / 5xx / transport errors
    chunk_chars: int = 1500  # characters per chunk (before the context header)
    chunk_overlap: int = 200  # characters shared by neighbouring chunks
    service_idle_s: float = 600.0  # local provider: warm service exits after this long unused; 0 = no service

    @property
    def model_key(self) -> str:
        """The cache key's model part: ``model`` or ``model@dimensions`` when dimensions are set."""
        return f"{self.model}@{self.dimensions}" if self.dimensions else self.model


def positive_number(value: Any, where: str, *, whole: bool = False, unit: str = "") -> float:
    """`value` of the config key `where` when it is a finite number > 0 (`whole`: an integer,
    returned as int); `unit` names it in the error. Raises ConfigError (one line) for a bool, a
    string, NaN, ±infinity (TOML ``inf``, ``nan``, or a literal like ``1e400``), zero or a
    negative number."""
    kind = "a whole number" if whole else "a number" + (f" of {unit}" if unit else "")
    ok_type = not isinstance(value, bool) and isinstance(value, int if whole else int | float)
    if not ok_type or not math.isfinite(value) or not value > 0:
        raise ConfigError(f"{where} must be {kind} > 0, not {value!r}")
    return value


def _embedding_settings(raw: dict[str, Any]) -> EmbeddingSettings | None:
    """Parse ``[embedding]``; None when absent or without a provider. Raises ConfigError."""
    if not raw or not raw.get("provider"):
        return None
    provider = str(raw["provider"])
    if provider not in EMBEDDING_PROVIDERS:
        raise ConfigError(
            f"config embedding.provider must be one of {', '.join(EMBEDDING_PROVIDERS)}, not {provider!r}"
        )
    path = Path(str(raw["local_model_path"])).expanduser() if raw.get("local_model_path") else None
    model = raw.get("model") or (path.name if path else None)
    if provider == "local" and path is None:
        raise ConfigError('config embedding.local_model_path is required for provider = "local"')
    if not model:
        raise ConfigError("config embedding.model is required")
    e = EmbeddingSettings(provider=provider, model=str(model), local_model_path=path)
    for key in ("base_url", "api_key_env"):
        if raw.get(key):
            setattr(e, key, str(raw[key]))
    for key in (
        "dimensions",
        "batch_size",
        "max_tokens_per_run",
        "max_tokens_per_day",
        "max_attempts",
        "chunk_chars",
        "chunk_overlap",
    ):
        if raw.get(key):  # 0 or absent: the default
            setattr(e, key, positive_number(raw[key], f"config embedding.{key}", whole=True))
    for key in ("timeout_s", "query_timeout_s"):
        if raw.get(key):
            setattr(e, key, positive_number(raw[key], f"config embedding.{key}", unit="seconds"))
    if "service_idle_s" in raw:  # 0 is meaningful here (no service), so not the `if raw.get` rule above
        idle = raw["service_idle_s"]
        if isinstance(idle, bool) or not isinstance(idle, (int, float)) or not 0 <= idle < math.inf:  # nan/inf too
            raise ConfigError(f"config embedding.service_idle_s must be a number of seconds ≥ 0, not {idle!r}")
        e.service_idle_s = float(idle)
    if e.chunk_overlap >= e.chunk_chars // 2:
        raise ConfigError("config embedding.chunk_overlap must be less than half of chunk_chars")
    return e


@dataclass
class MetricsSettings:
    """The ``[metrics]`` section (docs/design.md §11). ``endpoint`` is an OTLP/HTTP base URL (the
    exporter appends ``/v1/metrics``); None leaves export to the OTEL_EXPORTER_OTLP_* variables.
    ``interval`` is seconds between collections; ``models`` extends the ``model`` label set."""

    endpoint: str | None = None
    interval: float = 15.0
    models: tuple[str, ...] = ()


METRICS_KEYS: tuple[str, ...] = ("endpoint", "interval", "models")
"""The ``[metrics]`` keys (checked by `_metrics_settings`, which names them in its own error)."""


def _metrics_settings(raw: dict[str, Any]) -> MetricsSettings:
    """Parse ``[metrics]`` (absent: defaults). Raises ConfigError for a bad value or unknown key."""
    m = MetricsSettings()
    unknown = sorted(set(raw) - set(METRICS_KEYS))
    if unknown:
        raise ConfigError(f"config metrics: unknown key {unknown[0]!r} (known: {', '.join(METRICS_KEYS)})")
    endpoint = _text(raw, "metrics", "endpoint")
    if endpoint is not None:
        if not endpoint.startswith(("http://", "https://")):
            raise ConfigError(f"config metrics.endpoint must be an http:// or https:// URL, got {endpoint!r}")
        m.endpoint = endpoint
    if "interval" in raw:
        value = raw["interval"]
        if isinstance(value, bool) or not isinstance(value, int | float) or not 1 <= value <= 3600:
            raise ConfigError("config metrics.interval must be a number of seconds between 1 and 3600")
        m.interval = float(value)
    if "models" in raw:
        models = raw["models"]
        if not isinstance(models, list) or not all(isinstance(x, str) and x for x in models):
            raise ConfigError("config metrics.models must be a list of model names")
        m.models = tuple(x.lower() for x in models)
    return m


@dataclass
class Settings:
    """Resolved settings. Build with `load_settings()`."""

    dsn: str | None = None
    reader_dsn: str | None = None
    reader_password: str | None = None
    writer_password: str | None = None
    statement_timeout_ms: int = 30_000
    idle_stop_s: float = 1800.0
    """``[database] idle_stop_s``: the embedded server stops after this many seconds without a
    client connection (`agent_history.db.idle_stop`); 0 = never. Ignored with a DSN."""
    sources: dict[str, Path] = field(default_factory=default_sources)
    cold_sources: dict[str, Path] = field(default_factory=dict)
    contexts: dict[str, list[str]] = field(default_factory=dict)
    data_dir: Path = field(default_factory=data_dir)
    embedding: EmbeddingSettings | None = None
    metrics: MetricsSettings = field(default_factory=MetricsSettings)
    journal_source: str | None = None  # journal-sync: SQLite path or PostgreSQL DSN
    web_token: str | None = None  # `web --allow-remote`: every request must carry it
    litellm_dsn: str | None = None  # litellm-fill: the LiteLLM proxy database (issue 19)
    litellm_namespaces: list[str] = field(default_factory=list)
    memories: dict[str, Path] = field(default_factory=dict)
    """``[memories]``: namespace → a directory whose Markdown files are memories (issue 16)."""
    repo_paths: list[str] | None = None
    """``[repos] paths``: checkouts or globs of them (``~`` expanded) `collect` reads; None: the
    repositories the catalogue links sessions to (issue 30)."""
    identity_emails: list[str] = field(default_factory=list)
    """``[identity] emails``: your commit addresses; `collect` stores only whether a commit's
    author is one of them, never an address."""
    project_roots: dict[str, list[Path]] = field(default_factory=dict)
    """``[<harness>] roots`` of the harnesses that keep their files in each project (the rows
    with `spec.ProjectFile`s): harness name → directories searched for projects."""
    archive_path: Path | None = None
    """``[archive] path``: the archive's root directory; None = `archive_root` under the data dir."""
    plans: dict[str, Any] = field(default_factory=dict)
    """``[plans]``: agent → `usage.plans.PlanConfig` (a named plan and/or explicit limits)."""
    index_redact: bool = False
    """``[index] redact``: the loader stores text with secret-shaped spans replaced (`embed.redact`)."""
    query_idle_s: float = 900.0
    """``[service] query_idle_s`` (``$AGENT_HISTORY_QUERY_IDLE_S``): the resident query process
    exits after this many seconds without a command; 0 = no resident process."""
    index_bulk: str = "auto"
    """``[index] bulk``: "auto" | "always" | "never" — when a pass takes the bulk path (`ingest.bulk`)."""
    index_bulk_min_bytes: int | None = None
    """``[index] bulk_min_bytes``: new bytes from which "auto" takes it (None = 64 MiB)."""
    host: str | None = None
    """This machine's name (``[host] name``, ``$AGENT_HISTORY_HOST``, else the system's):
    recorded as ``origin_host`` on every source file and session it indexes. None: the system
    reports none usable and nothing set one (rows get NULL, unknown)."""
    host_configured: bool = False
    """``[host] name`` or ``$AGENT_HISTORY_HOST`` named the host (the namespaces follow it)."""
    raw: dict[str, Any] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    """One-line warnings about the config file (unknown sections) for the caller to show."""

    @property
    def archive_host(self) -> str:
        """``ah.archive_copy.origin_host`` of this machine's archive copies: its host name when
        the namespaces follow it (several machines share the catalogue, each with its own
        archive), else '' (one machine; also every copy archived before hosts existed)."""
        return self.host if self.host and self.profile == self.host else ""

    @property
    def profile(self) -> str:
        """The profile of this machine's default namespaces (``<agent>-<profile>``): the host
        name when a host was named or the DSN is remote (`dsn_is_remote`: several machines may
        index into that server), else ``local`` (the embedded laptop default, unchanged)."""
        if self.host and (self.host_configured or dsn_is_remote(self.dsn)):
            return self.host
        return LOCAL_PROFILE

    @property
    def embedded_pgdata(self) -> Path:
        """PGDATA of the embedded server."""
        return self.data_dir / "pg"

    @property
    def archive_root(self) -> Path:
        """The archive's root directory: ``[archive] path``, default ``<data dir>/archive``."""
        return self.archive_path if self.archive_path is not None else self.data_dir / "archive"


KNOWN_KEYS: dict[str, tuple[str, ...] | None] = {
    "database": ("dsn", "reader_dsn", "reader_password", "writer_password", "statement_timeout_ms", "idle_stop_s"),
    "sources": None,  # keys are namespace names
    "cold_sources": None,  # keys are namespace names
    "contexts": None,  # keys are context names
    "embedding": tuple(f.name for f in fields(EmbeddingSettings)),
    "metrics": None,  # keys checked by _metrics_settings (unknown ones are errors there)
    "journal": ("source",),  # journal-sync (issue 15)
    "web": ("token",),  # `agent-history web` (issue 20)
    "litellm": ("dsn", "namespaces"),  # litellm-fill (issue 19)
    "memories": None,  # keys are namespace names (issue 16)
    "repos": ("paths",),  # collect (issue 30)
    "identity": ("emails",),  # collect: which commits are yours (never stored)
    **{h.name: ("roots",) for h in HARNESSES if h.layout.projects},  # project harnesses (Aider, Crush)
    "archive": ("path",),  # `agent-history archive` (issue 29)
    "index": ("redact", "bulk", "bulk_min_bytes"),
    "host": ("name",),  # many machines into one server (issue 29 item 2)
    "plans": None,  # keys are agent names, checked by usage.plans.parse_plans
    "service": ("query_idle_s",),  # the resident query process (cli.resident_server)
}
"""The config file's sections (the module docstring) and, where fixed, their keys. An unknown key
in a known section is an error (a misspelled `dsn` would silently mean the embedded server); an
unknown section is a warning (it may belong to a newer version)."""


FREE_KEYS: dict[str, str] = {
    "sources": "<namespace>",
    "cold_sources": "<namespace>",
    "contexts": "<context>",
    "memories": "<namespace>",
    "plans": "<agent>",
}
"""Sections whose keys are names the user chooses: the placeholder the reference shows."""

KEY_HELP: dict[str, str] = {
    "database.dsn": "PostgreSQL DSN of the catalogue (AGENT_HISTORY_DSN, --dsn override); absent: the embedded server.",
    "database.reader_dsn": "DSN the MCP server and the web UI read with (AGENT_HISTORY_READER_DSN); default: the "
    "reader role on the catalogue's server.",
    "database.reader_password": "Password of the ah_reader role (AGENT_HISTORY_READER_PASSWORD).",
    "database.writer_password": "Password of the ah_writer role (AGENT_HISTORY_WRITER_PASSWORD).",
    "database.statement_timeout_ms": "Statement timeout of reader connections, in ms (default 30000).",
    "service.query_idle_s": "The resident query process (search, sessions, session, why, touched, status, usage, "
    "statusline, index without --every or --archive) exits after this many seconds without a command (default "
    "900; 0 = none).",
    "database.idle_stop_s": "Embedded server only: stop it after this many seconds without a client connection; "
    "the next command starts it again; `web`, `mcp` and `--every` keep it up (default 1800; 0 = never).",
    "sources.<namespace>": "An agent home for namespace `<agent>-<profile>` (adds to or overrides the default homes).",
    "cold_sources.<namespace>": "The archive copy of that namespace's home, read by `rebuild`.",
    "contexts.<context>": "A named search scope: a list of namespaces (`--context NAME`). Not access control.",
    "memories.<namespace>": "A directory whose Markdown files are memories of that namespace's agent.",
    "embedding.provider": "`openai` (any OpenAI-compatible /embeddings endpoint) or `local` (sentence-transformers); "
    "absent: embeddings and vector/hybrid search are off.",
    "embedding.model": "Model name sent to the endpoint (local: default the model directory's name).",
    "embedding.base_url": "Endpoint base URL (default https://api.openai.com/v1; Ollama: http://localhost:11434/v1).",
    "embedding.dimensions": "Output dimensions sent as `dimensions`; part of the cache key.",
    "embedding.api_key_env": "Name of the environment variable holding the API key; omit for keyless servers.",
    "embedding.batch_size": "Inputs per request (default 64).",
    "embedding.max_tokens_per_run": "Stop a pass before exceeding this many estimated tokens (default 2,000,000).",
    "embedding.max_tokens_per_day": "The same cap per UTC day, summed over passes (default 10,000,000).",
    "embedding.local_model_path": "Directory of the local sentence-transformers model (provider `local`).",
    "embedding.timeout_s": "Seconds one batch request may take, connect and read (default 60).",
    "embedding.query_timeout_s": "Seconds hybrid search waits for the query embedding before answering keyword-only "
    "(default 3).",
    "embedding.max_attempts": "Attempts per batch on 429, 5xx and transport errors (default 6).",
    "embedding.chunk_chars": "Characters per chunk before the context header (default 1500).",
    "embedding.chunk_overlap": "Characters neighbouring chunks share (default 200; less than half of chunk_chars).",
    "embedding.service_idle_s": "Local provider: seconds the warm embedding service stays up unused (default 600; "
    "0 = no service, each process loads the model).",
    "metrics.endpoint": "OTLP/HTTP base URL metrics are pushed to (OTEL_EXPORTER_OTLP_(METRICS_)ENDPOINT override).",
    "metrics.interval": "Seconds between collections and exports, 1..3600 (default 15).",
    "metrics.models": "Extra `model` label values (priced models always are).",
    "journal.source": "The journal database summaries come from: a SQLite file or a postgresql:// DSN "
    "(AGENT_HISTORY_JOURNAL_SOURCE overrides).",
    "web.token": "Token every request of `web --allow-remote` must carry, ≥ 16 characters (AGENT_HISTORY_WEB_TOKEN "
    "overrides).",
    "litellm.dsn": 'The LiteLLM proxy database `litellm-fill` reads "LiteLLM_SpendLogs" from (read-only).',
    "litellm.namespaces": "The Claude namespaces whose calls went through the proxy.",
    "repos.paths": "Checkouts (or globs of them) `collect` reads; absent: the repositories the catalogue links "
    "sessions to that exist on this machine.",
    "identity.emails": "Your commit e-mail addresses: `collect` stores only whether a commit's author is you, "
    "never an address, name or hash of one.",
    **{
        f"{h.name}.roots": f"Directories searched (a few levels deep) for projects holding "
        f"{', '.join(f'`{p.path}`' for p in h.layout.projects)}, besides the working directories the catalogue knows."
        for h in HARNESSES
        if h.layout.projects
    },
    "archive.path": "Root directory of the archive `agent-history archive` writes and `rebuild` reads "
    "(default `<data dir>/archive`; AGENT_HISTORY_ARCHIVE overrides).",
    "plans.<agent>": "That agent's plan for `usage blocks --live`: a name (pro, max5, max20, plus, chatgpt-pro; "
    "its token limit is the highest past window's, ccusage's `--token-limit max` rule) or a table of "
    "`plan`, `block_tokens`, `block_cost_usd`, `week_tokens`, `week_cost_usd` (explicit limits win).",
    "host.name": "This machine's name (AGENT_HISTORY_HOST overrides; default the system host name, first label, "
    "lowercased): recorded as each source file's and session's `origin_host`; with it set, or a remote (TCP) DSN, "
    "the default namespaces are `<agent>-<name>` instead of `<agent>-local`. Not a valid namespace part: an error.",
    "index.redact": "Store message and tool text with secret-shaped spans replaced by `[REDACTED]` (default false; "
    "the transcripts are untouched).",
    "index.bulk": "When a pass takes the bulk path (term statistics once at the end, search indexes rebuilt): "
    "`auto` (default: a first index, `rebuild`, or `bulk_min_bytes` of new bytes), `always` or `never`.",
    "index.bulk_min_bytes": 'New transcript bytes from which `bulk = "auto"` takes the bulk path (default 67108864).',
}
"""One line of help per config key (``section.key``; ``section.<placeholder>`` for `FREE_KEYS`
sections): what ``docs/cli.md`` shows. ``tests/test_cli_reference.py`` fails when a key of
`config_keys` has none."""


def config_keys() -> dict[str, tuple[str, ...]]:
    """Every config section and its keys (`KNOWN_KEYS`; `METRICS_KEYS` for ``[metrics]``; the
    placeholder of `FREE_KEYS` for sections whose keys are names), in `KNOWN_KEYS` order."""
    out: dict[str, tuple[str, ...]] = {}
    for section, keys in KNOWN_KEYS.items():
        if section == "metrics":
            out[section] = METRICS_KEYS
        elif keys is None:
            out[section] = (FREE_KEYS[section],)
        else:
            out[section] = keys
    return out


def _check_names(raw: dict[str, Any], path: Path) -> list[str]:
    """Warnings for unknown sections; raises ConfigError for an unknown key in a known section."""
    warnings = []
    for section, value in raw.items():
        if section not in KNOWN_KEYS:
            known = ", ".join(KNOWN_KEYS)
            warnings.append(f"config {path}: unknown section [{section}] ignored (known: {known})")
            continue
        keys = KNOWN_KEYS[section]
        if keys is None or not isinstance(value, dict):
            continue  # free keys, or a wrong type reported by the section's own check
        unknown = [k for k in value if k not in keys]
        if unknown:
            raise ConfigError(f"config {path}: unknown key {section}.{unknown[0]} (known: {', '.join(keys)})")
    return warnings


def _read_toml(path: Path) -> dict[str, Any]:
    if not path.exists():
        if os.environ.get("AGENT_HISTORY_CONFIG"):
            raise ConfigError(f"config file {path} (AGENT_HISTORY_CONFIG) does not exist")
        return {}  # no config file at the default place: defaults
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read config {path}: {exc}") from None


def _table(raw: dict[str, Any], name: str) -> dict[str, Any]:
    value = raw.get(name)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ConfigError(f"config [{name}] must be a table, got {type(value).__name__}")
    return value


def _text(table: dict[str, Any], section: str, key: str) -> str | None:
    value = table.get(key)
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise ConfigError(f"config {section}.{key} must be a string, got {type(value).__name__}")
    return value


def _paths(raw: dict[str, Any], section: str) -> dict[str, Path]:
    out = {}
    for name, path in _table(raw, section).items():
        if not isinstance(path, str):
            raise ConfigError(f"config {section}.{name} must be a path string, got {type(path).__name__}")
        out[str(name)] = Path(path).expanduser()
    return out


def _namespace_paths(raw: dict[str, Any], section: str) -> dict[str, Path]:
    """`_paths` of a section keyed by namespace (``[sources]``, ``[cold_sources]``,
    ``[memories]``). Raises
    ConfigError naming the first key that is no ``<harness>-<profile>`` namespace: a mistake in
    the config is an error of every command that loads it, not of `index` alone."""
    out = _paths(raw, section)
    for name in out:
        try:
            of_namespace(name)
        except ValueError as exc:
            raise ConfigError(f"config [{section}] {exc}") from None
    return out


def _litellm_settings(table: dict[str, Any]) -> tuple[str | None, list[str]]:
    """``[litellm]`` → (dsn, namespaces). Raises ConfigError for a namespace list that is not a
    list of ``claude-…`` names, or a dsn without namespaces (nothing would be filled)."""
    dsn = _text(table, "litellm", "dsn")
    namespaces = table.get("namespaces", [])
    if not isinstance(namespaces, list) or not all(isinstance(n, str) for n in namespaces):
        raise ConfigError("config litellm.namespaces must be a list of namespace strings")
    wrong = [n for n in namespaces if not n.startswith("claude-")]
    if wrong:
        raise ConfigError(f"config litellm.namespaces: {wrong[0]!r} is not a Claude namespace (claude-…)")
    if dsn and not namespaces:
        raise ConfigError("config litellm.dsn is set but litellm.namespaces names no namespace")
    return dsn, list(namespaces)


def load_settings(dsn: str | None = None) -> Settings:
    """Resolve settings: defaults < config file < environment < the `dsn` flag.

    Raises ConfigError for an unreadable or invalid config file, an unknown key in a known
    section, or an `AGENT_HISTORY_CONFIG` naming a missing file; unknown sections become
    `Settings.warnings`. (Whether a context's namespaces have files is the catalogue's to say:
    see `read.common.empty_namespaces`.)
    """
    path = config_path()
    raw = _read_toml(path)
    db = _table(raw, "database")
    s = Settings(raw=raw, warnings=_check_names(raw, path))
    s.dsn = _text(db, "database", "dsn")
    s.reader_dsn = _text(db, "database", "reader_dsn")
    s.reader_password = _text(db, "database", "reader_password")
    s.writer_password = _text(db, "database", "writer_password")
    if "statement_timeout_ms" in db:
        s.statement_timeout_ms = positive_number(
            db["statement_timeout_ms"], "config database.statement_timeout_ms", whole=True
        )
    if "idle_stop_s" in db:
        idle = db["idle_stop_s"]
        if isinstance(idle, bool) or not isinstance(idle, (int, float)) or not 0 <= idle < math.inf:
            raise ConfigError(f"config database.idle_stop_s must be a number of seconds ≥ 0, not {idle!r}")
        s.idle_stop_s = float(idle)
    _host_settings(s, _table(raw, "host"), dsn)
    s.sources.update(_namespace_paths(raw, "sources"))
    s.cold_sources.update(_namespace_paths(raw, "cold_sources"))
    s.memories.update(_namespace_paths(raw, "memories"))
    for h in HARNESSES:
        if h.layout.projects:
            roots = _table(raw, h.name).get("roots", [])
            if not isinstance(roots, list) or not all(isinstance(r, str) for r in roots):
                raise ConfigError(f"config {h.name}.roots must be a list of directory strings")
            s.project_roots[h.name] = [Path(r).expanduser() for r in roots]
    for name, namespaces in _table(raw, "contexts").items():
        if not isinstance(namespaces, list) or not all(isinstance(n, str) for n in namespaces):
            raise ConfigError(f"config contexts.{name} must be a list of namespace strings")
        s.contexts[str(name)] = list(namespaces)
    s.embedding = _embedding_settings(_table(raw, "embedding"))
    s.metrics = _metrics_settings(_table(raw, "metrics"))
    s.journal_source = _text(_table(raw, "journal"), "journal", "source")
    s.journal_source = os.environ.get("AGENT_HISTORY_JOURNAL_SOURCE") or s.journal_source
    s.web_token = os.environ.get("AGENT_HISTORY_WEB_TOKEN") or _text(_table(raw, "web"), "web", "token")
    s.litellm_dsn, s.litellm_namespaces = _litellm_settings(_table(raw, "litellm"))
    s.repo_paths = _string_list(_table(raw, "repos"), "repos", "paths")
    s.identity_emails = _string_list(_table(raw, "identity"), "identity", "emails") or []
    archive = os.environ.get("AGENT_HISTORY_ARCHIVE") or _text(_table(raw, "archive"), "archive", "path")
    s.archive_path = Path(archive).expanduser() if archive else None
    redact = _table(raw, "index").get("redact", False)
    if not isinstance(redact, bool):
        raise ConfigError(f"config index.redact must be true or false, not {redact!r}")
    s.index_redact = redact
    s.plans = _plans(_table(raw, "plans"))
    bulk = _table(raw, "index").get("bulk", "auto")
    if bulk not in ("auto", "always", "never"):
        raise ConfigError(f'config index.bulk must be "auto", "always" or "never", not {bulk!r}')
    s.index_bulk = bulk
    least = _table(raw, "index").get("bulk_min_bytes")
    if least is not None and (isinstance(least, bool) or not isinstance(least, int) or least < 0):
        raise ConfigError(f"config index.bulk_min_bytes must be a whole number of bytes ≥ 0, not {least!r}")
    s.index_bulk_min_bytes = least
    s.query_idle_s = _query_idle_s(_table(raw, "service"))
    s.dsn = os.environ.get("AGENT_HISTORY_DSN") or s.dsn
    s.reader_dsn = os.environ.get("AGENT_HISTORY_READER_DSN") or s.reader_dsn
    s.reader_password = os.environ.get("AGENT_HISTORY_READER_PASSWORD") or s.reader_password
    s.writer_password = os.environ.get("AGENT_HISTORY_WRITER_PASSWORD") or s.writer_password
    if dsn:
        s.dsn = dsn
    return s


def _host_settings(s: Settings, table: dict[str, Any], dsn_flag: str | None) -> None:
    """``[host] name`` / ``$AGENT_HISTORY_HOST`` → `Settings.host`, and the default sources
    under `Settings.profile`. Raises ConfigError for a name that is not a valid namespace part
    (`check_host_name`) — the system's own name too, when it is the one the namespaces would use."""
    env = os.environ.get("AGENT_HISTORY_HOST", "").strip()
    configured = _text(table, "host", "name")
    if env:
        s.host, s.host_configured = check_host_name(env, "AGENT_HISTORY_HOST"), True
    elif configured is not None:
        s.host, s.host_configured = check_host_name(configured, "config host.name"), True
    else:
        name = system_host_name()
        remote = dsn_is_remote(dsn_flag or os.environ.get("AGENT_HISTORY_DSN") or s.dsn)
        if remote:  # the namespaces would carry it: a name that cannot be one is the user's to fix
            check_host_name(name, "the system host name (set [host] name or AGENT_HISTORY_HOST)")
        s.host = default_host()
    dsn = dsn_flag or os.environ.get("AGENT_HISTORY_DSN") or s.dsn
    if s.host and (s.host_configured or dsn_is_remote(dsn)):
        s.sources = default_sources(s.host)


def _plans(table: dict[str, Any]) -> dict[str, Any]:
    """``[plans]`` → {agent: PlanConfig}. Raises ConfigError for an unknown agent or plan name,
    an unknown key, or a limit that is not a positive number."""
    from agent_history.usage.plans import PlanError, parse_plans

    try:
        return parse_plans(table, (h.name for h in HARNESSES))
    except PlanError as exc:
        raise ConfigError(str(exc)) from None


def _query_idle_s(table: dict[str, Any]) -> float:
    """``[service] query_idle_s``, overridden by ``$AGENT_HISTORY_QUERY_IDLE_S``: seconds ≥ 0
    (default 900). Raises ConfigError for anything else."""
    values: list[tuple[str, Any]] = [("config service.query_idle_s", table.get("query_idle_s", 900.0))]
    env = os.environ.get("AGENT_HISTORY_QUERY_IDLE_S", "").strip()
    if env:  # overrides the file, whose value is checked all the same (a mistake there is one)
        try:
            values.append(("AGENT_HISTORY_QUERY_IDLE_S", float(env)))
        except ValueError:
            values.append(("AGENT_HISTORY_QUERY_IDLE_S", env))
    for where, value in values:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < math.inf:
            raise ConfigError(f"{where} must be a number of seconds ≥ 0, not {value!r}")
    return float(values[-1][1])


def _string_list(table: dict, section: str, key: str) -> list[str] | None:
    """`table[key]` as a list of strings (None when absent). Raises ConfigError otherwise."""
    if key not in table:
        return None
    value = table[key]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"config {section}.{key} must be a list of strings")
    return list(value)


RESERVED_CORES = 2
"""Cores the default leaves to the loader's own process (unpickling, folding, encoding COPY
data) and the database server. Measured again on a 2-core machine with the server at ≈ 12 s of
CPU for a ×10 home (issue 27; docs/performance.md, decision 7): client CPU of the whole process
tree 9.95 s in-process, 14.1 s with one worker, 15.5 s with two — workers add 4–5.5 s (rows
pickled across processes, the fork server's imports) where (client + server) / 2 is the floor,
so the default is in-process below 3 cores. On more cores the load is bound by the server's
≈ 12 s, which workers do not shorten (the model in decision 7, not measured on more cores)."""


def parse_workers() -> int:
    """Worker processes for a large pass: ``$AGENT_HISTORY_PARSE_WORKERS`` (0 or 1 = parse
    in-process), default ``os.cpu_count() - RESERVED_CORES`` (in-process on 1–2 cores). Raises
    ConfigError for a value that is not a non-negative integer."""
    value = os.environ.get("AGENT_HISTORY_PARSE_WORKERS")
    if value is None or value.strip() == "":
        return max(0, (os.cpu_count() or 1) - RESERVED_CORES)
    text = value.strip()
    # isdigit() alone accepts "²"; the ASCII check keeps int() from raising on it
    if not (text.isascii() and text.isdigit()):
        raise ConfigError(
            f"AGENT_HISTORY_PARSE_WORKERS={value!r}: expected a whole number of worker processes (0 = none)"
        )
    return int(text)
