"""CI runs from GitHub Actions through the `gh` CLI (issue 30): `gh run list --json …`.

`run_list(repo)` runs ``gh run list --limit N --json <RUN_FIELDS>`` in the checkout, bounded by
`TIMEOUT_S`; `CiUnavailable` (one line) says why there is nothing: gh not installed, no GitHub
remote, not authenticated or any other gh failure (its first stderr line), a timeout.
`parse_runs(raw)` is pure: the JSON array gh prints → `CiRun` values; `CiOutputError` when the
output is not that shape (a gh version printing something else).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

RUN_FIELDS: tuple[str, ...] = (
    "databaseId", "workflowName", "event", "headBranch", "headSha", "status", "conclusion", "createdAt",
    "updatedAt", "url",
)  # fmt: skip
"""The `gh run list --json` fields read (gh ≥ 2.x names; `gh run list --help` lists them)."""

TIMEOUT_S = 30
LIMIT = 200
"""Runs asked for per repository and collect run (gh's newest first)."""


class CiUnavailable(Exception):
    """No CI runs can be read here; the message is the one-line reason."""


class CiOutputError(ValueError):
    """gh printed something that is not the expected JSON array of runs."""


@dataclass(frozen=True)
class CiRun:
    """One workflow run."""

    run_id: int
    workflow: str | None
    event: str | None
    branch: str | None
    head_sha: str
    status: str | None
    conclusion: str | None
    created_at: datetime | None
    updated_at: datetime | None
    url: str | None


def _time(value) -> datetime | None:
    if not value:
        return None
    return datetime.fromisoformat(str(value).replace("Z", "+00:00"))


def parse_runs(raw: bytes | str) -> list[CiRun]:
    """`gh run list --json RUN_FIELDS` output → runs. Raises CiOutputError. An empty
    ``conclusion`` (a run still going) is None."""
    try:
        data = json.loads(raw)
    except ValueError as exc:
        raise CiOutputError(f"gh printed no JSON: {exc}") from exc
    if not isinstance(data, list):
        raise CiOutputError("gh printed JSON that is not a list of runs")
    runs = []
    for item in data:
        if not isinstance(item, dict) or not isinstance(item.get("databaseId"), int) or not item.get("headSha"):
            raise CiOutputError(f"a run without databaseId/headSha: {str(item)[:120]}")
        try:
            runs.append(
                CiRun(
                    run_id=item["databaseId"],
                    workflow=item.get("workflowName") or None,
                    event=item.get("event") or None,
                    branch=item.get("headBranch") or None,
                    head_sha=str(item["headSha"]).lower(),
                    status=item.get("status") or None,
                    conclusion=item.get("conclusion") or None,
                    created_at=_time(item.get("createdAt")),
                    updated_at=_time(item.get("updatedAt")),
                    url=item.get("url") or None,
                )
            )
        except ValueError as exc:
            raise CiOutputError(f"run {item.get('databaseId')}: {exc}") from exc
    return runs


def run_list(repo: Path, *, limit: int = LIMIT) -> bytes:
    """stdout of ``gh run list`` in `repo`. Raises CiUnavailable with the reason."""
    gh = shutil.which("gh")
    if gh is None:
        raise CiUnavailable("gh is not installed (not on PATH)")
    env = dict(os.environ, GH_PROMPT_DISABLED="1", GH_NO_UPDATE_NOTIFIER="1", NO_COLOR="1")
    try:
        done = subprocess.run(
            [gh, "run", "list", "--limit", str(limit), "--json", ",".join(RUN_FIELDS)],
            cwd=repo, capture_output=True, timeout=TIMEOUT_S, env=env,
        )  # fmt: skip
    except subprocess.TimeoutExpired as exc:
        raise CiUnavailable(f"gh run list took longer than {TIMEOUT_S} s") from exc
    except OSError as exc:
        raise CiUnavailable(f"gh could not be started: {exc.strerror}") from exc
    if done.returncode != 0:
        first = (done.stderr.decode("utf-8", "replace").strip().splitlines() or ["(no message)"])[0]
        raise CiUnavailable(f"gh run list failed: {first}")
    return done.stdout
