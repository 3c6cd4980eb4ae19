"""Resolve which sources a pass indexes from settings and command-line options."""

from __future__ import annotations

import os
from pathlib import Path

from agent_history.config import Settings
from agent_history.harnesses import BY_NAME, HARNESSES
from agent_history.ingest.discovery import PROJECT_HOME, Source, agent_of_namespace, home_layout


def resolve_sources(settings: Settings, *, home: Path | None = None, extra: list[str] | None = None) -> list[Source]:
    """Sources for a pass: ``--home DIR`` (laid out like ~) replaces the configured homes;
    ``--source NAMESPACE=PATH`` adds one. A harness that keeps its files in each project (Aider,
    Crush) gets ``<name>-<profile>`` (``-local`` unless `Settings.profile` is the host) searching its ``[<name>] roots`` — or ``DIR`` with ``--home`` —
    (the loader adds the working directories the catalogue knows); a ``--source`` or
    ``[sources]`` path of such a harness is one more root of that namespace. Raises ValueError
    for a malformed ``--source`` (no ``=``, an empty namespace or path)."""
    root = Path(os.path.realpath(home.expanduser())) if home else None
    profile = settings.profile  # `local`, or the host name when indexing into a shared server
    homes = home_layout(root, profile) if root else dict(settings.sources)
    for spec in extra or []:
        if "=" not in spec:
            raise ValueError(f"--source must be NAMESPACE=PATH, got {spec!r}")
        name, path = (part.strip() for part in spec.split("=", 1))
        if not name or not path:  # an empty path would resolve to the working directory
            raise ValueError(f"--source must be NAMESPACE=PATH with both given, got {spec!r}")
        # realpath, not Path.resolve: a symlink loop is then a path that does not exist (said
        # as such by the pass), not a RuntimeError
        homes[name] = Path(os.path.realpath(Path(path).expanduser()))
    projects = {
        f"{h.name}-{profile}": (h.name, (root,) if root else tuple(settings.project_roots.get(h.name, ())))
        for h in HARNESSES
        if h.layout.projects
    }
    out = []
    for name, path in homes.items():
        agent = agent_of_namespace(name)
        if BY_NAME[agent].layout.projects:
            configured = projects.pop(name, (agent, ()))[1]
            out.append(Source(name, agent, PROJECT_HOME, roots=(Path(path), *configured), known_projects=True))
        else:
            out.append(Source(name, agent, Path(path)))
    out += [
        Source(name, agent, PROJECT_HOME, roots=roots, known_projects=True) for name, (agent, roots) in projects.items()
    ]
    if not home:  # issue 16: configured memory roots (`[memories]`), each its own namespace
        out += [
            Source(name, agent_of_namespace(name), Path(p), memory_root=True) for name, p in settings.memories.items()
        ]
    return out


def cold_sources(settings: Settings) -> list[Source]:
    """Archive copies (config ``cold_sources``) as cold-tier sources."""
    return [Source(name, agent_of_namespace(name), Path(p), "cold") for name, p in settings.cold_sources.items()]
