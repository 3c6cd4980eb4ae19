"""Recall ranking rules (pure: no I/O, no database): agent aliases, the blend score, the
context-project boost and distinct-turn diversification (issue 17).

- **Agent names** (`resolve_agent`): a calling agent names itself by product (``claude-code``);
  the catalogue's ``agent`` column holds the harness name (``claude``); the harness registry's
  aliases (`agent_history.harnesses.ALIASES`) map one to the other.
- **Blend** (`blend_score`): ``0.7 × relevance + 0.2 × recency + 0.1 × depth`` where relevance is
  the hit's score min-max normalised over the candidate set (best = 1, worst = 0; a set whose
  scores are all equal gives every hit 1), recency decays linearly from 1 (now) to 0 at
  `RECENCY_HORIZON_DAYS` (365) days old (unknown time: 0), and depth is the session's turn count
  capped at `DEPTH_CAP` (50), divided by 50 (unknown: 0); a turn is a human prompt
  (`postrank.session_turns`).
- **Context project** (`boost_project`): hits whose cwd is the project directory or below have
  their score multiplied by `CONTEXT_BOOST` (1.5) — others stay, ranked after equally relevant
  in-project hits.
- **Diversification** (`diversify`): hits best first, one per turn; then the remaining fragments
  of already-seen turns in their rank order.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from datetime import datetime
from typing import TypeVar

from agent_history.harnesses import resolve_name

T = TypeVar("T")

BLEND_RELEVANCE, BLEND_RECENCY, BLEND_DEPTH = 0.7, 0.2, 0.1
"""Blend weights (issue 17, from continuity v2)."""
RECENCY_HORIZON_DAYS = 365
DEPTH_CAP = 50
CONTEXT_BOOST = 1.5


def resolve_agents(names) -> tuple[str, ...]:
    """`names` (harness or product names) as distinct harness names, in order. Raises ValueError
    (`resolve_agent`) for an unknown one."""
    return tuple(dict.fromkeys(resolve_agent(n) for n in names or ()))


def resolve_agent(name: str) -> str:
    """The harness name for `name` (a harness or product name, case-insensitive).
    Raises ValueError naming the accepted values (`agent_history.harnesses.resolve_name`)."""
    return resolve_name(name)


def normalise(scores: Sequence[float]) -> list[float]:
    """`scores` min-max scaled to [0, 1] (max → 1, min → 0); all equal (or one) → all 1."""
    if not scores:
        return []
    lo, hi = min(scores), max(scores)
    if hi == lo:
        return [1.0] * len(scores)
    return [(s - lo) / (hi - lo) for s in scores]


def recency(ts: datetime | None, now: datetime) -> float:
    """1 at `now`, falling linearly to 0 at `RECENCY_HORIZON_DAYS` days before it; 0 when
    `ts` is unknown; future times count as now (1). Both must be timezone-aware."""
    if ts is None:
        return 0.0
    age_days = (now - ts).total_seconds() / 86_400
    return max(0.0, min(1.0, 1.0 - age_days / RECENCY_HORIZON_DAYS))


def depth(turns: int | None) -> float:
    """A session's turn count capped at `DEPTH_CAP`, / `DEPTH_CAP` (0 when unknown)."""
    if not turns or turns < 0:
        return 0.0
    return min(turns, DEPTH_CAP) / DEPTH_CAP


def blend_score(relevance: float, recency_value: float, depth_value: float) -> float:
    """``0.7 × relevance + 0.2 × recency + 0.1 × depth`` (each in [0, 1]; result in [0, 1])."""
    return BLEND_RELEVANCE * relevance + BLEND_RECENCY * recency_value + BLEND_DEPTH * depth_value


def blend(
    items: Sequence[T],
    score: Callable[[T], float],
    ts: Callable[[T], datetime | None],
    turns: Callable[[T], int | None],
    now: datetime,
) -> list[tuple[T, float]]:
    """`items` re-ranked by `blend_score` (relevance normalised over `items`), best first, as
    ``(item, blend score)``; ties keep the input order."""
    rel = normalise([score(i) for i in items])
    scored = [(i, blend_score(r, recency(ts(i), now), depth(turns(i)))) for i, r in zip(items, rel, strict=True)]
    order = {id(i): n for n, i in enumerate(items)}
    return sorted(scored, key=lambda p: (-p[1], order[id(p[0])]))


def in_project(cwd: str | None, project: str) -> bool:
    """Whether `cwd` is directory `project` or below it."""
    if not cwd:
        return False
    root = project.rstrip("/") or "/"
    return cwd == root or cwd.startswith(root if root.endswith("/") else root + "/")


def boost_project(
    items: Sequence[T], score: Callable[[T], float], cwd: Callable[[T], str | None], project: str
) -> list[tuple[T, float]]:
    """``(item, score)`` best first, in-`project` scores × `CONTEXT_BOOST` (a multiplier, so it
    means the same for BM25, cosine and fused scores); ties keep the input order. Assumes
    non-negative scores (all backends' are)."""
    scored = [(i, score(i) * (CONTEXT_BOOST if in_project(cwd(i), project) else 1.0)) for i in items]
    order = {id(i): n for n, i in enumerate(items)}
    return sorted(scored, key=lambda p: (-p[1], order[id(p[0])]))


def diversify(items: Sequence[T], key: Callable[[T], Hashable]) -> list[T]:
    """`items` (best first) reordered so each distinct `key` (a turn) appears once before any
    key appears twice: first the best item of every key in rank order, then the other items in
    rank order."""
    seen: set[Hashable] = set()
    first: list[T] = []
    rest: list[T] = []
    for item in items:
        k = key(item)
        (rest if k in seen else first).append(item)
        seen.add(k)
    return first + rest
