"""The README's "files read" globs (`spec.Layout.globs`) tell the truth: every file discovery
finds in a home holding every harness's samples (and in the shared corpus home) matches one of
its harness's globs, and every harness with a home declares some."""

from __future__ import annotations

import collections
import re
from pathlib import Path

from agent_history.config import Settings
from agent_history.harnesses import BY_NAME, HARNESSES
from agent_history.ingest.discovery import iter_files
from agent_history.ingest.sources import resolve_sources
from tests.test_home_all_harnesses import build_home

SHARED_HOME = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "home"


def glob_rx(glob: str) -> re.Pattern[str]:
    """``*`` → any name within one directory, ``**/`` → any number of directories (also none)."""
    out = []
    for part in re.split(r"(\*\*/|\*)", glob):
        out.append({"**/": "(?:[^/]+/)*", "*": "[^/]*"}.get(part, re.escape(part)))
    return re.compile("".join(out) + r"\Z")


def test_glob_rx_reads_globs_as_the_readme_means_them():
    assert glob_rx("projects/**/*.jsonl").match("projects/a.jsonl")
    assert glob_rx("projects/**/*.jsonl").match("projects/-x/s/subagents/agent-1.jsonl")
    assert not glob_rx("tmp/*/chats/*.json").match("tmp/a/b/chats/c.json")
    assert not glob_rx("sessions/*.jsonl").match("sessions/x.jsonl.bak")


def test_every_harness_with_a_home_says_which_files_it_reads():
    missing = [h.name for h in HARNESSES if not h.layout.projects and not h.layout.globs]
    assert missing == []


def test_every_discovered_sample_file_matches_its_harness_globs(own_tmp):
    homes = [build_home(own_tmp)]
    if SHARED_HOME.is_dir():
        homes.append(SHARED_HOME)
    seen: collections.Counter[str] = collections.Counter()
    unmatched = []
    for home in homes:
        for source in resolve_sources(Settings(), home=home):
            layout = BY_NAME[source.agent].layout
            if layout.projects or not source.home.is_dir():
                continue  # files in project directories: the table names them by file name
            rxs = [glob_rx(g) for g in layout.globs]
            for ref in iter_files(source):
                rel = Path(ref.path).relative_to(source.home).as_posix()
                seen[source.agent] += 1
                if not any(rx.match(rel) for rx in rxs):
                    unmatched.append((source.agent, rel))
    assert unmatched == []
    with_homes = {h.name for h in HARNESSES if not h.layout.projects and h.home is not None}
    # every harness with a default home has a sample laid out in it (the test is not vacuous)
    assert sorted(with_homes - set(seen)) == []
    assert sum(seen.values()) > 100
