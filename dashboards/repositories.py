"""The operations dashboard's `collect` section (issue 30): is the repository collector running,
does it read every repository, and what do the collected tables hold (the ``run="collect"`` pass
families and the ``ah_repo_*`` families of `agent_history.telemetry.families`).

Kept in its own module so the dashboards around it can change; the catalogue dashboard's Tasks,
CI waits and Git tabs show the collected rows themselves (SQL).
"""

from __future__ import annotations

from dashboards.sdk import PromPanel


def repository_metric_panels() -> tuple[PromPanel, ...]:
    """Panels of the collected tables' families, added to the `collect` run section."""
    return (
        PromPanel(
            "Collected repositories, commits, tasks and CI runs",
            "timeseries",
            (
                ('ah_repo_repositories{repo_state="collected"}', "repositories"),
                ('ah_repo_repositories{repo_state="gone"}', "repositories gone"),
                ("sum(ah_repo_commits)", "commits"),
                ('ah_repo_commits{author="me"}', "commits by you"),
                ("ah_repo_backlog_tasks", "Backlog tasks"),
            ),
            "What the collector's tables hold: repositories (and those gone, rows kept), commits (by you: "
            "[identity] emails), Backlog tasks.",
            width=12,
        ),
        PromPanel(
            "CI runs by conclusion and collect issues",
            "timeseries",
            (
                ("ah_repo_ci_runs", "CI {{ci_conclusion}}"),
                ("ah_repo_collect_issues", "issue {{collect_issue_kind}}"),
            ),
            "GitHub Actions runs read with gh by conclusion (running: none yet); what `collect` could not read "
            "(bad task files, shallow clones, unreadable settings, paths that are not repositories).",
            width=12,
        ),
    )
