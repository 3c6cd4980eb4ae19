"""`usage` and `pricing`: token and list-price cost reports (thin: parse the options into a
`read.requests.UsageRequest`, answer it with `read.usage.usage_report`, render)."""

from __future__ import annotations

import re
from datetime import UTC, datetime, tzinfo

import typer
from rich.table import Table

from agent_history.cli import options
from agent_history.cli.app import app
from agent_history.cli.context import database
from agent_history.cli.options import _agents, _ask, _check_filter_values, _found, _namespaces, _when
from agent_history.cli.output import console, count, fail, print_json, print_warning
from agent_history.cli.tables import Record, compact_table, fits, print_records, print_table_or_records
from agent_history.read.requests import USAGE_BY, usage_request
from agent_history.usage.report import PARTIAL_FIELDS, VIEW_KEY

REFRESH_RANGE = (1.0, 60.0)
"""`usage blocks --live --refresh`: seconds between refreshes, ccusage's live range
(MIN/MAX_REFRESH_INTERVAL_SECONDS)."""

BY = USAGE_BY
"""Groupings that replace the period view (`read.requests.USAGE_BY`)."""


def _int(v) -> str:
    return "-" if v is None else f"{v:,}"


PARTIAL_MARK = "≥"
"""Marks a sum over the known counts when some call's count is unknown (`<field>Partial`)."""


def _tok(row: dict, field: str) -> str:
    """A token field of a report row: ``-`` unknown, ``≥N`` a lower bound (some counts unknown)."""
    v = row[field]
    return f"{PARTIAL_MARK}{v:,}" if v is not None and row.get(field + "Partial") else _int(v)


def _usd(v, partial: bool = False) -> str:
    return "unpriced" if v is None else f"{PARTIAL_MARK if partial else ''}${v:,.2f}"


def _cost(row: dict) -> str:
    """A row's cost: the whole, or ``≥$N`` — the priced calls' sum when some calls are unpriced
    (or a count was out of range); ``unpriced`` when no call is priced."""
    if row["totalCost"] is None:
        return _usd(row["pricedCost"], partial=True)
    return _usd(row["totalCost"], row["totalCostPartial"])


def _to_second(iso: str) -> str:
    """An ISO time without its fraction of a second (a gap starts at its last call + the window
    length, microseconds included; the JSON keeps them, the table shows whole seconds)."""
    return re.sub(r"\.\d+(?=Z$|[+-]\d\d:\d\d$)", "", iso)


def _render(view: str, report: dict, key: str) -> None:
    rows = report[key]
    if view == "blocks":
        headers = ("block start", "state", "calls", "total tokens", "cost", "burn tok/min", "$/h", "models")
        cells = []
        for b in rows:
            if b["isGap"]:
                cells.append((_to_second(b["startTime"]), "gap", "", "", "", "", "", ""))
                continue
            rate = b["burnRate"] or {}
            cells.append(
                (
                    b["startTime"],
                    "ACTIVE" if b["isActive"] else "",
                    str(b["entries"]),
                    _tok(b, "totalTokens"),
                    _usd(b["pricedCost"], partial=True)
                    if b["costUSD"] is None
                    else _usd(b["costUSD"], b.get("costUSDPartial", False)),
                    "-" if not rate else f"{rate['tokensPerMinute']:,.0f}",
                    "-" if not rate or rate["costPerHour"] is None else f"{rate['costPerHour']:,.2f}",
                    ", ".join(b["models"]),
                )
            )
    else:
        headers = (
            view if view in (*BY, "session") else "period",
            "input",
            "output",
            "cache create",
            "cache read",
            "total tokens",
            "cost",
            "models",
        )
        cells = [
            (
                r["period"],
                _tok(r, "inputTokens"),
                _tok(r, "outputTokens"),
                _tok(r, "cacheCreationTokens"),
                _tok(r, "cacheReadTokens"),
                _tok(r, "totalTokens"),
                _cost(r),
                ", ".join(r["modelsUsed"]),
            )
            for r in rows
        ]
    t = report["totals"]
    total = (
        "total",
        *(
            ("", str(t["calls"]), _tok(t, "totalTokens"), _cost(t), "", "", "")
            if view == "blocks"
            else (
                _tok(t, "inputTokens"),
                _tok(t, "outputTokens"),
                _tok(t, "cacheCreationTokens"),
                _tok(t, "cacheReadTokens"),
                _tok(t, "totalTokens"),
                _cost(t),
                "",
            )
        ),
    )
    rows_out = (*cells, total)
    if view == "model":  # each row is one model: a models column would repeat its name
        headers, rows_out = headers[:-1], tuple(c[:-1] for c in rows_out)
    table: Table = compact_table(*headers)
    for c in rows_out:
        table.add_row(*c)
    if fits(console, table):
        console.print(table)
    elif view == "model":
        print_records(console, headers, [Record(c) for c in rows_out])
    else:
        print_records(console, headers[:-1], [Record(c[:-1], lines=(c[-1],) if c[-1] else ()) for c in rows_out])
    if t["unpricedModels"]:
        priced = "" if t["pricedCost"] is None else f"; the priced calls cost ${t['pricedCost']:,.2f}"
        console.print(
            f"{count(t['unpricedCalls'], 'call')} unpriced (cost unknown, never 0): "
            f"{', '.join(t['unpricedModels'])}{priced}",
            highlight=False,
        )
    if t["callsWithUnknownUsage"]:
        console.print(f"{count(t['callsWithUnknownUsage'], 'call')} with unknown token counts", highlight=False)
    if t.get("callsWithOutOfRangeTokens"):
        console.print(
            f"{count(t['callsWithOutOfRangeTokens'], 'call')} wrote a token count out of range (stored unknown, "
            "see `agent-history issues`): totals including them are lower bounds",
            highlight=False,
        )
    if any(t.get(f + "Partial") for f in PARTIAL_FIELDS) or any(
        r.get(f + "Partial") for r in rows for f in PARTIAL_FIELDS
    ):
        console.print(f"{PARTIAL_MARK}: a lower bound — some calls did not record that count", highlight=False)


@app.command("usage")
def usage_cmd(
    view: str = typer.Argument(None, help="daily (default) | weekly | monthly | session | blocks."),
    since: str = typer.Option(None, "--since", help="From this day (YYYY-MM-DD or YYYYMMDD, in --timezone) or 7d …"),
    until: str = typer.Option(None, "--until", help="Up to and including this day, or a timestamp."),
    agent: list[str] = typer.Option(None, "--agent", "-a", help="Only this harness; repeatable."),
    namespace: list[str] = typer.Option(None, "--namespace", "-N", help="Only this namespace; repeatable."),
    context: list[str] = typer.Option(None, "--context", "-c", help="A named context; repeatable."),
    project: str = typer.Option(
        None,
        "--project",
        callback=options.no_empty_directory,
        help="Only sessions whose working directory contains this.",
    ),
    model: str = typer.Option(None, "--model", help="Only models whose id contains this."),
    breakdown: bool = typer.Option(False, "--breakdown", help="Per-model rows under each period (table)."),
    by: str = typer.Option(
        None, "--by", help="Group by loop, repo, project, branch, host, model or agent instead of a period."
    ),
    timezone: str = typer.Option(None, "--timezone", "-z", help="IANA zone for periods (default: the machine's)."),
    window: str = typer.Option(
        "block", "--window", help="blocks: block (5-hour billing blocks) or week (7-day plan windows)."
    ),
    live: bool = typer.Option(
        False,
        "--live",
        help="blocks: a refreshing view of each agent's active block and week against its [plans] limits "
        "(burn rate, projection, time left, % of the plan) until Ctrl-C; with --json one snapshot.",
    ),
    refresh: float = typer.Option(5.0, "--refresh", help="--live: seconds between refreshes (1-60)."),
    now: str = typer.Option(None, "--now", hidden=True, help="The clock for the active block (ISO time; tests)."),
    json: bool = typer.Option(False, "--json", help="Print JSON (ccusage's field names)."),
) -> None:
    """Tokens by bucket and list-price cost per day, week, month, session or 5-hour billing block
    (or per loop, repo, project, branch, host, model or agent with --by), with per-model
    breakdowns and totals. Costs of models with no
    list price are unknown (null), and the models are named."""
    from agent_history.read.usage import usage_report

    if live and (by is not None or view not in (None, "blocks")):
        fail("--live goes with the blocks view", 2)
    if live and not REFRESH_RANGE[0] <= refresh <= REFRESH_RANGE[1]:
        fail(f"--refresh: {refresh:g} is not between {REFRESH_RANGE[0]:g} and {REFRESH_RANGE[1]:g} seconds", 2)
    db = database()
    req = _ask(
        usage_request,
        {
            "view": view or ("blocks" if live else None),
            "by": by,
            "since": since,
            "until": until,
            "agents": agent,
            "namespaces": list(_namespaces(namespace, context, db.settings.contexts)),
            "project": project,
            "model": model,
            "timezone": timezone,
            "window": window,
        },
    )
    view = req.view
    clock = _when(now, "--now") or datetime.now(UTC)
    if live:
        _live(agent, req.timezone, now, refresh, json)
        return
    with db.connect() as conn:
        _check_filter_values(conn, namespace)
        report = usage_report(conn, req, clock)
    key = VIEW_KEY[view]
    if json:  # the same exit code as the table: 1 when nothing matched
        print_json(report)
        _found(bool(report[key]))
        return
    note = _unrecorded_note(report["sessionsWithoutUsage"])
    pending = _pending_warning(report["sessionsPendingIndex"])
    if pending:
        print_warning(pending)
    if not report[key]:
        fail("no model calls match" + (f" in any {view}" if view in BY else "") + (f"; {note}" if note else ""), 1)
    _render(view, report, key)
    if note:
        console.print(f"not counted: {note}", highlight=False)
    elsewhere = _elsewhere_note(report["sessionsWithCallsElsewhere"])
    if elsewhere:
        console.print(elsewhere, highlight=False)
    if report.get("hostUnknown"):
        console.print(f"host: unknown — {report['hostUnknown']}", highlight=False)
    if breakdown and view != "blocks":
        for r in report[key]:
            for m in r.get("modelBreakdowns", []):
                console.print(
                    f"  {r['period']}  {m['modelName'] or '(unknown model)'}: "
                    f"in {_int(m['inputTokens'])}, out {_int(m['outputTokens'])}, "
                    f"cache create {_int(m['cacheCreationTokens'])}, cache read {_int(m['cacheReadTokens'])}, "
                    f"{_usd(m['cost'])}",
                    highlight=False,
                )


def _unrecorded_note(unrecorded: dict[str, int]) -> str:
    """``model calls unknown in 2 sessions whose transcripts record no usage (codex 2)``, or ""."""
    if not unrecorded:
        return ""
    n = sum(unrecorded.values())
    per = ", ".join(f"{agent} {k:,}" for agent, k in unrecorded.items())
    return f"model calls unknown in {count(n, 'session')} whose transcripts record no usage ({per})"


def _pending_warning(pending: dict[str, int]) -> str:
    """``2 sessions (claude 2) wait for the end of an index pass …``, or "": their model names are
    not priced and their totals not rolled up until a pass completes (`read.usage.session_counts`)."""
    if not pending:
        return ""
    n = sum(pending.values())
    per = ", ".join(f"{agent} {k:,}" for agent, k in pending.items())
    return (
        f"{count(n, 'session')} ({per}) wait for the end of an index pass (running, or interrupted): "
        "until it completes their models may show as unpriced and their totals as unknown — "
        "run `agent-history index`"
    )


def _elsewhere_note(elsewhere: dict[str, int]) -> str:
    """``counted elsewhere: the model calls of 1 session are copies another session owns …``, or ""."""
    if not elsewhere:
        return ""
    n = sum(elsewhere.values())
    per = ", ".join(f"{agent} {k:,}" for agent, k in elsewhere.items())
    return (
        f"counted elsewhere: the model calls of {count(n, 'session')} ({per}) are copies another session "
        "owns, counted there once (a copied transcript; `agent-history session <uid>` names it)"
    )


def _live(agent: list[str] | None, tz: tzinfo, now: str | None, refresh: float, json: bool) -> None:
    """`usage blocks --live`: one snapshot (`--json`) or the refreshing view (`cli.usage_live`)."""
    from agent_history.cli.usage_live import run_live
    from agent_history.read.usage import plan_snapshot

    db = database()
    agents = _agents(agent)

    def fetch() -> dict:
        clock = _when(now, "--now") or datetime.now(UTC)
        with db.connect() as conn:
            return plan_snapshot(conn, db.settings.plans, clock, agents)

    if json:
        print_json({**fetch(), "timezone": str(tz)})
        return
    raise typer.Exit(run_live(fetch, tz, refresh, console))


@app.command("pricing")
def pricing_cmd(
    json: bool = typer.Option(False, "--json", help="Print JSON."),
    every: bool = typer.Option(False, "--all", help="Every price row of the library, not only the models seen."),
) -> None:
    """The list prices of the models seen (USD per million tokens, with effective date and source:
    genai-prices and its version, or our own row's page), which price row each model name resolves
    to, and the models seen that have no price, with call counts and the reason."""
    from agent_history.read.usage import price_list

    with database().connect() as conn:
        data = price_list(conn, every=every)
    if json:
        print_json(data)
        return
    headers = (
        "price row", "effective", "input", "output", "cache read", "write 5m", "write 1h", "long context", "source",
    )  # fmt: skip

    def p(v) -> str:
        return "-" if v is None else f"{v:g}"

    cells = [
        (
            r["price_key"],
            f"since {r['effective_from']}" if r["effective_from"] else "always",
            p(r["input_per_mtok"]),
            p(r["output_per_mtok"]),
            p(r["cache_read_per_mtok"]),
            p(r["cache_write_5m_per_mtok"]),
            p(r["cache_write_1h_per_mtok"]),
            # the whole call at these input/output rates once its input exceeds the threshold
            "-"
            if r["long_context_threshold"] is None
            else f"> {r['long_context_threshold']:,}: {p(r['long_input_per_mtok'])}/{p(r['long_output_per_mtok'])}",
            r["source"] or "",
        )
        for r in data["prices"]
    ]
    table = compact_table(*headers)
    for c in cells:
        table.add_row(*c)
    # a rule under the header as every table has; the source on a line of its own when narrow
    table.columns[-1].overflow = "fold"  # a long source (a page's URL) wraps in its column
    records = [Record(c[:-1], paths=(c[-1],)) for c in cells]
    print_table_or_records(console, table, headers[:-1], records, wrapped={len(headers) - 1: 24})
    if data["models"]:
        console.print("models seen → price row:", highlight=False)
        for m in data["models"]:
            console.print(f"  {m['model']} → {m['price_key']} ({count(m['calls'], 'call')})", highlight=False)
    if data["unpricedModels"]:
        console.print("unpriced models seen (their calls cost unknown, never 0):", highlight=False)
        for u in data["unpricedModels"]:
            console.print(f"  {u['model']} ({count(u['calls'], 'call')}): {u['reason']}", highlight=False)
    console.print(f"price data: {data['priceData'] or 'not loaded'}", highlight=False)


@app.command("statusline")
def statusline_cmd(
    timezone: str = typer.Option(None, "--timezone", "-z", help="IANA zone for 'today' (default: the machine's)."),
    now: str = typer.Option(None, "--now", hidden=True, help="The clock (ISO time; tests)."),
) -> None:
    """Claude Code's status line: reads its status-line JSON on stdin and prints one line — the
    session's and today's list-price cost and the current 5-hour block's cost, burn rate and time
    left. Install it with `connect claude --statusline`."""
    import sys

    from agent_history.cli.statusline import run

    args = [*(["--timezone", timezone] if timezone else []), *(["--now", now] if now else [])]
    raise typer.Exit(run(args, sys.stdin.read()))


@app.command("litellm-fill")
def litellm_fill_cmd(json: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """Fill unknown (NULL) token counts of the `[litellm] namespaces`' Claude calls from the
    LiteLLM proxy's spend log (`[litellm] dsn`), matched by request id; known counts are never
    overwritten and every filled call is recorded in `ah.usage_fill`."""
    from agent_history.ingest.litellm import LiteLLMError, fill_from_litellm
    from agent_history.ingest.postpass import run_postpasses

    db = database()
    if not db.settings.litellm_dsn:
        fail("no LiteLLM spend log configured: set [litellm] dsn and namespaces in the config file", 2)
    with db.connect() as conn:
        try:
            summary = fill_from_litellm(conn, db.settings.litellm_dsn, db.settings.litellm_namespaces)
        except LiteLLMError as exc:
            fail(str(exc), 2)
        if summary.filled:
            run_postpasses(conn)
    if json:
        print_json(summary.as_dict())
        return
    console.print(
        f"litellm-fill: {count(summary.candidates, 'call')} with unknown counts, {summary.matched} found in the spend log, "
        f"{summary.filled} filled (" + ", ".join(f"{b} {n}" for b, n in summary.buckets.items()) + ")",
        highlight=False,
    )
