"""The declared parse issue kinds (`agent_history.model.issues.KINDS`, which `issues --kind`
names) hold every kind the code records: each literal a parser passes to ``ParseIssueRow`` or
its ``_issue`` helper, and each the loader writes in SQL."""

from __future__ import annotations

import re
from pathlib import Path

from agent_history.model.issues import KINDS, LOADER_KINDS, PARSER_KINDS

ROOT = Path(__file__).resolve().parents[1] / "agent_history"
RECORDED = [
    re.compile(r"""(?:ParseIssueRow|_issue)\(\s*(?:kind=)?["']([a-z_]+)["']"""),  # a parser's row
    re.compile(r"""INSERT INTO ah\.parse_issue[^;]*?VALUES \([^)]*?'([a-z_]+)'""", re.S),  # the loader's SQL
    re.compile(r"""INSERT INTO ah\.parse_issue[^;]*?SELECT [^;]*?'([a-z_]+)'""", re.S),  # … INSERT … SELECT
]


def recorded_kinds() -> dict[str, str]:
    """Kind → the first file:line recording it, over the whole package."""
    found: dict[str, str] = {}
    for path in sorted(ROOT.rglob("*.py")):
        text = path.read_text()
        for pattern in RECORDED:
            for m in pattern.finditer(text):
                line = text.count("\n", 0, m.start()) + 1
                for kind in m.groups():
                    found.setdefault(kind, f"{path.relative_to(ROOT)}:{line}")
    return found


def test_every_recorded_issue_kind_is_declared():
    found = recorded_kinds()
    assert {k: v for k, v in found.items() if k not in KINDS} == {}
    assert set(LOADER_KINDS) <= set(found)  # the scan sees the loader's SQL
    assert len(set(found) & set(PARSER_KINDS)) >= 10  # and the parsers' rows


def test_kinds_are_declared_once():
    assert len(KINDS) == len(set(KINDS))
