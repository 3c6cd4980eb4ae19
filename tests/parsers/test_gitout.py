"""Spec for `parsers.gitout`: commits and pushes read from git's output (docs/design.md §6 git events).

Outputs are real ones from corpus/home (pi and Claude Bash results), trimmed.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent_history.parsers.common.gitout import GitSighting, git_event_uid, git_sightings

PI_RELEASE = (
    "\n> pi-web-ui-example@1.15.5 check\n> tsgo --noEmit\n\n✅ All pre-commit checks passed!\n"
    "[main bf313d2] Release v0.27.5\n"
    " 11 files changed, 46 insertions(+), 49 deletions(-)\n"
    "To https://github.com/badlogic/pi-mono.git\n"
    "   31dc58d..bf313d2  main -> main\n"
    "To https://github.com/badlogic/pi-mono.git\n"
    " * [new tag]         v0.27.5 -> v0.27.5\n"
)
CLAUDE_FORCE_PUSH = (
    "summary: (done in 9.55 seconds)       \n✔️ build (4.72 seconds)\n✔️ typecheck (2.81 seconds)\n"
    "To https://github.com/obra/dev.example.com.git\n"
    " + 4bdbf8f...190d0db streaming -> streaming (forced update)"
)
CLAUDE_PULL = (
    "Submodule path 'public/tokenizer': checked out 'acf21f18dbd00b0d761e5ba841e4448b7e619be0'\n"
    "From https://github.com/someuser/online-llm-tokenizer\n"
    "   030d80d..acf21f1  main       -> origin/main"
)
PI_PUSH_REJECTED = (
    "To https://github.com/badlogic/pi-mono.git\n"
    " ! [rejected]        HEAD -> main (non-fast-forward)\n"
    "error: failed to push some refs to 'https://github.com/badlogic/pi-mono.git'\n"
)
CLAUDE_REBASE = (
    "Recorded resolution for 'app/lib/ai.server.ts'.\n"
    "Rebasing (5/22)\rRebasing (6/22)\r[detached HEAD 2996bb8] fix: resolve remaining TypeScript and routing issues\n"
    " 5 files changed, 18 insertions(+), 14 deletions(-)\n"
    "Auto-merging .claude/settings.local.json\n"
)


def test_commit_line_with_push_of_same_sha():
    assert git_sightings(PI_RELEASE) == [
        GitSighting(op="commit", sha="bf313d2", branch="main", subject="Release v0.27.5"),
        GitSighting(op="push", sha="bf313d2", old_sha="31dc58d", branch="main", remote_ref="main"),
    ]


def test_tag_push_is_not_a_git_event():
    assert [s.op for s in git_sightings(PI_RELEASE)] == ["commit", "push"]


def test_forced_update_push():
    assert git_sightings(CLAUDE_FORCE_PUSH) == [
        GitSighting(op="push", sha="190d0db", old_sha="4bdbf8f", branch="streaming", remote_ref="streaming")
    ]


def test_fetch_lines_under_from_header_are_not_pushes():
    assert git_sightings(CLAUDE_PULL, "git pull") == []


def test_rejected_push_is_not_a_push():
    assert git_sightings(PI_PUSH_REJECTED, "git push") == []


def test_rebase_pick_after_carriage_return_is_a_commit():
    assert git_sightings(CLAUDE_REBASE) == [
        GitSighting(
            op="commit",
            sha="2996bb8",
            branch="detached HEAD",
            subject="fix: resolve remaining TypeScript and routing issues",
        )
    ]


def test_root_commit():
    assert git_sightings("[main (root-commit) 0a1b2c3] Initial commit\n 1 file changed") == [
        GitSighting(op="commit", sha="0a1b2c3", branch="main", subject="Initial commit")
    ]


def test_branch_with_slash():
    out = "[scutifer/main 52f381a] Add syntax highlighting to HTML export using highlight.js\n 4 files changed"
    assert git_sightings(out) == [
        GitSighting(
            op="commit",
            sha="52f381a",
            branch="scutifer/main",
            subject="Add syntax highlighting to HTML export using highlight.js",
        )
    ]


def test_full_length_sha():
    sha = "1a2b3c4d5e6f7a8b9c0d1a2b3c4d5e6f7a8b9c0d"
    assert git_sightings(f"[feature/x {sha}] msg") == [
        GitSighting(op="commit", sha=sha, branch="feature/x", subject="msg")
    ]


def test_subject_with_brackets_is_kept_whole():
    out = "[streaming 6722d1d] fix: resolve [object][object] display issue in streaming"
    assert git_sightings(out)[0].subject == "fix: resolve [object][object] display issue in streaming"


def test_new_branch_push_has_branch_and_no_sha():
    out = "To github.com:me/repo.git\n * [new branch]      feat -> feat\n"
    assert git_sightings(out) == [GitSighting(op="push", sha=None, branch="feat", remote_ref="feat")]


def test_push_of_head_names_the_remote_branch():
    out = "To https://github.com/badlogic/pi-mono\n   e904b11..9851ee3  HEAD -> main\n"
    assert git_sightings(out) == [
        GitSighting(op="push", sha="9851ee3", old_sha="e904b11", branch="main", remote_ref="main")
    ]


def test_push_line_without_header_needs_a_git_push_command():
    out = "   ef8b447..030d80d  main -> main"
    assert git_sightings(out) == []
    assert git_sightings(out, "git add -A && git commit -m x && git push origin main") == [
        GitSighting(op="push", sha="030d80d", old_sha="ef8b447", branch="main", remote_ref="main")
    ]


def test_ansi_colour_is_ignored():
    assert git_sightings("\x1b[33m[main abc1234]\x1b[0m Add hello function") == [
        GitSighting(op="commit", sha="abc1234", branch="main", subject="Add hello function")
    ]


def test_repeated_sighting_in_one_output_is_reported_once():
    assert len(git_sightings("[main abc1234] x\n[main abc1234] x\n")) == 1


@pytest.mark.parametrize(
    "lookalike",
    [
        "[INFO 2024] starting server",
        "[1/3] Resolving packages...",
        "[main abc1234](https://example.com/commit/abc1234) link",
        "[CI/test-2] ⭐ Run Set up job",
        "[build 2024061] nightly",
        "see [main abc1234] in the middle of a line",
        "[main ABC1234] uppercase is not git's sha format",
        "[main abc12] too short",
        "[two words abc1234] spaces are not allowed in a branch",
        "  acf21f1..42b4429  main -> origin/main",
    ],
)
def test_lookalikes_are_not_git_events(lookalike):
    assert git_sightings(lookalike) == []


def test_digit_only_sha_counts_before_a_diffstat():
    assert git_sightings("[main 2024061] Bump\n 1 file changed, 1 insertion(+)") == [
        GitSighting(op="commit", sha="2024061", branch="main", subject="Bump")
    ]


def test_digit_only_sha_counts_when_the_command_commits():
    assert git_sightings("[main 2024061] Bump", "git commit -am Bump") == [
        GitSighting(op="commit", sha="2024061", branch="main", subject="Bump")
    ]


def test_git_event_uid_for_commit():
    s = GitSighting(op="commit", sha="bf313d2", branch="main", subject="Release v0.27.5")
    assert git_event_uid("claude:toolu_01", s) == "claude:toolu_01:commit:bf313d2"


def test_git_event_uid_for_new_branch_push_uses_branch():
    s = GitSighting(op="push", sha=None, branch="feat", remote_ref="feat")
    assert git_event_uid("call_1", s) == "call_1:push:feat"


def test_git_event_uid_is_the_same_for_two_sightings_of_one_commit():
    a = GitSighting(op="commit", sha="bf313d2", branch="main", subject="Release v0.27.5")
    b = GitSighting(op="commit", sha="bf313d2", branch=None, subject=None)
    assert git_event_uid("c", a) == git_event_uid("c", b)


def test_non_string_output_gives_nothing():
    assert git_sightings(None) == []  # type: ignore[arg-type]


@given(st.text(max_size=2000), st.one_of(st.none(), st.text(max_size=100)))
def test_git_sightings_never_raises(output, command):
    for s in git_sightings(output, command):
        assert s.op in ("commit", "push")


def test_code_with_brackets_and_arrows_but_no_git_line_gives_nothing():
    out = "fn first(v: &[u8]) -> Option<u8> {\n    v.get(0).copied() // [0]\n}\nmain -> main\n"
    assert git_sightings(out, "cargo build") == []
    assert git_sightings(out, "git push") == []  # `main -> main` is no ref line (no sha range)
    assert git_sightings("x\r[main abc1234] after a carriage return") == [
        GitSighting(op="commit", sha="abc1234", branch="main", subject="after a carriage return")
    ]
    assert git_sightings("remote: ok\nTo host:repo.git\n   ef8b447..030d80d  main -> main") == [
        GitSighting(op="push", sha="030d80d", old_sha="ef8b447", branch="main", remote_ref="main")
    ]
