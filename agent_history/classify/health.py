"""Session health (issue 32; docs/health.md): a grade A–F per session and its reasons, from
measured signals — the rule as data. Pure: ``db.health`` loads these tables into the catalogue
(``ah.health_signal``, ``ah.health_rule``, ``ah.health_grade``) and the view
``ah.session_health`` (``sql/37_health.sql``) applies them, so the CLI, the web pages, MCP and
the dashboards read one grade.

The rule: a session starts at 100 points; for each signal, the highest-points rule whose
threshold the measured value reaches (``value >= threshold``) takes its points off; the score
(never below 0) falls in a grade band (`GRADES`). Each rule met gives one reason. A signal the
harness does not record (its capability, `harnesses.capabilities`, is not in the harness row) is
NULL — shown as "unknown", never graded; a session whose every signal is unknown has no grade.

Prior art: agentsview (github.com/wesm/agentsview, ``internal/db/signals.go``) stores per
session a tool-failure count, tool retries, the longest failure streak, the outcome, compactions
and context pressure beside a health score and grade. Its signal set is what ours follows; the
thresholds and points below are our own, each with its reason (`HealthRule.source`).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class HealthSignal:
    """One measured signal. ``unit``: ``share`` (0–1, shown as a percentage), ``count`` or
    ``flag`` (1 = true); ``capability``: the harness capability it needs (None: every harness
    records what it needs); ``definition``: how ``sql/37_health.sql`` measures it."""

    name: str
    label: str
    unit: str
    capability: str | None
    definition: str


@dataclass(frozen=True, slots=True)
class HealthRule:
    """``points`` off the score when ``signal``'s value is at least ``threshold`` (per signal
    only the highest-points rule met counts); ``source``: why this number."""

    signal: str
    threshold: float
    points: int
    source: str


SIGNALS: tuple[HealthSignal, ...] = (
    HealthSignal(
        "tool_failure_rate",
        "tool failures",
        "share",
        "tool_results",
        "failed tool calls / tool calls with a result (``ah.tool_call.is_error``); NULL with no tool call",
    ),
    HealthSignal(
        "retries",
        "retries of a failing call",
        "count",
        "tool_results",
        "failed tool calls whose next tool call (file order) is the same tool with the same input",
    ),
    HealthSignal(
        "interrupts",
        "interrupts",
        "count",
        "interrupts",
        "interrupt markers (``interrupt_marker`` messages) plus tool calls ended as ``interrupted`` that no marker follows before the next call",
    ),
    HealthSignal(
        "compactions",
        "compactions",
        "count",
        "compactions",
        "context compactions (``ah.compaction`` rows)",
    ),
    HealthSignal(
        "poll_share",
        "poll share",
        "share",
        None,
        "(wait + status) / classified model calls (``ah.efficiency.poll_share``); NULL when no call is classified",
    ),
    HealthSignal(
        "ended_in_error",
        "ended in an error",
        "flag",
        "tool_results",
        "the last tool result or model call (file order) is a failed tool call or an API error notice",
    ),
)

RULES: tuple[HealthRule, ...] = (
    HealthRule(
        "tool_failure_rate", 0.10, 10, "1 call in 10 failing: three times the shared corpus's median session (0.034)"
    ),
    HealthRule("tool_failure_rate", 0.25, 25, "1 in 4 failing: the agent spends much of its work recovering"),
    HealthRule("tool_failure_rate", 0.50, 40, "half the calls failing: the session mostly fought its tools"),
    HealthRule("retries", 1, 5, "one identical call repeated after it failed (agentsview's tool retry signal)"),
    HealthRule("retries", 3, 15, "three or more blind repeats: the agent is not reading the error"),
    HealthRule("interrupts", 1, 5, "the person stopped a turn once"),
    HealthRule("interrupts", 3, 15, "the person stopped the agent three times or more: it kept going wrong"),
    HealthRule("compactions", 1, 5, "the context filled once (agentsview's compaction count)"),
    HealthRule("compactions", 3, 10, "three or more compactions: work outgrew the context window"),
    HealthRule(
        "poll_share", 0.25, 10, "a quarter of the calls only waited or checked status (docs/design.md §11 poll share)"
    ),
    HealthRule("poll_share", 0.50, 20, "most calls were polls: the thread mostly waited"),
    HealthRule("ended_in_error", 1, 20, "the session stopped on an error (agentsview's outcome signal)"),
)

GRADES: tuple[tuple[str, int], ...] = (("A", 90), ("B", 80), ("C", 70), ("D", 60), ("F", 0))
"""(grade, lowest score) best first: the usual ten-point letter-grade bands."""

GRADE_LETTERS: tuple[str, ...] = tuple(g for g, _ in GRADES)


def grade_of(score: int) -> str:
    """The grade of a score (0–100). Raises ValueError for a score outside 0–100."""
    if not 0 <= score <= 100:
        raise ValueError(f"health score {score} is outside 0–100")
    return next(g for g, low in GRADES if score >= low)


def grades_in(spec: str) -> tuple[str, ...]:
    """The grades a filter names: one letter (``F``), a range (``C-F``, either order), or a
    comma list (``A,F``); case-insensitive. Raises ValueError naming what is wrong."""
    out: list[str] = []
    for part in spec.replace(" ", "").upper().split(","):
        ends = part.split("-")
        if not part or len(ends) > 2 or any(e not in GRADE_LETTERS for e in ends):
            raise ValueError(f"health grade {spec!r}: give a letter A–F, a range like C-F, or a list like A,F")
        at = [GRADE_LETTERS.index(e) for e in ends]
        i, j = min(at), max(at)
        out += [g for g in GRADE_LETTERS[i : j + 1] if g not in out]
    return tuple(g for g in GRADE_LETTERS if g in out)


def validate() -> None:
    """Raise ValueError when the tables disagree: a rule for an unknown signal, a threshold given
    twice for one signal, points not rising with the threshold, bands not falling to 0."""
    names = {s.name for s in SIGNALS}
    for s in SIGNALS:
        ladder = sorted((r.threshold, r.points) for r in RULES if r.signal == s.name)
        if not ladder:
            raise ValueError(f"health signal {s.name} has no rule")
        if len({t for t, _ in ladder}) != len(ladder) or [p for _, p in ladder] != sorted({p for _, p in ladder}):
            raise ValueError(f"health rules of {s.name}: one rule per threshold, points rising with it")
    unknown = {r.signal for r in RULES} - names
    if unknown:
        raise ValueError(f"health rules for unknown signals: {sorted(unknown)}")
    lows = [low for _, low in GRADES]
    if lows != sorted(lows, reverse=True) or lows[-1] != 0:
        raise ValueError("health grade bands must fall from best to 0")


def _shown(unit: str, value: float) -> str:
    if unit == "share":
        return f"{value * 100:g}%"
    return "yes" if unit == "flag" else f"{value:g}"


def rules_markdown() -> str:
    """The rule as the Markdown tables of docs/health.md (signals, then rules, then bands); a
    test keeps the document equal to it."""
    by_name = {s.name: s for s in SIGNALS}
    lines = [
        "| signal | unit | needs capability | measured as |",
        "| --- | --- | --- | --- |",
        *(
            f"| `{s.name}` ({s.label}) | {s.unit} | {f'`{s.capability}`' if s.capability else '—'} | {s.definition} |"
            for s in SIGNALS
        ),
        "",
        "| signal | at least | points off | why this number |",
        "| --- | --- | --- | --- |",
        *(f"| `{r.signal}` | {_shown(by_name[r.signal].unit, r.threshold)} | {r.points} | {r.source} |" for r in RULES),
        "",
        "| grade | score at least |",
        "| --- | --- |",
        *(f"| {g} | {low} |" for g, low in GRADES),
    ]
    return "\n".join(lines)
