"""Newcomer stop 39: what a user who already had agent configs found when trying to break
`connect` / `disconnect` (and their ``--hook``). Real CLI processes, HOME a temp directory."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from agent_history.connect.edit import toml_remove
from agent_history.session.filters import project_part
from tests.corpus_db import corpus_db  # noqa: F401 - fixture
from tests.test_cli_arguments import cli, environment
from tests.test_web import Served, _env

PY = sys.executable

CODEX_TOML = """# my codex config
model = "o3"  # inline comment

[mcp_servers.other]
command = "other"
# trailing comment about other

# --- profiles ---
[profiles.fast]
model = "gpt-5"
"""


def run(home: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "XDG_CONFIG_HOME")}
    env.update(HOME=str(home), AGENT_HISTORY_DATA_DIR=str(home / "data"), AGENT_HISTORY_QUERY_IDLE_S="0")
    return subprocess.run([PY, "-m", "agent_history", *args], env=env, capture_output=True, text=True, timeout=120)


def _dotfile(tmp_path: Path, link: Path, text: str) -> Path:
    """`text` in a dotfiles directory, `link` a symlink to it (as stow / home-manager lay out)."""
    real = tmp_path / "dotfiles" / link.name
    real.parent.mkdir(parents=True, exist_ok=True)
    real.write_text(text, encoding="utf-8")
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(real)
    return real


def test_connect_writes_through_a_symlinked_config_and_disconnect_restores_it_byte_for_byte(tmp_path):
    home = tmp_path / "home"
    link = home / ".codex" / "config.toml"
    real = _dotfile(tmp_path, link, CODEX_TOML)
    for _ in range(2):  # twice in a row: the second is unchanged
        added = run(home, "connect", "codex")
        assert added.returncode == 0, added.stderr
    assert link.is_symlink() and link.resolve() == real  # was replaced by a regular file
    text = real.read_text(encoding="utf-8")
    assert text.startswith(CODEX_TOML) and "[mcp_servers.agent-history]" in text
    assert sorted(p.name for p in real.parent.iterdir()) == ["config.toml"]  # no backup among the dotfiles
    assert (home / ".codex" / "config.toml.bak").read_text(encoding="utf-8") == CODEX_TOML
    gone = run(home, "disconnect", "codex")
    assert gone.returncode == 0, gone.stderr
    assert link.is_symlink() and real.read_text(encoding="utf-8") == CODEX_TOML


def test_connect_hook_writes_through_a_symlinked_claude_settings_file(tmp_path):
    home = tmp_path / "home"
    link = home / ".claude" / "settings.json"
    mine = '{\n  "model": "opus",\n  "cleanupPeriodDays": 365\n}\n'
    real = _dotfile(tmp_path, link, mine)
    added = run(home, "connect", "claude", "--hook")
    assert added.returncode == 0, added.stderr
    assert link.is_symlink()
    settings = json.loads(real.read_text(encoding="utf-8"))
    assert settings["model"] == "opus" and settings["hooks"]["Stop"][0]["hooks"][0]["command"].endswith("hook claude")
    gone = run(home, "disconnect", "claude", "--hook")
    assert gone.returncode == 0, gone.stderr
    assert link.is_symlink() and json.loads(real.read_text(encoding="utf-8")) == {
        "model": "opus",
        "cleanupPeriodDays": 365,
    }


def test_a_config_that_is_not_utf8_is_one_line_exit_2_and_untouched(tmp_path):
    home = tmp_path / "home"
    config = home / ".codex" / "config.toml"
    config.parent.mkdir(parents=True)
    raw = b'model = "o3"\n# caf\xe9\n'
    config.write_bytes(raw)
    for args in (("connect", "codex"), ("connect", "codex", "--hook"), ("disconnect", "codex")):
        out = run(home, *args)
        assert out.returncode == 2, (args, out.stderr)
        assert out.stderr == f"error: {config} is not UTF-8 text (byte 18); not changed\n", args
        assert config.read_bytes() == raw


def test_a_read_only_config_is_refused_with_its_mode_and_untouched(tmp_path):
    home = tmp_path / "home"
    config = home / ".codex" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text(CODEX_TOML, encoding="utf-8")
    config.chmod(0o444)
    for args in (("connect", "codex"), ("connect", "codex", "--hook")):
        out = run(home, *args)
        assert out.returncode == 2, (args, out.stderr)
        assert out.stderr == f"error: {config} is read-only (mode 0444); not changed\n", args
        assert config.read_text(encoding="utf-8") == CODEX_TOML
        assert not (home / ".codex" / "config.toml.bak").exists()


def test_a_config_path_that_is_a_directory_is_one_line_exit_2(tmp_path):
    home = tmp_path / "home"
    (home / ".codex" / "config.toml").mkdir(parents=True)
    out = run(home, "connect", "codex")
    assert out.returncode == 2
    assert out.stderr == f"error: cannot read {home / '.codex' / 'config.toml'}: Is a directory; not changed\n"


# --- the web API refuses an unknown namespace as the CLI's --namespace does ----------------------


@pytest.fixture(scope="module")
def web(corpus_db, tmp_path_factory):  # noqa: F811 - the imported fixture
    s = Served(_env(tmp_path_factory.mktemp("web-nc39"), corpus_db.dsn, corpus_db.reader_dsn))
    yield s
    err = s.stop()
    assert "Traceback" not in err, err


@pytest.mark.parametrize(
    ("cli_args", "route"),
    [
        (("sessions", "--json"), "/api/sessions?"),
        (("usage", "--json"), "/api/usage/report?"),
        (("touched", "src", "--json"), "/api/touched?pattern=src&"),
    ],
)
def test_an_unknown_namespace_is_the_same_refusal_from_the_cli_and_the_web_api(
    corpus_db,  # noqa: F811 - the imported fixture
    own_tmp,
    web,
    cli_args,
    route,
):
    r = cli(environment(corpus_db, own_tmp), *cli_args, "--namespace", "nowhere")
    assert r.returncode == 2 and r.stdout == "", r.stderr
    line = r.stderr.removeprefix("error: ").rstrip("\n")
    assert line.startswith("unknown namespace 'nowhere' (indexed: ")  # was 200 with nothing found
    api = httpx.get(web.url + route + "namespace=nowhere", timeout=60)
    assert (api.status_code, api.json()) == (400, {"error": line})


def test_a_known_namespace_still_answers_in_the_web_api(corpus_db, web):  # noqa: F811
    api = httpx.get(web.url + "/api/sessions?namespace=claude-local&limit=1000", timeout=60)
    assert api.status_code == 200, api.text[:300]
    rows = api.json()["sessions"]
    assert rows and {r["namespace"] for r in rows} == {"claude-local"}


# --- usage --project with a trailing slash (a tab-completed directory) ---------------------------

PROJECT = "/Users/user1/workspace/claude-code-log"


def test_usage_project_with_a_trailing_slash_counts_what_the_directory_counts(corpus_db, own_tmp):  # noqa: F811
    env = environment(corpus_db, own_tmp)
    plain = cli(env, "usage", "--project", PROJECT, "--json", "--timezone", "UTC")
    slash = cli(env, "usage", "--project", PROJECT + "/", "--json", "--timezone", "UTC")
    assert plain.returncode == 0 and slash.returncode == 0, slash.stderr  # was exit 1, no model calls match
    assert json.loads(plain.stdout)["totals"]["totalTokens"] == 4_282_116
    assert json.loads(slash.stdout) == json.loads(plain.stdout)


def test_project_part_drops_trailing_slashes_and_escapes_like_metacharacters():
    assert project_part("/src/app//") == "%/src/app%"
    assert project_part("/") == "%/%"
    assert project_part("my_app/") == "%my\\_app%"


# --- disconnect keeps the comment the user wrote under our TOML table -----------------------------


def test_disconnect_keeps_a_comment_the_user_wrote_between_our_table_and_theirs(tmp_path):
    home = tmp_path / "home"
    config = home / ".codex" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text('# top\nmodel = "o3"\n', encoding="utf-8")
    assert run(home, "connect", "codex").returncode == 0
    mine = '# my note added later, about the next table\n[mcp_servers.mine]\ncommand = "mine"  # keep me\n'
    config.write_text(config.read_text(encoding="utf-8") + mine, encoding="utf-8")
    gone = run(home, "disconnect", "codex")
    assert gone.returncode == 0, gone.stderr
    assert config.read_text(encoding="utf-8") == '# top\nmodel = "o3"\n\n' + mine  # the note was lost


def test_toml_remove_without_trailing_comments_is_tomlkits_removal():
    text = 'a = 1\n\n[mcp_servers.agent-history]\ncommand = "x"\n\n[mcp_servers.mine]\ncommand = "m"\n'
    assert toml_remove(text, ("mcp_servers", "agent-history")) == 'a = 1\n\n[mcp_servers.mine]\ncommand = "m"\n'
    ending = 'a = 1\n\n[mcp_servers.agent-history]\ncommand = "x"\n# the end, mine\n'
    assert toml_remove(ending, ("mcp_servers", "agent-history")) == "a = 1\n\n# the end, mine\n"


# --- a JSON config with a key given twice is not rewritten (one of the values would be lost) -----

DUPLICATE = '{\n  "mcpServers": {"a": {"command": "first"}},\n  "mcpServers": {"b": {"command": "second"}}\n}\n'


def test_a_json_config_with_a_duplicate_key_is_refused_untouched(tmp_path):
    home = tmp_path / "home"
    config = home / ".gemini" / "settings.json"
    config.parent.mkdir(parents=True)
    config.write_text(DUPLICATE, encoding="utf-8")
    for args in (("connect", "gemini"), ("connect", "gemini", "--hook"), ("disconnect", "gemini")):
        out = run(home, *args)
        assert out.returncode == 2, (args, out.stdout, out.stderr)
        assert "the key 'mcpServers' appears twice in one object" in out.stderr, args
        assert config.read_text(encoding="utf-8") == DUPLICATE  # was rewritten holding "b" only


# --- a dangling dotfiles link: connect creates the file it names, disconnect removes that file ---


def test_a_dangling_symlinked_config_keeps_its_link_through_connect_and_disconnect(tmp_path):
    home = tmp_path / "home"
    link = home / ".cursor" / "mcp.json"
    real = tmp_path / "dotfiles" / "cursor" / "mcp.json"  # not there yet
    link.parent.mkdir(parents=True)
    link.symlink_to(real)
    added = run(home, "connect", "cursor")
    assert added.returncode == 0, added.stderr
    assert link.is_symlink() and json.loads(real.read_text(encoding="utf-8"))["mcpServers"]["agent-history"]
    gone = run(home, "disconnect", "cursor")
    assert gone.returncode == 0, gone.stderr
    assert link.is_symlink() and not real.exists()  # the link was deleted and the file kept our entry


# --- the user's own <config>.bak is never overwritten ---------------------------------------------


def test_connect_and_disconnect_never_overwrite_a_backup_and_reuse_an_identical_one(tmp_path):
    home = tmp_path / "home"
    config = home / ".codex" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text(CODEX_TOML, encoding="utf-8")
    mine = home / ".codex" / "config.toml.bak"
    mine.write_text("# my own backup of last year\n", encoding="utf-8")
    for _ in range(2):  # two round trips: two backups, not four
        assert run(home, "connect", "codex").returncode == 0
        assert run(home, "disconnect", "codex").returncode == 0
    assert mine.read_text(encoding="utf-8") == "# my own backup of last year\n"  # was overwritten
    assert (home / ".codex" / "config.toml.bak.1").read_text(encoding="utf-8") == CODEX_TOML
    connected = (home / ".codex" / "config.toml.bak.2").read_text(encoding="utf-8")
    assert connected.startswith(CODEX_TOML) and "[mcp_servers.agent-history]" in connected
    assert sorted(p.name for p in config.parent.glob("config.toml.bak*")) == [
        "config.toml.bak",
        "config.toml.bak.1",
        "config.toml.bak.2",
    ]
    assert config.read_text(encoding="utf-8") == CODEX_TOML
