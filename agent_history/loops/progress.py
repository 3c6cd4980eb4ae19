"""Where a loop's progress columns come from: the precedence, as data (issue 30).

Each column takes the first source in its `PRECEDENCE` row that has a value (not None):

- ``landed``: the qualified closeout's ``## Landed`` list → the loop state log's landed tasks in
  the run's window → distinct ``Task:`` trailer ids of commits that reached the default branch
  in the window → distinct tasks whose Backlog.md status flipped to Done on the default branch in
  the window.
- ``parked``: the closeout's ``## Parked`` list → the state log's parked tasks (trailers and Done
  flips say nothing about parking).
- ``commits`` / ``pushes``: the collected repository (commits committed, pushes recorded, in the
  window) → the transcripts' git events.

A source that attributes nothing gives None, not 0 (no trailer in a window does not prove
nothing landed), so a column is NULL when no source knows it.
"""

from __future__ import annotations

PRECEDENCE: dict[str, tuple[str, ...]] = {
    "landed": ("closeout", "state_log", "task_trailers", "done_flips"),
    "parked": ("closeout", "state_log"),
    "commits": ("repository", "transcripts"),
    "pushes": ("repository", "transcripts"),
}


def choose(candidates: dict[str, dict[str, int | None]]) -> tuple[dict[str, int | None], dict[str, str]]:
    """`candidates` maps a source name to the column values it gives. Returns (column → value,
    column → the source it came from) for the columns of `PRECEDENCE`; a column no source knows
    is None and has no source entry."""
    values: dict[str, int | None] = {}
    sources: dict[str, str] = {}
    for column, order in PRECEDENCE.items():
        values[column] = None
        for source in order:
            value = candidates.get(source, {}).get(column)
            if value is not None:
                values[column], sources[column] = value, source
                break
    return values, sources
