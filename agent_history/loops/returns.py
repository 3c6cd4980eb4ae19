"""Lane-return blocks (issue 12, Lanes).

A lane reports with a fenced ```` ```lane-return ```` block holding one JSON object, e.g.
``{"v": 2, "lane": "docs", "status": "complete", "landed": ["task-3"]}``. Every object block is
kept (oldest first); a block that is not a JSON object is skipped and counted. The latest
object's `status` is the lane's when it is one of complete, partial, blocked, failed.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import orjson

from agent_history.loops import rules


@dataclass(slots=True)
class LaneReturns:
    """The object blocks in order, and how many blocks were not JSON objects."""

    returns: list[dict] = field(default_factory=list)
    invalid: int = 0

    @property
    def status(self) -> str | None:
        """The latest block's status when it is a known one, else None."""
        if not self.returns:
            return None
        status = self.returns[-1].get("status")
        return status if status in rules.LANE_RETURN_STATUSES else None


def parse_returns(texts: list[str]) -> LaneReturns:
    """Lane-return blocks in `texts` (a lane's messages in physical order). Never raises."""
    out = LaneReturns()
    for text in texts:
        for m in rules.LANE_RETURN_BLOCK.finditer(text or ""):
            try:
                value = orjson.loads(m["body"].replace("\r\n", "\n"))
            except orjson.JSONDecodeError:
                out.invalid += 1
                continue
            if isinstance(value, dict):
                out.returns.append(value)
            else:
                out.invalid += 1
    return out
