"""The pure readers of `agent_history.repos`: git log records, trailers, reached-default, reflog
pushes, Backlog.md frontmatter and status changes (no git, no database)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from agent_history.repos import backlog, log

T = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)
TS = str(int(T.timestamp()))


def _record(sha: str, parents: str, email: str, subject: str, trailers: str, numstat: bytes) -> bytes:
    head = "\x1f".join([sha, parents, TS, TS, email, subject, trailers]).encode()
    return b"\x1e" + head + b"\0\n" + numstat


def test_log_record_keeps_no_address_and_drops_person_trailers():
    raw = _record(
        "a" * 40, "b" * 40, "Me@Example.org", "Subject",
        "Task\x1ctask-1, task-2\x1dSigned-off-by\x1cMe <me@example.org>\x1dRefs\x1cmail bob@x.io\x1dFixes\x1c#12",
        b"2\t1\tsrc/a b.py\0-\t-\tlogo.bin\0",
    )  # fmt: skip
    (c,) = log.parse_log(raw, ["me@example.org"])
    assert (c.sha, c.parents, c.subject, c.authored_by_me) == ("a" * 40, ["b" * 40], "Subject", True)
    assert c.task_ids == ["task-1", "task-2"]
    assert c.trailers == [("Task", "task-1, task-2"), ("Fixes", "#12")]
    assert [(f.path, f.added, f.deleted) for f in c.files] == [("src/a b.py", 2, 1), ("logo.bin", None, None)]
    assert (c.lines_added, c.lines_deleted, c.authored_at) == (2, 1, T)
    assert log.parse_log(raw, [])[0].authored_by_me is None
    assert log.parse_log(raw, ["other@example.org"])[0].authored_by_me is False


def test_a_commit_with_only_binary_files_has_unknown_line_counts():
    (c,) = log.parse_log(_record("a" * 40, "", "x@y.z", "s", "", b"-\t-\tlogo.bin\0"), [])
    assert (c.parents, c.lines_added, c.lines_deleted, len(c.files)) == ([], None, None, 1)


def test_reached_default_is_the_time_of_the_first_parent_commit_that_brought_it():
    t = {s: datetime(2026, 1, i + 1, tzinfo=UTC) for i, s in enumerate("abcdm")}
    parents = {"a": [], "b": ["a"], "c": ["a"], "d": ["c"], "m": ["b", "d"], "w": ["m"]}
    reached = log.reached_default(["a", "b", "m"], parents, t)
    assert reached == {"a": t["a"], "b": t["b"], "c": t["m"], "d": t["m"], "m": t["m"]}
    assert log.reached_default(["m"], {"m": ["gone"]}, t) == {"m": t["m"]}  # a shallow boundary


def test_pushes_are_the_reflog_entries_git_push_wrote():
    raw = f"{'a' * 40}\x1forigin/main@{{{TS}}}\x1fupdate by push\n{'b' * 40}\x1forigin/main@{{1}}\x1ffetch: fast-forward\n"
    assert log.parse_pushes("refs/remotes/origin/main", raw.encode()) == [
        log.Push("refs/remotes/origin/main", "a" * 40, T)
    ]


def test_task_frontmatter_lists_dates_and_id_fallback():
    text = (
        "---\ntitle: Do it\nstatus: In Progress\nassignee: '@codex'\nlabels: [a, b]\ncreated_date: 2026-11-02\n---\nx\n"
    )
    task = backlog.parse_task(text, "backlog/tasks/task-7 - Do it.md")
    assert task == backlog.Task("task-7", "Do it", "In Progress", ("a", "b"), ("@codex",), "2026-11-02", None, ())


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("no frontmatter\n", "no frontmatter"),
        ("---\n- a list\n---\n", "not a mapping"),
        ("---\nid: [x\n---\n", "frontmatter is not YAML at line 3"),
    ],
)
def test_bad_frontmatter_is_one_line(text, error):
    with pytest.raises(backlog.TaskFileError, match=error) as info:
        backlog.parse_task(text, "t.md")
    assert "\n" not in str(info.value)


def test_status_changes_keep_first_sightings_and_real_changes_only():
    obs = [("t1", "s1", T, "To Do"), ("t1", "s2", T, "To Do"), ("t1", "s3", T, "Done"), ("t2", "s3", T, None)]
    assert backlog.status_changes(obs) == [
        backlog.StatusChange("t1", "s1", T, None, "To Do"),
        backlog.StatusChange("t1", "s3", T, "To Do", "Done"),
        backlog.StatusChange("t2", "s3", T, None, None),
    ]
    assert backlog.folder_of("backlog/archive/tasks/t.md") == "archive"
    assert backlog.folder_of("backlog/tasks/t.txt") is None
    assert backlog.is_done(" done ") and not backlog.is_done(None)


def test_blame_porcelain_keeps_sha_subject_time_and_no_author():
    from agent_history.repos.blame import parse_porcelain

    a, z = "a" * 40, "0" * 40
    raw = (
        f"{a} 1 1 2\nauthor Me Person\nauthor-mail <me@example.org>\ncommitter-time {TS}\nsummary Add it\n"
        f"filename x.py\n\tone\n{a} 2 2\n\ttwo\r\n"
        f"{z} 3 3 1\nauthor Not Committed Yet\nsummary Version of x.py from x.py\nfilename x.py\n\t\n"
    ).encode()
    lines = parse_porcelain(raw)
    assert [(x.line, x.text, x.sha, x.subject, x.committed_at) for x in lines] == [
        (1, "one", a, "Add it", T), (2, "two", a, "Add it", T), (3, "", None, None, None),
    ]  # fmt: skip
    assert "example.org" not in repr(lines) and "Me Person" not in repr(lines)


def test_lines_written_by_edit_write_multiedit_and_patches():
    import json

    from agent_history.repos.blame import lines_written

    f = "/r/src/x.py"
    assert lines_written(json.dumps({"file_path": f, "content": "a\nb\n"}), f) == ["a", "b", ""]
    assert lines_written(json.dumps({"file_path": "/r/other.py", "content": "a"}), f) is None
    edits = {"file_path": f, "edits": [{"old_string": "x", "new_string": "c"}, {"new_string": "d\ne"}]}
    assert lines_written(json.dumps(edits), f) == ["c", "d", "e"]
    # an Edit quotes the lines around its change in both strings: only the added line is written
    context = {"file_path": f, "old_string": "main()\n", "new_string": "main()\n# added by the agent\n"}
    assert lines_written(json.dumps(context), f) == ["# added by the agent"]
    changed = {"file_path": f, "old_string": "a = 1\nb = 2\nc = 3", "new_string": "a = 1\nb = 20\nc = 3"}
    assert lines_written(json.dumps(changed), f) == ["b = 20"]
    envelope = "*** Begin Patch\n*** Update File: src/x.py\n@@\n-old\n+new\n*** Add File: y.py\n+not x\n*** End Patch"
    assert lines_written(envelope, f) == ["new"]
    assert lines_written(json.dumps({"input": envelope}), f) == ["new"]
    assert lines_written(json.dumps({"command": ["bash", "-lc", f"apply_patch <<'EOF'\n{envelope}\nEOF"]}), f) == [
        "new"
    ]
    diff = "diff --git a/src/x.py b/src/x.py\n--- a/src/x.py\n+++ b/src/x.py\n@@ -1 +1 @@\n-a\n+b\n"
    assert lines_written(diff, f) == ["b"]
    assert lines_written(json.dumps({"command": "ls"}), f) is None and lines_written(None, f) is None
