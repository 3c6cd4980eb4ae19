"""`efficiency`: model calls per thread by trigger (thin: parse, call `read.efficiency`, render)."""

from __future__ import annotations

from dataclasses import replace

import typer

from agent_history.classify.rules import TRIGGERS
from agent_history.cli.app import app
from agent_history.cli.context import database
from agent_history.cli.options import (
    _ambiguous,
    _ask,
    _check_filter_values,
    _found,
    _namespaces,
    _not_found,
)
from agent_history.cli.output import console, count, fail, print_json
from agent_history.cli.tables import Record, compact_table, print_table_or_records
from agent_history.cli.text import _short_ts
from agent_history.read.requests import efficiency_request

_SHORT = {"orchestrate": "orch", "agent_msg": "agmsg"}


def _share(value) -> str:
    return "-" if value is None else f"{float(value):.4f}"


@app.command("efficiency")
def efficiency_cmd(
    session: str = typer.Option(
        None, "--session", "-s", help="Only this session's threads (a uid or a unique prefix of ≥ 6 characters)."
    ),
    agent: list[str] = typer.Option(None, "--agent", "-a", help="Only this harness; repeatable."),
    namespace: list[str] = typer.Option(None, "--namespace", "-N", help="Only this namespace; repeatable."),
    context: list[str] = typer.Option(None, "--context", "-c", help="A named context; repeatable."),
    since: str = typer.Option(None, "--since", help="Threads started since: 7d, 12h, YYYY-MM-DD …"),
    role: str = typer.Option(None, "--role", help="root | worker | solo."),
    json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """What triggered each thread's model calls (user, model, work, status, wait, event, noop,
    orchestrate, agent_msg) and its poll share = (wait + status) / classified calls."""
    from agent_history.read.efficiency import efficiency_of

    db = database()
    req = _ask(
        efficiency_request,
        {
            "session_uid": session,
            "agents": agent,
            "namespaces": list(_namespaces(namespace, context, db.settings.contexts)),
            "since": since,
            "role": role,
        },
    )
    with db.connect() as conn:
        _check_filter_values(conn, namespace)
        if req.session_uid is not None:  # a prefix, as everywhere a session is named
            from agent_history.read.common import AmbiguousSession, SessionNotFound, resolve_session

            try:
                req = replace(req, session_uid=resolve_session(conn, req.session_uid).session_uid)
            except SessionNotFound as exc:
                _not_found(req.session_uid, "--session", exc)
            except AmbiguousSession as exc:
                _ambiguous(exc)
        report = efficiency_of(conn, req)
    if json:
        print_json(report.as_dict())
        _found(bool(report.threads))
        return
    if not report.threads:
        fail("no threads match", 1)
    headers = ("started", "agent", "thread", "role", "calls", "poll", *(_SHORT.get(t, t) for t in TRIGGERS), "uncl")
    records = []
    for t in report.threads:
        uid = t.session_uid[:13] + (f"/{t.agent_id}" if t.agent_id else "")
        fields = (_short_ts(t.started_at), t.namespace or t.agent, uid, t.role or "-", str(t.calls), _share(t.poll_share),
                  *(str(t.triggers[k]) for k in TRIGGERS), str(t.unclassified))  # fmt: skip
        records.append(Record(fields, styles=(None, "green", "blue")))
    tot = report.totals
    records.append(
        Record(
            (
                "total",
                "",
                count(tot["threads"], "thread"),
                "",
                str(tot["calls"]),
                _share(tot["poll_share"]),
                *(str(tot["triggers"][k]) for k in TRIGGERS),
                str(tot["unclassified"]),
            ),
            styles=("bold",),
        )  # fmt: skip
    )
    table = compact_table(*headers)
    for rec in records:
        if rec is records[-1]:
            table.add_section()
        table.add_row(*rec.fields)
    for column in table.columns:
        column.no_wrap = True
    # a table when it fits; else one record per thread: what identifies it and its calls and poll
    # share on the first line, the trigger counts below
    print_table_or_records(console, table, headers, records, first_line=6)
