"""Spec for `parsers.shell`: file touches from shell commands and patches.

Commands marked "corpus" are real ones from corpus/home (Claude/pi Bash inputs, Codex
``["bash", "-lc", …]`` argv lists and apply_patch envelopes).
"""

from __future__ import annotations

import shlex

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent_history.parsers.common.shell import touch_uid, touches_from_patch, touches_from_shell

OPS = {"read", "create", "edit", "delete", "move"}


# --- reads ----------------------------------------------------------------------------------


def test_cat_reads_every_file():
    assert touches_from_shell("cat a.txt b.txt") == [("read", "a.txt"), ("read", "b.txt")]


def test_head_with_count_reads_the_file_corpus():
    assert touches_from_shell("head -50 packages/coding-agent/CHANGELOG.md") == [
        ("read", "packages/coding-agent/CHANGELOG.md")
    ]


def test_tail_option_values_are_not_paths():
    assert touches_from_shell("tail -n 20 -f log.txt") == [("read", "log.txt")]


def test_sed_n_reads_the_file_after_the_script_corpus():
    assert touches_from_shell("sed -n '1,200p' src/utils/session-db.ts") == [("read", "src/utils/session-db.ts")]


def test_awk_program_is_not_a_path():
    assert touches_from_shell("awk -F: '{print $1}' /etc/passwd") == [("read", "/etc/passwd")]


def test_jq_filter_is_not_a_path():
    assert touches_from_shell("jq -r .name package.json") == [("read", "package.json")]


def test_glob_is_kept_as_given_corpus():
    assert touches_from_shell("wc -l /workspace/claude-code-log/claude_code_log/*.py | tail -1") == [
        ("read", "/workspace/claude-code-log/claude_code_log/*.py")
    ]


def test_input_redirect_reads():
    assert touches_from_shell("patch -p1 < fix.diff") == [("read", "fix.diff")]


def test_searches_and_listings_are_not_touches_corpus():
    assert touches_from_shell('grep -r "userMessageText" packages/coding-agent/src --include="*.ts"') == []
    assert touches_from_shell("ls -la /workspace/claude-code-log") == []


# --- writes ---------------------------------------------------------------------------------


def test_sed_i_edits_bsd_form_corpus():
    cmd = "sed -i '' 's/new Editor()/new Editor(defaultEditorTheme)/g' packages/tui/test/editor.test.ts"
    assert touches_from_shell(cmd) == [("edit", "packages/tui/test/editor.test.ts")]


def test_sed_i_edits_gnu_form_with_suffix():
    assert touches_from_shell("sed -i.bak -e 's/a/b/' x.conf y.conf") == [("edit", "x.conf"), ("edit", "y.conf")]


def test_touch_creates():
    assert touches_from_shell("touch -t 202401010000 stamp") == [("create", "stamp")]


def test_output_redirect_creates_and_append_edits():
    assert touches_from_shell("echo x > out.txt; echo y >> log.txt") == [("create", "out.txt"), ("edit", "log.txt")]


def test_fd_duplication_and_dev_null_are_not_files_corpus():
    assert touches_from_shell("cd packages/coding-agent && npm run build 2>&1 | tail -3") == []
    assert touches_from_shell("make 2>/dev/null") == []


def test_stderr_redirect_creates():
    assert touches_from_shell("make 2> build.log") == [("create", "build.log")]


def test_tee_creates_and_tee_a_edits():
    assert touches_from_shell("echo hi | tee out") == [("create", "out")]
    assert touches_from_shell("echo hi | tee -a log") == [("edit", "log")]


def test_heredoc_into_file_creates_it_and_body_is_not_a_command():
    cmd = "cat > notes.md <<'EOF'\nrm -rf /\nEOF\ncat notes.md"
    assert touches_from_shell(cmd) == [("create", "notes.md"), ("read", "notes.md")]


def test_commit_message_heredoc_touches_nothing_corpus():
    cmd = "git commit -m \"$(cat <<'EOF'\nfix: x > y; rm z\nEOF\n)\" && git push"
    assert touches_from_shell(cmd) == []


def test_sort_output_option_creates():
    assert touches_from_shell("sort -o out.txt in.txt") == [("create", "out.txt"), ("read", "in.txt")]


# --- deletes and moves ----------------------------------------------------------------------


def test_rm_rf_deletes_glob_as_given_e18():
    assert touches_from_shell("rm -rf /home/user/proj/tmp/*") == [("delete", "/home/user/proj/tmp/*")]


def test_rm_with_tilde_is_kept_unexpanded_corpus():
    assert touches_from_shell("rm ~/.pi/agent/themes/test.json") == [("delete", "~/.pi/agent/themes/test.json")]


def test_git_rm_deletes_but_cached_does_not():
    assert touches_from_shell("git rm old.py") == [("delete", "old.py")]
    assert touches_from_shell("git rm -r --cached node_modules") == []


def test_mv_reports_move_of_source_and_create_of_destination():
    assert touches_from_shell("mv a.txt b.txt") == [("move", "a.txt"), ("create", "b.txt")]


def test_mv_into_directory_creates_basename_there():
    assert touches_from_shell("mv src/a.py src/b.py lib") == [
        ("move", "src/a.py"),
        ("create", "lib/a.py"),
        ("move", "src/b.py"),
        ("create", "lib/b.py"),
    ]


def test_mv_target_directory_option():
    assert touches_from_shell("mv -t dest a.py") == [("move", "a.py"), ("create", "dest/a.py")]


def test_git_mv_is_a_move():
    assert touches_from_shell("git mv a.py b.py") == [("move", "a.py"), ("create", "b.py")]


def test_cp_reads_source_and_creates_destination_corpus():
    cmd = "mkdir -p ~/.pi/agent/themes && cp packages/coding-agent/src/theme/dark.json ~/.pi/agent/themes/test.json"
    assert touches_from_shell(cmd) == [
        ("read", "packages/coding-agent/src/theme/dark.json"),
        ("create", "~/.pi/agent/themes/test.json"),
    ]


def test_cp_to_trailing_slash_is_a_directory():
    assert touches_from_shell("cp a.txt backup/") == [("read", "a.txt"), ("create", "backup/a.txt")]


def test_mkdir_is_ignored():
    assert touches_from_shell("mkdir -p .github/workflows") == []


# --- context: cd, wrappers, shells ----------------------------------------------------------


def test_cd_joins_later_relative_paths():
    assert touches_from_shell("cd pkg && cat ../README.md src/a.ts") == [
        ("read", "README.md"),
        ("read", "pkg/src/a.ts"),
    ]


def test_cd_absolute_makes_paths_absolute_corpus():
    cmd = "cd /Users/user2/workspaces/pi-mono && sed -n '1,20p' packages/tui/src/tui.ts"
    assert touches_from_shell(cmd) == [("read", "/Users/user2/workspaces/pi-mono/packages/tui/src/tui.ts")]


def test_unknown_cd_target_leaves_paths_as_given():
    assert touches_from_shell("cd $DIR && rm x") == [("delete", "x")]


def test_git_dash_c_joins_paths():
    assert touches_from_shell("git -C repo rm x") == [("delete", "repo/x")]


def test_wrappers_and_assignments_are_looked_through():
    assert touches_from_shell("sudo -u root rm /etc/x") == [("delete", "/etc/x")]
    assert touches_from_shell("FOO=1 env BAR=2 cat y") == [("read", "y")]
    assert touches_from_shell("timeout 10 tail -f app.log") == [("read", "app.log")]


def test_bash_lc_script_is_parsed_corpus():
    argv = ["bash", "-lc", "sed -n '1,200p' src/utils/fs-scanner.ts"]
    assert touches_from_shell(shlex.join(argv)) == [("read", "src/utils/fs-scanner.ts")]


def test_shell_evaluated_arguments_are_skipped():
    assert touches_from_shell("cat $(npm root -g)/x.json") == []
    assert touches_from_shell('rm "$TMPDIR/x"') == []


def test_unbalanced_quotes_fall_back_to_plain_split():
    assert touches_from_shell('cat "unbalanced') == [("read", "unbalanced")]


def test_duplicates_are_reported_once():
    assert touches_from_shell("cat a; cat a") == [("read", "a")]


# --- apply_patch through the shell -----------------------------------------------------------


def test_codex_bash_lc_apply_patch_heredoc_corpus():
    script = (
        "apply_patch <<'PATCH'\n*** Begin Patch\n*** Update File: components/chat/chat-helpers/index.ts\n"
        "@@\n-a\n+b\n*** End Patch\nPATCH"
    )
    assert touches_from_shell(shlex.join(["bash", "-lc", script])) == [
        ("edit", "components/chat/chat-helpers/index.ts")
    ]


def test_apply_patch_argv_with_envelope_argument_corpus():
    argv = ["apply_patch", "*** Begin Patch\n*** Update File: src/App.tsx\n@@\n-x\n+y\n*** End Patch\n"]
    assert touches_from_shell(shlex.join(argv)) == [("edit", "src/App.tsx")]


def test_apply_patch_after_cd_joins_paths():
    cmd = "cd /x && apply_patch <<'PATCH'\n*** Begin Patch\n*** Add File: a.py\n+x\n*** End Patch\nPATCH"
    assert touches_from_shell(cmd) == [("create", "/x/a.py")]


def test_git_apply_heredoc_reads_the_diff():
    cmd = "git apply <<'EOF'\n--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a\n+b\nEOF"
    assert touches_from_shell(cmd) == [("edit", "x.py")]


# --- touches_from_patch ---------------------------------------------------------------------


ENVELOPE = """*** Begin Patch
*** Add File: docs/new.md
+# New
*** Delete File: old.txt
*** Update File: src/utils/logger.ts
@@
-const a = 1
+const a = 2
*** Update File: src/x.ts
*** Move to: src/y.ts
@@
-x
+y
*** End Patch"""


def test_envelope_add_delete_update_move():
    assert touches_from_patch(ENVELOPE) == [
        ("create", "docs/new.md"),
        ("delete", "old.txt"),
        ("edit", "src/utils/logger.ts"),
        ("move", "src/x.ts"),
        ("create", "src/y.ts"),
    ]


def test_envelope_markers_outside_begin_end_are_ignored():
    text = "const s = '*** Update File: ' + x\n*** Update File: '.length).trim()\n"
    assert touches_from_patch(text) == []


GIT_DIFF = """diff --git a/src/x.py b/src/x.py
index 111..222 100644
--- a/src/x.py
+++ b/src/x.py
@@ -1,3 +1,3 @@
 a
--- comment removed
+++ added
 c
diff --git a/new.txt b/new.txt
new file mode 100644
--- /dev/null
+++ b/new.txt
@@ -0,0 +1 @@
+hi
diff --git a/gone.txt b/gone.txt
deleted file mode 100644
--- a/gone.txt
+++ /dev/null
@@ -1 +0,0 @@
-bye
diff --git a/old name.txt b/new name.txt
similarity index 100%
rename from old name.txt
rename to new name.txt
diff --git a/empty b/empty
new file mode 100644
"""


def test_git_diff_edit_create_delete_rename():
    assert touches_from_patch(GIT_DIFF) == [
        ("edit", "src/x.py"),
        ("create", "new.txt"),
        ("delete", "gone.txt"),
        ("move", "old name.txt"),
        ("create", "new name.txt"),
        ("create", "empty"),
    ]


def test_hunk_lines_that_look_like_headers_are_not_headers():
    assert ("edit", "comment removed") not in touches_from_patch(GIT_DIFF)


def test_plain_unified_diff_with_timestamps():
    diff = "--- x.c\t2024-01-01\n+++ x.c\t2024-01-02\n@@ -1 +1 @@\n-a\n+b\n--- y.c\n+++ y.c\n@@ -1 +1 @@\n-a\n+b\n"
    assert touches_from_patch(diff) == [("edit", "x.c"), ("edit", "y.c")]


def test_non_string_patch_gives_nothing():
    assert touches_from_patch(None) == []  # type: ignore[arg-type]


# --- keys -----------------------------------------------------------------------------------


def test_touch_uid_joins_call_op_and_path():
    assert touch_uid("codex:call_1", "edit", "src/App.tsx") == "codex:call_1:edit:src/App.tsx"


def test_touch_uid_shortens_very_long_paths_deterministically():
    path = "a/" * 400
    uid = touch_uid("c", "read", path)
    assert uid == touch_uid("c", "read", path)
    assert len(uid) == len("c:read:") + 256 + 1 + 16


# --- totality -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "odd", [None, 42, "", "   ", "'", '"', "<<", "<<EOF", "| | |", "cd", "mv a", "sed -i", "bash -c"]
)
def test_odd_commands_give_a_list(odd):
    assert isinstance(touches_from_shell(odd), list)  # type: ignore[arg-type]


_PIECES = list("ab/.-> <|&;'\"$()\n\\*#") + [
    "rm ",
    "cat ",
    "mv ",
    "cd ",
    "sed -i ",
    "tee ",
    "<<E\n",
    "E\n",
    "2>&1",
    "*** Begin Patch\n",
]


@given(st.lists(st.sampled_from(_PIECES), max_size=40).map("".join))
def test_touches_from_shell_never_raises(command):
    for op, path in touches_from_shell(command):
        assert op in OPS
        assert isinstance(path, str) and path


@given(st.text(max_size=500))
def test_touches_from_patch_never_raises(patch):
    for op, _ in touches_from_patch(patch):
        assert op in OPS


def test_plain_tokens_match_shlex():
    """Issue 18: commands without quotes or backslashes skip `shlex`; the fast path must give
    exactly what `shlex` (the tokeniser's reference configuration) gives."""
    import random
    import shlex

    from agent_history.parsers.common.shell import tokenise

    def reference(command: str) -> list[str]:
        lex = shlex.shlex(command, posix=True, punctuation_chars=tokenise.PUNCT)
        lex.whitespace, lex.whitespace_split, lex.commenters = " \t\r", True, ""
        return list(lex)

    alphabet = list("ab c;&|()<>\n\t\r-./*?=~#$`{}[]!é\x0b\f12")
    rng = random.Random(18)
    commands = ["", "cd /x && cat a.txt | wc -l > out.log", "a&&b;;c||d &> e", "x\n\ny ( z )"]
    commands += ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40))) for _ in range(5000)]
    for command in commands:
        assert tokenise.tokens(command) == reference(command), repr(command)
    assert tokenise.tokens("cat a.txt|wc -l") == ["cat", "a.txt", "|", "wc", "-l"]


def test_quoted_tokens_match_shlex():
    """Issue 27: commands with quotes or backslashes are tokenised by one regular-expression pass
    (`_quoted_tokens`), not `shlex`; it must give exactly `shlex`'s tokens — quotes resolved, a
    backslash in double quotes escaping only ``"`` and ``\\``, ``''`` an empty word — and hand
    back None exactly where `shlex` raises (an unclosed quote, a backslash at the end)."""
    import random
    import shlex

    from agent_history.parsers.common.shell import tokenise

    def reference(command: str) -> list[str] | None:
        lex = shlex.shlex(command, posix=True, punctuation_chars=tokenise.PUNCT)
        lex.whitespace, lex.whitespace_split, lex.commenters = " \t\r", True, ""
        try:
            return list(lex)
        except ValueError:
            return None

    alphabet = list("ab \t\r\n'\"\\;|&()<>$#=-./") + ["é", "\x0b", "''", '""', "\\\\", '\\"']
    rng = random.Random(27)
    commands = [
        "bash -lc 'cd src && cat a.py'",
        """echo "a \\"b\\" \\$c \\\\d" 'e\\f' g\\ h ''""",
        "grep -n 'x|y' \"f g.txt\">out",
        "'unclosed",
        "trailing\\",
    ]
    commands += ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 30))) for _ in range(20000)]
    fell_back = 0
    for command in commands:
        expected = reference(command)
        fell_back += expected is None
        assert tokenise.quoted_tokens(command) == expected, repr(command)
    assert tokenise.tokens(commands[1]) == ["echo", 'a "b" \\$c \\d', "e\\f", "g h", ""]
    assert tokenise.quoted_tokens("'unclosed") is None and tokenise.quoted_tokens("trailing\\") is None
    assert 1000 < fell_back < 19000  # both outcomes are exercised


def test_heredoc_split_keeps_a_command_without_comment_or_heredoc_as_is():
    from agent_history.parsers.common.shell import heredocs

    command = 'cat \'a b\' "c\\"d" | wc -l && echo x<y'
    assert heredocs.split_heredocs(command) == (command, [])
    assert heredocs.split_heredocs("cat <<'EOF' > f # note\nbody 'q\nEOF\nrm g") == (
        "cat << __ah_heredoc_0__ > f \nrm g",
        ["body 'q"],
    )
