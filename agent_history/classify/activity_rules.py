"""The rules of the ``agent_efficiency_*`` families, declared as data (issue 32).

Python twin of ``sql/36_agent_efficiency.sql``: every regex is written in the syntax Python
``re`` and PostgreSQL ARE read the same way (no ``\\b``, no lazy quantifiers, no inline flags) and
the SQL file repeats each literal; ``tests/test_efficiency_contract.py`` runs both on the same
threads. Regexes over commands are searched in the shell text of a shell tool call
(`commands.command_text`, rule ``shell`` of `rules.TOOL_RULES`), anchored at the start of the
text or after a separator (`CMD_START`) so ``echo pytest`` is not a test run.

Thread states (`STATES`): a thread's events (model calls, tool results, messages with a trigger:
the classifier's sequence, ordered by position, `classify.attribute`) with a known time split
its life into intervals; each interval takes the state named by the event that ends it
(`CALL_STATE`, `RESULT_STATES`, `MESSAGE_STATES`), and an interval longer than `IDLE_AFTER_S`
is ``idle`` whatever ends it. A time going backwards counts 0 s.
"""

from __future__ import annotations

STATES: tuple[str, ...] = ("working", "waiting_tool", "waiting_subagent", "polling", "idle", "waiting_human")
"""Thread states, in report order."""

IDLE_AFTER_S = 1800.0
"""An interval longer than this (seconds) is ``idle``: nobody, human or machine, was busy."""

CALL_STATE = "working"
"""An interval that ends in a model call: the model was producing it."""

RESULT_STATES: dict[str, str] = {
    "work": "waiting_tool",
    "noop": "waiting_tool",
    "event": "waiting_tool",
    "status": "polling",
    "wait": "polling",
    "orchestrate": "waiting_subagent",
}
"""Tool result trigger → the state of the interval it ends (a synchronous sub-agent's result is
``orchestrate``)."""

SUBAGENT_TOOL_RULES: frozenset[str] = frozenset({"agent_wait", "pi_subagent", "orchestrate"})
"""Tool rules (`rules.TOOL_RULES`) whose delivered result (``event``/``orchestrate``) ends a wait
on a sub-agent: ``waiting_subagent`` instead of the `RESULT_STATES` entry (a timed-out one is
``polling``)."""

MESSAGE_STATES: dict[str, str] = {"user": "waiting_human", "agent_msg": "waiting_subagent", "event": "waiting_tool"}
"""Message trigger → the state of the interval it ends."""

# -- waits and polls -------------------------------------------------------------------------
WAIT_OUTCOMES: dict[str, str] = {"wait": "timed_out", "event": "delivered"}
"""A tool result whose trigger is ``wait`` is a wait that timed out (or only slept); ``event`` is
a wait that delivered. A result whose trigger is ``status`` is a poll."""

# -- commands --------------------------------------------------------------------------------
CMD_START = r"(^|[;&|(\n] *)"
"""Where a command may start inside the shell text."""
CMD_END = r"( |$|[;&|)\n])"
"""What may follow a command's name."""
CMD_WRAPPER = r"((uv|poetry|pdm|hatch|rye) +run +|python3? +-m +|npx +|bunx +|[.]venv/bin/)?"
"""Runners in front of a gate's program."""
HEREDOC = "<<"
"""Only the text before the first here-document operator is searched: a heredoc's body is data
(a patch or a file being written), not commands (corpus: an ``applypatch <<`` body holding
``"build": "vite build && tsc …"``)."""

GATE_RULES: tuple[tuple[str, str], ...] = (
    (
        "test",
        r"(pytest|py[.]test|tox|nox|jest|vitest|mocha|unittest|(cargo|go|deno|bun|dotnet|mix) +test"
        r"|(npm|pnpm|yarn)( +run)? +test|(just|make) +test)",
    ),
    (
        "lint",
        r"(ruff +(check|format +--check)|flake8|pylint|eslint|biome +(check|lint)|golangci-lint|shellcheck"
        r"|prettier +--check|cargo +(clippy|fmt +--check)|(npm|pnpm|yarn)( +run)? +lint|(just|make) +lint"
        r"|yamllint|hadolint|promtool +(check|test))",
    ),
    (
        "typecheck",
        r"(mypy|pyright|basedpyright|tsc|cargo +check|(npm|pnpm|yarn)( +run)? +(typecheck|type-check)"
        r"|(just|make) +(typecheck|types))",
    ),
    (
        "build",
        r"(cargo +build|go +build|(npm|pnpm|yarn)( +run)? +build|(just|make) +build|make|docker +build"
        r"|docker +compose +build|python3? +-m +build|uv +build|gradle +build|mvn +(package|install)|bazel +build)",
    ),
)
"""(gate, program regex): a shell tool call is a run of the first gate whose program appears at a
command start (`CMD_START` + `CMD_WRAPPER` + program + `CMD_END`)."""

GATES: tuple[str, ...] = tuple(g for g, _ in GATE_RULES)
GATE_RESULTS: tuple[str, ...] = ("pass", "fail", "unknown")
"""From the tool result: ``fail`` when it is an error or exited non-zero, ``pass`` when it is
known not to be an error or exited 0, else ``unknown``."""

PUSH = r"git +(-C +[^ ]+ +)?push"
"""A push (program regex; the call must not be an error)."""
CI_LOOK = r"gh +(run +(view|watch|list)|pr +(checks|view|status))"
"""A look at CI state (program regex)."""
CI_FINISHED = r"completed|success|failure|cancelled|✓|✗|\tpass\t|\tfail\t"
"""A CI look's output that saw a run finish."""
# A CI wait: from a push's result to the first later CI look (same thread, before the next push)
# whose output saw a run finish; seconds between the two results' times.

REVIEW_RULES: tuple[tuple[str, str, str | None], ...] = (
    ("requested", r"gh +pr +(create|ready)|gh +pr +edit +[^\n]*--add-reviewer", None),
    ("approved", r"gh +pr +review +[^\n]*(--approve|-a)", None),
    ("changes_requested", r"gh +pr +review +[^\n]*(--request-changes|-r)", None),
    ("commented", r"gh +pr +review +[^\n]*(--comment|-c)", None),
    ("approved", r"gh +pr +(view|status)", r"APPROVED"),
    ("changes_requested", r"gh +pr +(view|status)", r"CHANGES_REQUESTED"),
)
"""(review event, program regex, output regex or None): the first rule that matches a shell call
that is not an error. ``requested``: the agent asked for a review (opened or readied a pull
request, added a reviewer); the others are outcomes the transcript shows (a review the agent
gave, or a decision a look at the pull request printed)."""
REVIEW_EVENTS: tuple[str, ...] = ("requested", "approved", "changes_requested", "commented")

# -- spawns ----------------------------------------------------------------------------------
ROUTES: tuple[str, ...] = ("sub_agent", "background_shell", "exec_lane", "wake")
SPAWN_TOOLS: dict[str, dict[str, str]] = {
    "claude": {"Task": "sub_agent", "Agent": "sub_agent", "ScheduleWakeup": "wake"},
    "codex": {"spawn_agent": "sub_agent"},
    "pi": {"subagent": "sub_agent"},
}
"""Per harness: tool → route (pi ``subagent`` only for actions outside
`rules.PI_SUBAGENT_STATUS_ACTIONS`)."""
EXEC_LANE = r"(codex +exec|claude +(-p|--print))"
"""A shell call that starts another agent non-interactively (program regex): route ``exec_lane``."""
BACKGROUND_KEY = "run_in_background"
"""A shell call whose input has this key true (Claude Bash) starts a ``background_shell``."""

# -- human interventions -------------------------------------------------------------------
INTERVENTIONS: tuple[str, ...] = ("interrupt", "denial", "correction", "queued_prompt")
INTERVENTION_MESSAGES: dict[str, str] = {"interrupt_marker": "interrupt", "queued_prompt": "queued_prompt"}
"""Message class → intervention."""
DENIAL_CLASS = "denied"
"""A tool call with this error class (docs/design.md §6) is a denial."""
CORRECTION_CLASS = "human_prompt"
"""A message of this class whose latest earlier tool result in the thread failed (``is_error``),
with no user-triggered message in between, is a correction."""
