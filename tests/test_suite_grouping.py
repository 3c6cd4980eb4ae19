"""The suite's own scheduling: under ``-n 2 --dist loadgroup`` (`just test`) the tests of a module
that share a module-scoped fixture run on one worker and build that fixture once
(`tests/conftest.py`'s ``pytest_collection_modifyitems``). Under pytest 9.2 xdist's own ``@group``
suffix was lost and each worker built such a fixture again (tests/test_hosts.py's world: twice)."""

from __future__ import annotations

import os
import re
import subprocess
import sys

from tests.conftest import REPO

MODULE = """
import os
import pytest

@pytest.fixture(scope="module")
def shared():
    with open(os.environ["BUILDS"], "a") as f:
        f.write("built\\n")
    return os.environ["PYTEST_XDIST_WORKER"]

@pytest.mark.parametrize("n", range(6))
def test_shares(shared, n):
    assert shared == os.environ["PYTEST_XDIST_WORKER"]

@pytest.mark.parametrize("n", range(6))
def test_alone(n):
    pass
"""


def test_a_modules_fixture_sharing_tests_run_on_one_worker_and_build_it_once(tmp_path):
    (tmp_path / "conftest.py").write_text("from tests.conftest import pytest_collection_modifyitems  # noqa: F401\n")
    (tmp_path / "test_grouped.py").write_text(MODULE)
    env = {**os.environ, "PYTHONPATH": str(REPO), "BUILDS": str(tmp_path / "builds.txt")}
    r = subprocess.run(
        [sys.executable, "-m", "pytest", "-n", "2", "--dist", "loadgroup", "-v", "-p", "no:cacheprovider",
         "--rootdir", str(tmp_path), str(tmp_path / "test_grouped.py")],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert r.returncode == 0, r.stdout + r.stderr
    ran = re.findall(r"\[(gw\d)\] \[\s*\d+%\] PASSED test_grouped\.py::(test_\w+)\[(\d)\](@test_grouped)?", r.stdout)
    shares = [(worker, group) for worker, name, _, group in ran if name == "test_shares"]
    alone = [group for _, name, _, group in ran if name == "test_alone"]
    assert len(shares) == 6 and len(alone) == 6, r.stdout
    assert {group for _, group in shares} == {"@test_grouped"}  # the scheduler's group, by the node id
    assert len({worker for worker, _ in shares}) == 1  # one worker ran them all
    assert alone == [""] * 6  # the others are spread one by one, ungrouped
    assert (tmp_path / "builds.txt").read_text() == "built\n"  # the module fixture was built once
