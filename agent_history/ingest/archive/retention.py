"""Warnings about harnesses that delete their own transcripts (Claude Code's ``cleanupPeriodDays``).

A harness row may declare a `Retention` (settings file relative to its home, key, default days).
For each configured hot home of such a harness, the setting is read from that home's settings
file: unset (the harness's default applies), not a number, or below `MIN_DAYS` → one warning line
naming the setting, its value and the file. Nothing here changes the agent's settings.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from agent_history.harnesses import BY_NAME
from agent_history.ingest.discovery import Source

MIN_DAYS = 90
"""Below this many days of retention, transcripts go before a quarter's history is archived."""


@dataclass(frozen=True, slots=True)
class RetentionWarning:
    """One home whose harness may delete transcripts sooner than `MIN_DAYS`."""

    namespace: str
    product: str
    key: str
    file: str
    days: int | None
    """The configured value; None when unset (the harness keeps `default_days`)."""
    default_days: int
    file_exists: bool = True
    """False when there is no settings file at all (the line says so rather than name a file as
    if it were there)."""

    def line(self) -> str:
        """The warning as one line."""
        if self.days is None:
            where = f"in {self.file}" if self.file_exists else f"(there is no {self.file})"
            why = f"{self.key} is unset {where} (default {self.default_days} days)"
        else:
            why = f"{self.key} = {self.days} in {self.file}"
        return (
            f"{self.product} ({self.namespace}) deletes transcripts older than its retention: {why}; "
            f"set {self.key} to {MIN_DAYS} or more, and run `agent-history archive` to keep copies"
        )

    def as_dict(self) -> dict:
        """JSON-ready form."""
        return {
            "namespace": self.namespace,
            "product": self.product,
            "setting": self.key,
            "file": self.file,
            "days": self.days,
            "default_days": self.default_days,
            "minimum_days": MIN_DAYS,
        }


def _days(value) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return int(value)


def retention_warnings(sources: list[Source], *, need_file: bool = False) -> list[RetentionWarning]:
    """One warning per existing hot home whose harness's retention is unset or below `MIN_DAYS`
    (a value that is not a number counts as unset); with `need_file` (what `index` asks), only
    for homes whose settings file exists."""
    out = []
    for s in sources:
        row = BY_NAME.get(s.agent)
        if s.tier != "hot" or s.memory_root or row is None or row.retention is None or not s.home.is_dir():
            continue
        rule = row.retention
        path = s.home / rule.file
        if need_file and not path.is_file():
            continue
        days = None
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            days = _days(data.get(rule.key)) if isinstance(data, dict) else None
        except (OSError, ValueError):
            days = None
        if days is None or days < MIN_DAYS:
            out.append(
                RetentionWarning(s.namespace, row.product, rule.key, str(path), days, rule.default_days, path.is_file())
            )
    return out
