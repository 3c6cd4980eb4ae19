"""Small helpers over the official ``grafana-foundation-sdk``: the two datasources, a PostgreSQL
query type (the SDK ships none), and panel constructors from declared panel specs.

Panels are declared as data (:class:`SqlPanel`, :class:`PromPanel`) grouped in :class:`Section`
rows; :func:`dashboard` turns them into an SDK ``Dashboard`` builder. Panel ids are assigned in
declaration order, so the generated JSON is stable.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Self

from grafana_foundation_sdk.builders import barchart, stat, table, text, timeseries
from grafana_foundation_sdk.builders import dashboard as gd
from grafana_foundation_sdk.builders import prometheus as gp
from grafana_foundation_sdk.cog import builder as cogbuilder
from grafana_foundation_sdk.cog import variants as cogvariants
from grafana_foundation_sdk.models import dashboard as dm
from grafana_foundation_sdk.models import text as tm

#: Datasource uids, fixed by the provisioning files in observability/grafana/provisioning.
POSTGRES = dm.DataSourceRef(type_val="grafana-postgresql-datasource", uid="ah-postgres")
PROMETHEUS = dm.DataSourceRef(type_val="prometheus", uid="ah-prometheus")

PanelKind = Literal["timeseries", "table", "stat", "barchart"]


class SqlQuery(cogvariants.Dataquery):
    """A Grafana PostgreSQL query in code mode (``rawSql``), as the plugin stores it."""

    def __init__(self, raw_sql: str, fmt: str, ref_id: str = "A") -> None:
        self.raw_sql = raw_sql
        self.format = fmt
        self.ref_id = ref_id

    def to_json(self) -> dict[str, object]:
        return {
            "datasource": POSTGRES.to_json(),
            "editorMode": "code",
            "format": self.format,
            "rawQuery": True,
            "rawSql": self.raw_sql,
            "refId": self.ref_id,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Self:
        return cls(data["rawSql"], data.get("format", "table"), data.get("refId", "A"))


class SqlQueryBuilder(cogbuilder.Builder[cogvariants.Dataquery]):
    """Builder for :class:`SqlQuery` (the SDK's ``with_target`` takes builders)."""

    def __init__(self, raw_sql: str, fmt: str, ref_id: str = "A") -> None:
        self._internal = SqlQuery(raw_sql, fmt, ref_id)

    def build(self) -> SqlQuery:
        return self._internal


@dataclass(frozen=True, slots=True)
class SqlPanel:
    """A panel over the catalogue. ``sql`` may use ``$__timeFilter(col)``, ``$__timeGroupAlias(col,
    1d)`` and the dashboard variables; ``fmt`` is ``time_series`` (columns ``time``, optional
    ``metric``, values) or ``table``."""

    title: str
    kind: PanelKind
    sql: str
    description: str
    fmt: Literal["table", "time_series"] = "table"
    unit: str | None = None
    width: int = 12
    height: int = 8


@dataclass(frozen=True, slots=True)
class PromPanel:
    """A panel over the exported metrics: ``exprs`` are (PromQL, legend) pairs."""

    title: str
    kind: PanelKind
    exprs: tuple[tuple[str, str], ...]
    description: str
    unit: str | None = None
    width: int = 12
    height: int = 8
    instant: bool = False


@dataclass(frozen=True, slots=True)
class Section:
    """A dashboard row: its title, the question it answers and its panels."""

    title: str
    question: str
    panels: tuple[SqlPanel | PromPanel, ...] = field(default_factory=tuple)


_KINDS = {"timeseries": timeseries.Panel, "table": table.Panel, "stat": stat.Panel, "barchart": barchart.Panel}


def _panel(spec: SqlPanel | PromPanel, panel_id: int) -> cogbuilder.Builder[dm.Panel]:
    p = _KINDS[spec.kind]().id(panel_id).title(spec.title).description(spec.description)
    p = p.span(spec.width).height(spec.height)
    if spec.unit:
        p = p.unit(spec.unit)
    if isinstance(spec, SqlPanel):
        p = p.datasource(POSTGRES).with_target(SqlQueryBuilder(spec.sql, spec.fmt))
    else:
        p = p.datasource(PROMETHEUS)
        for i, (expr, legend) in enumerate(spec.exprs):
            q = gp.Dataquery().expr(expr).legend_format(legend).ref_id(chr(ord("A") + i)).datasource(PROMETHEUS)
            p = p.with_target(q.instant() if spec.instant else q.range())
    return p


def dashboard(
    uid: str,
    title: str,
    description: str,
    sections: tuple[Section, ...],
    variables: tuple[cogbuilder.Builder[dm.VariableModel], ...] = (),
    time_from: str = "now-30d",
) -> gd.Dashboard:
    """The SDK dashboard builder: per section an expanded row, a text panel stating the question it
    answers, then its panels in declaration order; ids 1, 2, … in that order."""
    d = (
        gd.Dashboard(title)
        .uid(uid)
        .description(description)
        .tags(["agent-history", "generated"])
        .time(time_from, "now")
        .timezone("browser")
        .refresh("5m")
        .readonly()
    )
    for v in variables:
        d = d.with_variable(v)
    panel_id = 1
    for section in sections:
        # An expanded row: its panels follow it at the top level (only collapsed rows nest them).
        d = d.with_row(gd.Row(section.title).id(panel_id).collapsed(False))
        question = text.Panel().id(panel_id + 1).mode(tm.TextMode.MARKDOWN).content(f"**{section.question}**")
        d = d.with_panel(question.transparent(True).span(24).height(2))
        panel_id += 2
        for spec in section.panels:
            d = d.with_panel(_panel(spec, panel_id))
            panel_id += 1
    return d


def sql_variable(name: str, label: str, query: str) -> gd.QueryVariable:
    """A multi-value PostgreSQL query variable with *All* (Grafana expands it to every option)."""
    return (
        gd.QueryVariable(name)
        .label(label)
        .datasource(POSTGRES)
        .query(query)
        .multi(True)
        .include_all(True)
        .refresh(dm.VariableRefresh.ON_TIME_RANGE_CHANGED)
        .sort(dm.VariableSort.ALPHABETICAL_ASC)
    )


def prom_variable(name: str, label: str, query: str) -> gd.QueryVariable:
    """A multi-value Prometheus label variable; *All* is the regex ``.*``."""
    return (
        gd.QueryVariable(name)
        .label(label)
        .datasource(PROMETHEUS)
        .query(query)
        .multi(True)
        .include_all(True)
        .all_value(".*")
        .refresh(dm.VariableRefresh.ON_TIME_RANGE_CHANGED)
        .sort(dm.VariableSort.ALPHABETICAL_ASC)
    )


#: Metric families (agent_history/telemetry/families.py) that no dashboard panel and no alert rule
#: uses, each with the reason. Empty: every exported family is shown or alerted on (tested).
UNUSED_FAMILIES: dict[str, str] = {}
