"""A home of real transcripts plus one bad file made from another real transcript: the inputs of
the bad-record tests (`test_bad_record_isolation`, `test_bad_record_property`). The GOOD files and
the bad file's base share no session, so nothing in the bad file can merge into a good file's rows."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from agent_history.model.merge import fold
from agent_history.model.rows import MessageRow
from agent_history.parsers import detect_agent, parser_class
from agent_history.parsers.base import ParseContext
from agent_history.parsers.driver import parse_bytes

GOOD = (
    ".claude/projects/-Users-user4-proj/c097049f-347e-4312-8542-ed2489378a8b.jsonl",
    ".claude/projects/-src-experiments-claude_p/94604a7b-062f-4369-bdf0-da948381c3e5.jsonl",
    ".claude/projects/-Users-user1-workspace-example-site-dev-next/5ed31c36-bca8-40fd-8d24-f1a1f0af7901.jsonl",
    ".codex/sessions/2025/12/28/rollout-2025-12-28T12-18-30-019b64e5-57fa-7463-b644-fba7e456f905.jsonl",
    ".pi/agent/sessions/--tmp-as-agent-fixture-project--/2026-05-12T01-02-27-657Z_019e19b4-eb48-746a-aa6b-8dfcfa37954b.jsonl",
)
"""Real transcripts of three harnesses, none linked to the bad file's session."""
BAD_BASE = ".claude/projects/-Users-user9-work-app/67a8478e-78dc-44ab-82ea-f65c8ead85f6.jsonl"
"""The real Claude Code transcript the bad file is made from (usage, a tool call, request ids)."""
BAD = ".claude/projects/-Users-bad-proj/0badf11e-0000-4000-8000-000000000000.jsonl"
HUGE = 300_000


def base_records(corpus_home: Path) -> list[dict]:
    return [json.loads(line) for line in (corpus_home / BAD_BASE).read_text().splitlines() if line.strip()]


def make_home(corpus_home: Path, root: Path, bad_lines: list[str] | None) -> Path:
    """The GOOD files (and the bad file, from `bad_lines`) laid out as a home under `root`."""
    for rel in GOOD:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(corpus_home / rel, root / rel)
    if bad_lines is not None:
        (root / BAD).parent.mkdir(parents=True, exist_ok=True)
        (root / BAD).write_text("".join(line + "\n" for line in bad_lines))
    return root


def offsets(lines: list[str]) -> list[int]:
    out, at = [], 0
    for line in lines:
        out.append(at)
        at += len(line.encode()) + 1
    return out


def good_message_uids(home: Path) -> set[str]:
    """Message uids the GOOD files hold, parsed without a database."""
    uids: set[str] = set()
    for rel in GOOD:
        data = (home / rel).read_bytes()
        rows = parse_bytes(parser_class(detect_agent(rel, data[:65536])), ParseContext(path=str(home / rel)), data)
        uids |= {k[1] for k in fold(rows).get(MessageRow, {})}
    return uids


AGENT_HOMES = (".pi/agent/", ".claude/", ".codex/", ".gemini/", ".local/share/opencode/")


def rel_of(path: str) -> str:
    """A home-relative path (``.claude/projects/x.jsonl``) as ``ah.source_file.rel_path`` stores
    it: relative to its agent home (``projects/x.jsonl``)."""
    for home in AGENT_HOMES:
        if path.startswith(home):
            return path[len(home) :]
    raise ValueError(f"{path} is under no agent home")
