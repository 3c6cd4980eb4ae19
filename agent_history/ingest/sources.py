"""Resolve which sources a pass indexes from settings and command-line options."""

from __future__ import annotations

from pathlib import Path

from agent_history.config import Settings
from agent_history.ingest.discovery import Source, agent_of_namespace, home_layout


def resolve_sources(settings: Settings, *, home: Path | None = None, extra: list[str] | None = None) -> list[Source]:
    """Sources for a pass: ``--home DIR`` (laid out like ~) replaces the configured homes;
    ``--source NAMESPACE=PATH`` adds one. Raises ValueError for a malformed ``--source``."""
    homes = home_layout(home.expanduser().resolve()) if home else dict(settings.sources)
    for spec in extra or []:
        if "=" not in spec:
            raise ValueError(f"--source must be NAMESPACE=PATH, got {spec!r}")
        name, path = spec.split("=", 1)
        homes[name.strip()] = Path(path).expanduser().resolve()
    out = [Source(name, agent_of_namespace(name), Path(path)) for name, path in homes.items()]
    if not home:  # issue 16: configured memory roots (`[memories]`), each its own namespace
        out += [
            Source(name, agent_of_namespace(name), Path(p), memory_root=True) for name, p in settings.memories.items()
        ]
    return out


def cold_sources(settings: Settings) -> list[Source]:
    """Archive copies (config ``cold_sources``) as cold-tier sources."""
    return [Source(name, agent_of_namespace(name), Path(p), "cold") for name, p in settings.cold_sources.items()]
