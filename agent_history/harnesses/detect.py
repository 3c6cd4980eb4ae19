"""Which harness wrote a transcript, from its path and first bytes (the rows' `Signature`s and
path hints; pure).

Content wins over the path when it is unambiguous (field case E09: a Claude Code file may start
with bookkeeping lines): every signature of every harness is tried by ascending rank, then the
path hints in registry order.
"""

from __future__ import annotations

import re
from functools import cache

from agent_history.harnesses import HARNESSES
from agent_history.harnesses.spec import Signature


@cache
def _signatures() -> tuple[
    tuple[str, Signature, tuple[re.Pattern[str], ...], tuple[re.Pattern[str], ...], tuple[re.Pattern[str], ...]], ...
]:
    rows = sorted(((s.rank, h.name, s) for h in HARNESSES for s in h.signatures), key=lambda t: t[0])
    return tuple(
        (name, s, tuple(map(re.compile, s.head)), tuple(map(re.compile, s.first)), tuple(map(re.compile, s.absent)))
        for _, name, s in rows
    )


@cache
def _path_hints() -> tuple[tuple[re.Pattern[str], str], ...]:
    return tuple((re.compile(h.path_hint), h.name) for h in HARNESSES if h.path_hint)


def detect_harness(path: str, head: bytes) -> str | None:
    """The harness name of the transcript at `path` whose first bytes are `head` (up to 64 KiB
    is plenty), or None when nothing matches."""
    text = head.decode("utf-8", "replace")
    first = text.split("\n", 1)[0]
    for name, sig, heads, firsts, absents in _signatures():
        if (
            all(rx.search(text) for rx in heads)
            and all(rx.search(first) for rx in firsts)
            and not any(rx.search(text) for rx in absents)
            and (sig.path is None or sig.path in path)
        ):
            return name
    for rx, name in _path_hints():
        if rx.search(path):
            return name
    return None
