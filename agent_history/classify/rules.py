"""The efficiency classifier's rules, declared as data (docs/design.md §11, issue 11).

Python twin of ``sql/35_efficiency.sql``: every regex here is written in the subset of syntax
that Python ``re`` and PostgreSQL ARE read the same way (no ``\\b``, no lazy quantifiers, no
inline flags), and the SQL file repeats each literal. ``tests/test_efficiency_contract.py``
runs the same inputs through both and expects the same answer.

Triggers (`TRIGGERS`), what last changed an agent's state before a model call:

- ``user``: a human prompt, a queued prompt, a slash command, an interrupt, or (in a
  sub-agent) the brief or a later message from the parent.
- ``model``: the previous model call, with nothing in between (a continuation).
- ``work``: the result of an ordinary tool call.
- ``status``: the result of a status look (git/gh/backlog state, process lists, state and report
  files, agent lists).
- ``wait``: a wait that timed out or only slept.
- ``event``: a wait that delivered something, or an event the harness injected.
- ``noop``: an empty or trivial command.
- ``orchestrate``: spawning or messaging an agent, arming a wake.
- ``agent_msg``: a sub-agent's completion notice arriving in its parent.
"""

from __future__ import annotations

TRIGGERS: tuple[str, ...] = (
    "user",
    "model",
    "work",
    "status",
    "wait",
    "event",
    "noop",
    "orchestrate",
    "agent_msg",
)
"""Every trigger, in report order."""

POLL_TRIGGERS: frozenset[str] = frozenset({"wait", "status"})
"""``poll_share = (wait + status) / classified calls``."""

# -- tool results --------------------------------------------------------------------------
# Per harness: tool name → a fixed trigger, or a rule name applied by `results.eff_result`:
#   "shell"       the command decides (`COMMAND_RULES`)
#   "read_file"   status when the path is a state/report file (`STATE_FILE`), else work
#   "bg_output"   Claude background-output poll: wait while still running, else event
#   "agent_wait"  a wait on agents: wait when it timed out, else event (work if it failed)
#   "stdin_poll"  Codex write_stdin: empty ``chars`` is a poll (wait while running, else event)
#   "pi_subagent" the pi subagent extension: list/status actions are status, else orchestrate
# A tool not in its harness's table is ordinary work.
TOOL_RULES: dict[str, dict[str, str]] = {
    "claude": {
        # Bash / PowerShell run `input.command` in a shell (corpus: 338 Bash calls)
        "Bash": "shell",
        "bash": "shell",
        "PowerShell": "shell",
        # BashOutput (≤ 2.0) / TaskOutput (2.1+) read a background shell's output; the result
        # says <status>running</status> while it has not finished (corpus: 4 BashOutput calls)
        "BashOutput": "bg_output",
        "TaskOutput": "bg_output",
        # Read of a state/report file is a status look
        "Read": "read_file",
        # Task (≤ 2.0) / Agent (2.1+) spawn a sub-agent; SendMessage messages a teammate;
        # ScheduleWakeup arms a wake for /loop (corpus: 2 Task calls)
        "Task": "orchestrate",
        "Agent": "orchestrate",
        "SendMessage": "orchestrate",
        "TeamCreate": "orchestrate",
        "ScheduleWakeup": "orchestrate",
    },
    "codex": {
        # shell-like tools (codex_tools.SHELL_TOOLS): argv list or `cmd` string (corpus: 466 shell)
        "shell": "shell",
        "container.exec": "shell",
        "local_shell": "shell",
        "shell_command": "shell",
        "exec_command": "shell",
        # write_stdin with empty chars polls a running exec session (unified exec, 0.5x+)
        "write_stdin": "stdin_poll",
        # multi-agent tools: wait/wait_agent return {"timed_out": true} when nothing arrived
        "wait": "agent_wait",
        "wait_agent": "agent_wait",
        "spawn_agent": "orchestrate",
        "send_message": "orchestrate",
        "send_input": "orchestrate",
        "resume_agent": "orchestrate",
        "close_agent": "orchestrate",
        "list_agents": "status",
    },
    "pi": {
        # pi's bash tool runs `arguments.command` (corpus: 798 bash calls)
        "bash": "shell",
        "read": "read_file",
        # the pi subagent extension (pi_tools.SUBAGENT_TOOLS): run/start spawn children
        "subagent": "pi_subagent",
    },
}

PI_SUBAGENT_STATUS_ACTIONS: frozenset[str] = frozenset({"list", "status", "get"})
"""pi ``subagent`` actions that only look at children (status); any other action orchestrates."""

SHELL_PROGRAMS: frozenset[str] = frozenset({"bash", "sh", "zsh", "dash", "ksh", "fish"})
"""argv[0] of a Codex ``["bash", "-lc", script]`` wrapper (codex_tools._SHELLS)."""
SHELL_FLAGS: frozenset[str] = frozenset({"-c", "-lc", "-ic", "-lic", "-cl"})
"""argv[1] of that wrapper (codex_tools._SHELL_FLAGS)."""

STATE_FILE = (
    r"(STATE|STATUS|REPORT|PROGRESS|CLOSEOUT|HANDOFF|state|status|report|progress|closeout|handoff)"
    r"[^/ ]*[.](md|json|txt|yaml|yml)$"
)
"""A state or report file a loop root reads to learn where its lanes are (the file name)."""

BG_RUNNING = r"<status>running</status>|<retrieval_status>(timeout|not_ready)</retrieval_status>"
"""Claude BashOutput/TaskOutput result of a background task that has not finished."""
WAIT_TIMED_OUT = r"\"timed_out\" *: *true|[Tt]imed out"
"""Codex wait/wait_agent output when the wait ended without a message."""
STDIN_RUNNING = r"Process running with session ID"
"""Codex unified-exec output while the session is still running."""

# -- shell commands ------------------------------------------------------------------------
# A command is cut into segments at `&&`, `||`, `;`, `&` and newlines (after removing `2>&1`
# style redirections); in each segment only the first command of a pipeline counts (the rest
# filter its output). Leading keywords, subshell brackets and VAR=value prefixes are dropped.
# Each segment gets the first matching class below; the command's trigger is `work` if any
# segment is work, else `wait` if any waits, else `status` if any is a status look, else `noop`.

REDIRECTION = r"[0-9]*>&[0-9-]*|&>>?"
"""Redirections containing `&` (removed before splitting at `&`)."""
SEGMENT_SPLIT = r"&&|[|][|]|;|&|\n"
"""Where a command line is cut into segments."""
SEGMENT_PREFIX = (
    r"^([{(!] *|(do|then|else|elif|time|nohup|command|exec|sudo|env)( +|$)|[A-Za-z_][A-Za-z0-9_]*=[^ ]* +)*"
)
"""What is dropped from a segment's start: keywords, brackets, VAR=value assignments."""
SEGMENT_SUFFIX = r" *[)}]+$"
"""What is dropped from a segment's end: closing brackets of a subshell or group."""

COMMAND_RULES: tuple[tuple[str, str], ...] = (
    # navigation and shell syntax carry no meaning of their own
    ("neutral", r"^$|^[})]+$|^(cd|pushd|popd|done|fi|esac|set|export|source|local|shopt)( |$)"),
    # `sleep N`, `until …; do …; done` loops, `while true`, `gh run watch`, `gh pr checks
    # --watch`, the shell's `wait`: the command only waits (issue 11)
    (
        "wait",
        r"^sleep( |$)|^until( |$)|^while +(true|:)( |$)|^gh +run +watch( |$)|^gh +pr +checks .*--watch|^wait( |$)",
    ),
    # git state (`git status|log|fetch|rev-parse`), CI and PR state (`gh run|pr
    # view|list|checks|status`), the backlog CLI (`backlog task list|view`), process lists
    # (`ps`, `pgrep`), and reading (not writing: no `>`) a state/report file (issue 11)
    (
        "status",
        r"^git +(-C +[^ ]+ +)?(status|log|fetch|rev-parse)( |$)"
        r"|^gh +(run|pr) +(view|list|checks|status)( |$)"
        r"|^backlog +task +(list|view)( |$)"
        r"|^(ps|pgrep)( |$)"
        r"|^(cat|head|tail|less|jq) [^>]*(STATE|STATUS|REPORT|PROGRESS|CLOSEOUT|HANDOFF|state|status|report|progress"
        r"|closeout|handoff)[^/ ]*[.](md|json|txt|yaml|yml)( |$|[\"'])",
    ),
    # `true`, `:`, `pwd`, `date`, `clear`, `exit 0`, an echo/printf that writes nothing to a file
    ("noop", r"^(true|:|pwd|date|clear|exit|exit +0)$|^(echo|printf)( [^>]*)?$"),
)
"""(segment class, regex) — first match wins; no match ⇒ ``work``."""

# -- messages ------------------------------------------------------------------------------
# A message is an event when its class says so, unless its role is in `NON_EVENT_ROLES`.
NON_EVENT_ROLES: frozenset[str] = frozenset({"tool", "assistant"})
"""Roles whose messages are never events of their own: ``tool`` (a synchronous sub-agent's
report inside a tool result — the tool result is the event) and ``assistant`` (the model's own
output, e.g. the brief pi records in the parent when its subagent tool runs, is part of its call)."""
MESSAGE_CLASS_TRIGGERS: dict[str, str] = {
    "human_prompt": "user",  # what a person typed
    "queued_prompt": "user",  # typed while the agent worked (Claude queued_command)
    "command_expansion": "user",  # a slash command or `!cmd` the person ran
    "interrupt_marker": "user",  # the person pressed Esc; the next call follows them
    "subagent_brief": "user",  # a sub-agent's first message: the parent's brief
    "subagent_report": "agent_msg",  # Claude async <task-notification> with <result>
}
"""Message class → trigger (classes from `agent_history.model.classes`)."""

AGENT_MESSAGE_IN_WORKER = "user"
"""``agent_message`` in a sub-agent: the parent wrote to it (Claude SendMessage, Codex send_input)."""
AGENT_MESSAGE_IN_ROOT = "agent_msg"
"""``agent_message`` elsewhere: a sub-agent's notice (Codex <subagent_notification>, Claude
<teammate-message>)."""
HARNESS_ORIGIN = r"notification"
"""Claude ``origin.kind`` of a user record the harness injected (``task-notification``) → event."""
TASK_NOTIFICATION = r"^\s*<task-notification>"
"""Claude background-task notification text (context_injection / system_reminder) → event."""
PI_WAKE_ORIGIN = r"loop|watch|wake"
"""pi ``custom_message.customType`` of a loop-watch / wake extension message → event."""
