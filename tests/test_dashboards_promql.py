"""PromQL of the dashboards and alert rules: parses (promtool), names only declared metric families
with their declared labels, and uses every family; the rules pass their promtool unit tests; the
generated files do not drift from their builders."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import promql_parser
import pytest
import yaml

from agent_history.telemetry.families import BY_NAME, FAMILIES, LABEL_VALUES
from alerts.rules import RULES, render
from dashboards.generate import RULES_FILE, TEST_FILES, outputs, unit_tests_yaml
from dashboards.sdk import UNUSED_FAMILIES
from tests.conftest import REPO

PROMTOOL = shutil.which("promtool")
needs_promtool = pytest.mark.skipif(PROMTOOL is None, reason="promtool absent (Debian package `prometheus`)")

# Grafana's Prometheus interpolation: a multi-value variable with All = '.*' becomes a regex.
GRAFANA_VARS = {"$__rate_interval": "5m", "$__interval": "1m", "$namespace": ".*", "$agent": ".*"}


def _grafana(expr: str) -> str:
    for k, v in GRAFANA_VARS.items():
        expr = expr.replace(k, v)
    assert "$" not in expr, f"unresolved Grafana variable in {expr}"
    return expr


def dashboard_exprs() -> list[tuple[str, str]]:
    """(where, PromQL) of every Prometheus target of the generated dashboards."""
    return [(where, expr) for where, expr, _ in _dashboard_targets()]


def _dashboard_targets() -> list[tuple[str, str, str]]:
    """(where, PromQL, legend format) of every Prometheus target of the generated dashboards."""
    out = []
    for rel, text in outputs().items():
        if rel.endswith(".json"):
            for p in json.loads(text)["panels"]:
                for t in p.get("targets") or []:
                    if t["datasource"]["type"] == "prometheus":
                        out.append((f"{rel}: {p['title']}", _grafana(t["expr"]), t.get("legendFormat", "")))
    return out


def all_exprs() -> list[tuple[str, str]]:
    return dashboard_exprs() + [(f"rule {r.alert}", r.expr) for r in RULES]


def _selectors(expr: str) -> list[promql_parser.VectorSelector]:
    found: list[promql_parser.VectorSelector] = []

    def visit(node):
        if isinstance(node, promql_parser.VectorSelector):
            found.append(node)

    promql_parser.walk(promql_parser.parse(expr), visit)
    return found


def _grouping_labels(expr: str) -> list[tuple[set[str], list[str]]]:
    """(labels of the families below, labels named) for each `by (…)`/`without (…)` and each
    `on (…)`/`ignoring (…)` of an expression."""
    found = []

    def visit(node):
        named = []
        if isinstance(node, promql_parser.AggregateExpr) and node.modifier is not None:
            named = list(node.modifier.labels)
        elif isinstance(node, promql_parser.BinaryExpr) and node.modifier and node.modifier.matching:
            named = list(node.modifier.matching.labels)
        if named:
            below: set[str] = set()
            promql_parser.walk(
                node,
                lambda n: (
                    below.update(BY_NAME[n.name].labels)
                    if isinstance(n, promql_parser.VectorSelector) and n.name in BY_NAME
                    else None
                ),
            )
            found.append((below, named))

    promql_parser.walk(promql_parser.parse(expr), visit)
    return found


def test_grouping_and_legend_labels_are_declared():
    problems = []
    for where, expr in all_exprs():
        for below, named in _grouping_labels(expr):
            problems += [f"{where}: groups by undeclared label {x!r}" for x in named if x not in below]
    for where, expr, legend in _dashboard_targets():
        declared = {lab for sel in _selectors(expr) for lab in BY_NAME[sel.name].labels}
        problems += [f"{where}: legend names {x!r}" for x in re.findall(r"\{\{(\w+)\}\}", legend) if x not in declared]
    assert problems == []
    assert _grouping_labels("sum by (colour) (ah_loops)") == [({"loop_status"}, ["colour"])]


def _matchers(sel: promql_parser.VectorSelector) -> list[tuple[str, str, str]]:
    """(label, op, value) of a selector's matchers, from the parser's canonical text."""
    return re.findall(r'(\w+)(=~|!~|!=|=)"((?:[^"\\]|\\.)*)"', str(sel.matchers))


def test_every_expression_names_declared_families_with_declared_labels():
    problems, used = [], set()
    for where, expr in all_exprs():
        for sel in _selectors(expr):
            fam = BY_NAME.get(sel.name or "")
            if fam is None:
                problems.append(f"{where}: {sel.name!r} is not a family of telemetry/families.py")
                continue
            used.add(fam.name)
            for label, op, value in _matchers(sel):
                if label not in fam.labels:
                    problems.append(f"{where}: {fam.name} has no label {label!r}")
                closed = LABEL_VALUES.get(label)
                if op == "=" and closed is not None and value not in closed:
                    problems.append(f"{where}: {label}={value!r} is outside the declared values")
    assert problems == []
    # and the other way: every family is shown or alerted on, or deliberately unused (with a reason)
    assert {f.name for f in FAMILIES} - used == set(UNUSED_FAMILIES)
    assert used & set(UNUSED_FAMILIES) == set()


def test_a_variable_query_names_a_family():
    ops = json.loads(outputs()["dashboards/operations.json"])
    queries = [v["query"] for v in ops["templating"]["list"]]
    assert queries == ["label_values(ah_archive_files, namespace)"]
    assert "namespace" in BY_NAME["ah_archive_files"].labels


def test_an_undeclared_metric_or_label_is_caught():
    assert [s.name for s in _selectors('sum(rate(ah_nope_total{run="index"}[5m])) and up')] == ["ah_nope_total", "up"]
    assert _matchers(_selectors('ah_run_success{run="index",colour=~"a|b"}')[0]) == [
        ("run", "=", "index"),
        ("colour", "=~", "a|b"),
    ]


@needs_promtool
def test_every_expression_parses_with_promtool(tmp_path):
    exprs = all_exprs()
    assert len(exprs) > 60
    rules = [{"record": f"ah_check:expr_{i}", "expr": e} for i, (_, e) in enumerate(exprs)]
    path = tmp_path / "exprs.yml"
    path.write_text(yaml.safe_dump({"groups": [{"name": "exprs", "rules": rules}]}))
    done = subprocess.run([PROMTOOL, "check", "rules", str(path)], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"SUCCESS: {len(exprs)} rules found" in done.stdout
    # the same check refuses a broken expression
    path.write_text(yaml.safe_dump({"groups": [{"name": "x", "rules": [{"record": "a:b", "expr": "sum(ah_x"}]}]}))
    assert subprocess.run([PROMTOOL, "check", "rules", str(path)], capture_output=True).returncode == 1


def test_every_issue_rule_exists_with_severity_annotations_and_both_kinds_of_case():
    by_name = {r.alert: r for r in RULES}
    assert list(by_name) == [
        "AhIndexStale", "AhIndexRunFailed", "AhIndexLagStuck", "AhNewParseIssues", "AhLoadErrors",
        "AhEmbedRunFailed", "AhEmbeddingsPendingTooLong", "AhMetricsStale", "AhCollectorFailing",
        "AhCollectionSlow", "AhArchiveStale", "AhColdTierUnavailable", "AhArchiveCopiesMissing", "AhHotFilesystemFull",
        "AhColdFilesystemFull", "AhHotRetentionBacklog", "AhLoopRootStalled", "AhRootPollingHeavily",
        "AhGateFailingRepeatedly", "AhHumanInterventionSpike", "AhJournalSyncFailing",
    ]  # fmt: skip
    critical = {n for n, r in by_name.items() if r.severity == "critical"}
    assert critical == {"AhIndexStale", "AhEmbeddingsPendingTooLong", "AhMetricsStale", "AhColdTierUnavailable"}
    for r in RULES:
        assert r.summary and r.description and r.runbook, r.alert
        assert any(c.fires for c in r.cases) and any(not c.fires for c in r.cases), r.alert
    generated = yaml.safe_load(outputs()[RULES_FILE])
    rules = [x for g in generated["groups"] for x in g["rules"]]
    assert [x["alert"] for x in rules] == list(by_name)
    assert all(set(x["annotations"]) == {"summary", "description", "runbook"} for x in rules)


def _just() -> str:
    just = shutil.which("just") or shutil.which("just", path=str(Path(sys.executable).parent))
    if just is None:
        pytest.skip("just absent (pip install rust-just)")
    return just


def _env(*pythonpath: Path) -> dict[str, str]:
    return {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "PYTHONPATH": os.pathsep.join(str(p) for p in pythonpath),
    }


@needs_promtool
def test_just_check_passes_drift_promtool_check_and_every_unit_test():
    """`just check` on this checkout: committed files match their builders, `promtool check rules`
    accepts the rule file and `promtool test rules` passes every case."""
    done = subprocess.run([_just(), "check"], cwd=REPO, env=_env(REPO), capture_output=True, text=True)
    out = done.stdout + done.stderr
    assert done.returncode == 0, out
    assert f"SUCCESS: {len(RULES)} rules found" in out
    assert out.count("  SUCCESS\n") == len(TEST_FILES)
    cases = [c for p in TEST_FILES.values() for c in yaml.safe_load((REPO / p).read_text())["tests"]]
    assert len(cases) == sum(len(r.cases) for r in RULES) >= 2 * len(RULES)


@needs_promtool
def test_a_wrong_expectation_fails_promtool(tmp_path):
    """The unit tests can fail: expecting AhIndexStale at 20 min (it fires after 30) is refused."""
    shutil.copy(REPO / RULES_FILE, tmp_path)
    text = (REPO / TEST_FILES["1m"]).read_text()
    bad = text.replace("eval_time: 40m\n    alertname: AhIndexStale", "eval_time: 20m\n    alertname: AhIndexStale", 1)
    assert bad != text
    (tmp_path / "t.yml").write_text(bad)
    done = subprocess.run([PROMTOOL, "test", "rules", str(tmp_path / "t.yml")], capture_output=True, text=True)
    assert done.returncode == 1
    assert "AhIndexStale: stale" in done.stdout + done.stderr


def _copy_generators(dst: Path) -> None:
    for d in ("dashboards", "alerts"):
        shutil.copytree(REPO / d, dst / d, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO / "justfile", dst / "justfile")


def test_changing_a_builder_without_regenerating_fails_just_check(tmp_path):
    just = _just()
    _copy_generators(tmp_path)
    env = _env(tmp_path, REPO)
    builder = tmp_path / "dashboards" / "catalogue.py"
    src = builder.read_text()
    builder.write_text(src.replace('"Most touched files"', '"Most touched paths"', 1))
    drift = subprocess.run([just, "check"], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert drift.returncode != 0
    assert "dashboards/catalogue.json: differs from its builder; run `just dashboards` and commit" in drift.stderr
    # a rule change is caught the same way
    builder.write_text(src)
    rules = tmp_path / "alerts" / "rules.py"
    rules.write_text(rules.read_text().replace("> 0.85", "> 0.8", 1))
    drift = subprocess.run([just, "check"], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert drift.returncode != 0
    assert "alerts/agent-history.rules.yml: differs from its builder" in drift.stderr
    assert "catalogue.json" not in drift.stderr


def test_the_generator_refuses_untestable_rules():
    stale = RULES[0]
    only_firing = dataclasses.replace(stale, cases=tuple(c for c in stale.cases if c.fires))
    with pytest.raises(ValueError, match="AhIndexStale: needs at least one firing and one quiet case"):
        unit_tests_yaml("1m", (only_firing,))
    sparse = dataclasses.replace(stale, cases=tuple(dataclasses.replace(c, interval="10m") for c in stale.cases))
    with pytest.raises(ValueError, match="AhIndexStale: cases must sample every 1m"):
        unit_tests_yaml("1m", (sparse,))
    with pytest.raises(ValueError, match="unsupported template"):
        render("lag {{ $value }}", {})
    assert render("lag of {{ $labels.namespace }}", {"namespace": "claude-local"}) == "lag of claude-local"


@pytest.mark.parametrize("rel", ["dashboards/catalogue.json", "dashboards/operations.json"])
def test_dashboards_are_well_formed(rel):
    dash = json.loads(outputs()[rel])
    panels = dash["panels"]
    assert len({p["id"] for p in panels}) == len(panels)
    rows = [p for p in panels if p["type"] == "row"]
    questions = [p for p in panels if p["type"] == "text"]
    assert len(rows) == len(questions) >= 6
    data = [p for p in panels if p["type"] not in ("row", "text")]
    for p in data:
        assert p["title"] and p["description"], p
        assert p["gridPos"]["x"] + p["gridPos"]["w"] <= 24, p["title"]
        refs = [t["refId"] for t in p["targets"]]
        assert refs and len(set(refs)) == len(refs), p["title"]
        assert all(t["datasource"] == p["datasource"] for t in p["targets"]), p["title"]
    # every template variable is used by some panel
    text = json.dumps([p.get("targets", []) for p in data])
    for v in dash["templating"]["list"]:
        assert f"${v['name']}" in text, v["name"]
    assert dash["uid"] in ("ah-catalogue", "ah-operations") and "generated" in dash["tags"]
