"""Run a generated dashboard's SQL panels the way Grafana's PostgreSQL datasource would.

Grafana interpolates a panel's ``rawSql`` before sending it: ``$__timeFilter(col)`` becomes
``col BETWEEN '<from>' AND '<to>'`` (RFC 3339, UTC), ``$__timeGroupAlias(col, 1d)`` becomes
``floor(extract(epoch from col)/86400)*86400 AS "time"``, and a multi-value variable ``$name``
becomes its selected values single-quoted and comma-separated (*All* = every option of the
variable's own query). Any other ``$__`` macro is refused here so a new one cannot slip in untested.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime

import psycopg

_DURATION = {"s": 1, "m": 60, "h": 3600, "d": 86400}


class PanelError(AssertionError):
    """A panel's query failed; the message starts with the panel's title."""


@dataclass(frozen=True)
class Target:
    """One query of one panel of a generated dashboard."""

    panel: str
    datasource: str  # plugin type id
    query: str  # rawSql or PromQL expr
    fmt: str | None


def targets(dashboard: dict) -> Iterator[Target]:
    """Every panel target of a dashboard JSON (rows' nested panels included)."""
    for p in dashboard.get("panels", []):
        for q in p.get("panels", []):
            yield from _panel_targets(q)
        yield from _panel_targets(p)


def _panel_targets(p: dict) -> Iterator[Target]:
    for t in p.get("targets") or []:
        ds = (t.get("datasource") or p.get("datasource") or {}).get("type", "")
        query = t.get("rawSql") if "rawSql" in t else t.get("expr")
        yield Target(p["title"], ds, query, t.get("format"))


def load(text: str) -> dict:
    """Parse generated dashboard JSON."""
    return json.loads(text)


def _quote(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def _ts(at: datetime) -> str:
    return at.strftime("%Y-%m-%dT%H:%M:%SZ")


def _macro_args(sql: str, start: int) -> tuple[list[str], int]:
    """Top-level comma-separated arguments of the call whose '(' is at ``start``; and the index after ')'."""
    depth, args, cur = 0, [], start + 1
    for i in range(start, len(sql)):
        ch = sql[i]
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                args.append(sql[cur:i].strip())
                return args, i + 1
        elif ch == "," and depth == 1:
            args.append(sql[cur:i].strip())
            cur = i + 1
    raise ValueError(f"unbalanced parentheses in: {sql}")


def _expand(sql: str, name: str, render) -> str:
    token = f"$__{name}("
    while (at := sql.find(token)) >= 0:
        args, after = _macro_args(sql, at + len(token) - 1)
        sql = sql[:at] + render(*args) + sql[after:]
    return sql


def interpolate(sql: str, variables: dict[str, list[str]], start: datetime, end: datetime) -> str:
    """``sql`` with Grafana's macros and the variables substituted (values: the selected options).

    Raises ValueError for an unsupported macro or an unresolved variable."""

    def time_filter(col: str) -> str:
        return f"{col} BETWEEN '{_ts(start)}' AND '{_ts(end)}'"

    def time_group(col: str, interval: str) -> str:
        interval = interval.strip("'")
        secs = int(interval[:-1]) * _DURATION[interval[-1]]
        return f'floor(extract(epoch from {col})/{secs})*{secs} AS "time"'

    out = _expand(_expand(sql, "timeFilter", time_filter), "timeGroupAlias", time_group)
    if "$__" in out:
        raise ValueError(f"unsupported Grafana macro in: {sql}")
    for name in sorted(variables, key=len, reverse=True):
        values = variables[name] or ["__no_value__"]  # Grafana sends an empty selection as no match
        quoted = ", ".join(_quote(v) for v in values)
        out = re.sub(r"\$\{" + name + r"\}|\$" + name + r"\b", lambda _m, q=quoted: q, out)
    if re.search(r"\$\w", out):
        raise ValueError(f"unresolved variable in: {out}")
    return out


def variable_options(conn: psycopg.Connection, dashboard: dict) -> dict[str, list[str]]:
    """Run each PostgreSQL query variable of the dashboard; name → every option (= *All*)."""
    out = {}
    for v in dashboard.get("templating", {}).get("list", []):
        if v.get("datasource", {}).get("type") == "grafana-postgresql-datasource":
            out[v["name"]] = [str(r[0]) for r in conn.execute(v["query"]).fetchall()]
    return out


def run(conn: psycopg.Connection, target: Target, variables, start, end) -> list[tuple]:
    """Run one SQL target; raises :class:`PanelError` naming the panel on any database error."""
    sql = interpolate(target.query, variables, start, end)
    try:
        cur = conn.execute(sql)
        rows = cur.fetchall()
        columns = [d.name for d in cur.description]
    except psycopg.Error as exc:
        conn.rollback()
        raise PanelError(f"{target.panel}: {type(exc).__name__}: {str(exc).strip()}") from exc
    conn.rollback()
    if target.fmt == "time_series" and "time" not in columns:
        raise PanelError(f"{target.panel}: a time_series query needs a 'time' column, got {columns}")
    return rows
