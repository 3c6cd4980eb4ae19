"""Every generated dashboard names each panel once (rows and panels inside collapsed rows
included): the generator refuses a duplicate, naming it."""

from __future__ import annotations

import json

import pytest

from dashboards import generate
from dashboards.generate import duplicate_titles, outputs


@pytest.mark.parametrize("name", ["catalogue", "operations", "archive"])
def test_each_dashboard_has_unique_panel_titles(name):
    dashboard = json.loads(outputs()[f"dashboards/{name}.json"])
    assert duplicate_titles(dashboard) == []


def test_a_duplicate_title_is_found_in_a_collapsed_row_and_refused():
    dashboard = {
        "panels": [
            {"type": "row", "title": "CI waits", "panels": [{"type": "timeseries", "title": "Polls"}]},
            {"type": "text"},  # untitled text panels are not titles
            {"type": "text"},
            {"type": "timeseries", "title": "Polls"},
            {"type": "timeseries", "title": "CI waits"},
        ]
    }
    assert duplicate_titles(dashboard) == ["CI waits", "Polls"]

    class Built:
        def build(self):
            return dashboard

    def build():
        return Built()

    with pytest.raises(ValueError, match="panel titles used twice: CI waits, Polls"):
        generate.dashboard_json(build)
