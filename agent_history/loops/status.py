"""A loop's status from what the transcripts show (issue 12, Status).

`finished` when a qualified closeout ended the run or the next launch in the same root replaced
it; else `waiting` when the root's last assistant line is ``WAITING: <what> until <UTC time>``
and that time is still ahead of `now`; else `paused` on ``PAUSED: <reason>``; else `running`
when the root was active within 24 hours of `now`, `stale` otherwise (also when its last
activity is unknown). New root activity after the WAITING/PAUSED line replaces that line as the
root's last word, so the loop runs again.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from agent_history.loops import rules


@dataclass(frozen=True, slots=True)
class LoopStatus:
    """The computed status; `waiting_until` only for `waiting`, `ended_at` only for `finished`."""

    status: str
    waiting_until: datetime | None = None
    ended_at: datetime | None = None
    end_evidence: str | None = None


def last_line(text: str | None) -> str | None:
    """The last non-blank line of `text` (stripped), or None."""
    for line in reversed((text or "").replace("\r\n", "\n").split("\n")):
        if line.strip():
            return line.strip()
    return None


def parse_utc(value: str) -> datetime | None:
    """A WAITING line's `<UTC time>` (`rules.UTC_TIME`), or None when it does not parse."""
    m = rules.UTC_TIME.match(value.strip())
    if not m:
        return None
    try:
        return datetime.fromisoformat(f"{m['date']}T{m['hm']}:{m['s'] or '00'}").replace(tzinfo=UTC)
    except ValueError:
        return None


def loop_status(
    *,
    now: datetime,
    closed_at: datetime | None,
    closed_evidence: str | None,
    replaced_at: datetime | None,
    replaced_evidence: str | None,
    last_word: str | None,
    root_last_active_at: datetime | None,
) -> LoopStatus:
    """Status at `now` (timezone-aware). `closed_*`: the qualified closeout's write; `replaced_*`:
    the next launch of the same root; `last_word`: the root's last assistant text when nothing
    came after it in the root (None otherwise); `root_last_active_at`: the root's latest event."""
    if closed_at is not None or closed_evidence is not None:
        return LoopStatus("finished", ended_at=closed_at, end_evidence=closed_evidence)
    if replaced_evidence is not None:
        return LoopStatus("finished", ended_at=replaced_at, end_evidence=replaced_evidence)
    line = last_line(last_word)
    if line:
        waiting = rules.WAITING_LINE.match(line)
        if waiting:
            until = parse_utc(waiting["until"])
            if until is not None and until > now:
                return LoopStatus("waiting", waiting_until=until)
        elif rules.PAUSED_LINE.match(line):
            return LoopStatus("paused")
    if root_last_active_at is not None and now - root_last_active_at < timedelta(hours=rules.STALE_AFTER_HOURS):
        return LoopStatus("running")
    return LoopStatus("stale")
