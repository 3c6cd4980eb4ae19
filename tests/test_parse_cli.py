"""`agent-history parse`: the database-free report over real files (issue #3's done-when)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from tests.procinfo import read_until_closed


def parse(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "COLUMNS": "200"}
    return subprocess.run(
        [sys.executable, "-m", "agent_history", "parse", *args], capture_output=True, text=True, env=env, timeout=300
    )


def test_parse_reports_the_whole_corpus_with_no_unknown_types(corpus_home):
    out = parse(str(corpus_home), "--json")
    assert out.returncode == 0, out.stderr
    totals = json.loads(out.stdout)["totals"]
    got = {
        agent: (t["files"], t["sessions"], t["messages"], t["human_prompts"], t["model_calls"], t["tool_calls"])
        for agent, t in totals.items()
    }
    assert got == {
        "claude": (29, 28, 571, 64, 498, 497),
        "codex": (4, 4, 396, 48, 39, 285),
        "pi": (3, 3, 622, 162, 939, 824),
        "all": (36, 35, 1589, 274, 1476, 1606),
    }
    assert totals["all"]["unknown_record_types"] == {}
    assert totals["all"]["issues_by_kind"] == {"fused_line": 1}
    assert totals["claude"]["tokens"] == {
        "input_uncached": 10833,
        "cache_read": 78327387,
        "cache_write_5m": 3374997,
        "cache_write_1h": 9036,
        "output": 67146,
        "reasoning": None,
    }
    assert totals["codex"]["tokens"]["cache_write_5m"] is None  # Codex does not report cache writes


def test_parse_text_report_names_each_harness_and_marks_unknown_buckets(corpus_home):
    out = parse(str(corpus_home / ".codex"), "--totals-only")
    assert out.returncode == 0, out.stderr
    assert "codex: 4 files, 4 sessions (0 sub-agent), 396 messages, 48 human prompts, 39 model calls" in out.stdout
    assert "cache_write_5m -" in out.stdout


def test_parse_classifies_field_case_e18(field_dir):
    data = json.loads(parse(str(field_dir / "E18.jsonl"), "--json").stdout)["files"][0]
    assert data["agent"] == "claude"
    assert data["messages_by_class"] == {"human_prompt": 2, "interrupt_marker": 1}
    assert data["tool_errors_by_class"] == {"denied": 1, "interrupted": 1}


def test_parse_of_a_missing_file_or_a_directory_entry_that_is_not_a_file_is_one_line_each(tmp_path):
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    out = parse(str(tmp_path / "nope.jsonl"), str(fifo))
    assert out.returncode == 1
    assert "Traceback" not in out.stderr
    assert out.stderr.count("error:") == 2
    assert "not a regular file" in out.stderr


def _parse_with_stderr_on_a_pty(*args: str) -> tuple[int, str, str]:
    """(exit code, stdout, what was written to the terminal on stderr)."""
    import pty

    master, slave = pty.openpty()
    env = {**os.environ, "COLUMNS": "120"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "agent_history", "parse", *args], stdout=subprocess.PIPE, stderr=slave, env=env
    )
    os.close(slave)
    terminal = read_until_closed(master)
    out = proc.stdout.read().decode()
    proc.wait(timeout=300)
    os.close(master)
    return proc.returncode, out, terminal.decode(errors="replace")


def test_parse_shows_progress_on_a_terminal_and_nothing_when_piped(corpus_home):
    tree = str(corpus_home / ".codex")
    code, out, terminal = _parse_with_stderr_on_a_pty(tree, "--json")
    assert code == 0 and json.loads(out)["totals"]["codex"]["files"] == 4
    assert "parsing" in terminal and "4/4" in terminal
    piped = parse(tree, "--json")
    assert (piped.returncode, piped.stderr) == (0, "")
    assert json.loads(piped.stdout) == json.loads(out)
