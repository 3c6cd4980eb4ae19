"""Thread roles and poll share (Python twin of ``ah.efficiency`` / ``ah.refresh_efficiency``)."""

from __future__ import annotations

from collections.abc import Mapping
from decimal import ROUND_HALF_UP, Decimal

from agent_history.classify.rules import POLL_TRIGGERS, TRIGGERS


def thread_role(*, is_subagent: bool, has_children: bool) -> str:
    """``worker`` for a sub-agent thread, ``root`` for a thread that spawned sub-agents (or roots
    a loop: ``has_children`` is true for it too), else ``solo``."""
    if is_subagent:
        return "worker"
    return "root" if has_children else "solo"


def poll_share(counts: Mapping[str, int]) -> Decimal | None:
    """``(wait + status) / classified calls`` rounded half-up to 4 decimals; None when no call is
    classified (never 0). `counts` maps trigger → number of calls; other keys are ignored."""
    classified = sum(counts.get(t, 0) for t in TRIGGERS)
    if classified == 0:
        return None
    polls = sum(counts.get(t, 0) for t in POLL_TRIGGERS)
    return (Decimal(polls) / Decimal(classified)).quantize(Decimal("0.0001"), rounding=ROUND_HALF_UP)
