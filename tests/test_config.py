"""Config file validation: a wrong type is a one-line ConfigError naming the key, never a traceback."""

from __future__ import annotations

import pytest

from agent_history.config import ConfigError, load_settings
from agent_history.harnesses import NAMES

PREFIXES = ", ".join(f"{n}-" for n in sorted(NAMES))  # what a namespace may start with


@pytest.mark.parametrize(
    ("toml", "message"),
    [
        ("database = 3", "config [database] must be a table, got int"),
        ("[database]\ndsn = 5", "config database.dsn must be a string, got int"),
        ("[sources]\nclaude-local = 5", "config sources.claude-local must be a path string, got int"),
        ('cold_sources = "x"', "config [cold_sources] must be a table, got str"),
        (
            '[sources]\n"Bad Name" = "/tmp/x"',
            f"config [sources] namespace 'Bad Name' must start with one of {PREFIXES}",
        ),
        (
            '[cold_sources]\nnotes = "/tmp/x"',
            f"config [cold_sources] namespace 'notes' must start with one of {PREFIXES}",
        ),
        ('[memories]\nnotes = "/tmp/x"', f"config [memories] namespace 'notes' must start with one of {PREFIXES}"),
        ("contexts = 5", "config [contexts] must be a table, got int"),
        ("[contexts]\nwork = [1, 2]", "config contexts.work must be a list of namespace strings"),
        ('embedding = "openai"', "config [embedding] must be a table, got str"),
        (
            "[database]\nstatement_timeout_ms = -1",
            "config database.statement_timeout_ms must be a whole number > 0, not -1",
        ),
        (
            "[database]\nstatement_timeout_ms = true",
            "config database.statement_timeout_ms must be a whole number > 0, not True",
        ),
        (
            "[database]\nstatement_timeout_ms = 1e400",
            "config database.statement_timeout_ms must be a whole number > 0, not inf",
        ),
        ("[database]\nidle_stop_s = nan", "config database.idle_stop_s must be a number of seconds ≥ 0, not nan"),
        ("[database]\nidle_stop_s = -inf", "config database.idle_stop_s must be a number of seconds ≥ 0, not -inf"),
        ("[service]\nquery_idle_s = inf", "config service.query_idle_s must be a number of seconds ≥ 0, not inf"),
        ("[service]\nquery_idle_s = -1", "config service.query_idle_s must be a number of seconds ≥ 0, not -1"),
        ("[index]\nbulk_min_bytes = -1", "config index.bulk_min_bytes must be a whole number of bytes ≥ 0, not -1"),
        ("[index]\nbulk_min_bytes = inf", "config index.bulk_min_bytes must be a whole number of bytes ≥ 0, not inf"),
        ("[metrics]\ninterval = nan", "config metrics.interval must be a number of seconds between 1 and 3600"),
        ("[metrics]\ninterval = 1e400", "config metrics.interval must be a number of seconds between 1 and 3600"),
        (
            "[plans.claude]\nweek_cost_usd = 1e400",
            "config plans.claude.week_cost_usd must be a finite number > 0, not inf",
        ),
        (
            "[plans.claude]\nblock_cost_usd = nan",
            "config plans.claude.block_cost_usd must be a finite number > 0, not nan",
        ),
        ("[plans.claude]\nweek_tokens = -5", "config plans.claude.week_tokens must be a finite number > 0, not -5"),
        (
            '[embedding]\nprovider = "openai"\nmodel = "m"\nbatch_size = -8',
            "config embedding.batch_size must be a whole number > 0, not -8",
        ),
        (
            '[embedding]\nprovider = "openai"\nmodel = "m"\nbatch_size = 2.5',
            "config embedding.batch_size must be a whole number > 0, not 2.5",
        ),
        (
            '[embedding]\nprovider = "openai"\nmodel = "m"\nmax_tokens_per_day = inf',
            "config embedding.max_tokens_per_day must be a whole number > 0, not inf",
        ),
        (
            '[embedding]\nprovider = "openai"\nmodel = "m"\ndimensions = -512',
            "config embedding.dimensions must be a whole number > 0, not -512",
        ),
        (
            '[embedding]\nprovider = "openai"\nmodel = "m"\nchunk_overlap = -1',
            "config embedding.chunk_overlap must be a whole number > 0, not -1",
        ),
        (
            '[embedding]\nprovider = "openai"\nmodel = "m"\ntimeout_s = nan',
            "config embedding.timeout_s must be a number of seconds > 0, not nan",
        ),
        (
            '[embedding]\nprovider = "openai"\nmodel = "m"\nquery_timeout_s = -3',
            "config embedding.query_timeout_s must be a number of seconds > 0, not -3",
        ),
        (
            '[embedding]\nprovider = "local"\nlocal_model_path = "/m"\nservice_idle_s = inf',
            "config embedding.service_idle_s must be a number of seconds ≥ 0, not inf",
        ),
    ],
)
def test_wrong_types_are_named_in_one_line(tmp_path, monkeypatch, toml, message):
    path = tmp_path / "config.toml"
    path.write_text(toml + "\n")
    monkeypatch.setenv("AGENT_HISTORY_CONFIG", str(path))
    with pytest.raises(ConfigError) as err:
        load_settings()
    assert str(err.value) == message


def test_a_config_file_that_is_not_utf8_is_a_config_error(tmp_path, monkeypatch):
    path = tmp_path / "config.toml"
    path.write_bytes(b"\xff\xfe[database]\n")
    monkeypatch.setenv("AGENT_HISTORY_CONFIG", str(path))
    with pytest.raises(ConfigError, match="cannot read config"):
        load_settings()


def test_sources_contexts_and_dsn_are_read(tmp_path, monkeypatch):
    path = tmp_path / "config.toml"
    path.write_text(
        '[database]\ndsn = "host=/x dbname=y"\n[sources]\nclaude-work = "~/w"\n[contexts]\nwork = ["claude-work"]\n'
    )
    monkeypatch.setenv("AGENT_HISTORY_CONFIG", str(path))
    monkeypatch.delenv("AGENT_HISTORY_DSN", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    s = load_settings()
    assert s.dsn == "host=/x dbname=y"
    assert s.sources["claude-work"] == tmp_path / "w"
    assert s.contexts == {"work": ["claude-work"]}
    assert load_settings(dsn="host=/z").dsn == "host=/z"


def _write(tmp_path, monkeypatch, text: str):
    path = tmp_path / "config.toml"
    path.write_text(text)
    monkeypatch.setenv("AGENT_HISTORY_CONFIG", str(path))
    monkeypatch.delenv("AGENT_HISTORY_DSN", raising=False)
    return path


@pytest.mark.parametrize(
    ("toml", "key", "known"),
    [
        ('[database]\ndsnn = "host=/x"\n', "database.dsnn", "dsn, reader_dsn, reader_password"),
        ('[embedding]\nprovider = "openai"\nmodel = "m"\nbatchsize = 8\n', "embedding.batchsize", "provider, model"),
    ],
)
def test_an_unknown_key_in_a_known_section_is_an_error_naming_file_and_key(tmp_path, monkeypatch, toml, key, known):
    # issue 10: a misspelt `dsn` silently meant the embedded server
    path = _write(tmp_path, monkeypatch, toml)
    with pytest.raises(ConfigError) as err:
        load_settings()
    message = str(err.value)
    assert message.startswith(f"config {path}: unknown key {key} (known: {known}")
    assert "\n" not in message


def test_an_unknown_section_is_a_warning_naming_file_and_section(tmp_path, monkeypatch):
    path = _write(tmp_path, monkeypatch, '[databse]\ndsn = "host=/x"\n[sources]\nclaude-work = "/w"\n')
    s = load_settings()
    assert s.dsn is None  # the misspelt section is not read ...
    assert s.warnings == [  # ... and says so
        f"config {path}: unknown section [databse] ignored (known: database, sources, cold_sources, contexts, embedding, metrics, journal, web, litellm, memories, repos, identity, aider, crush, archive, index, host, plans, service)"
    ]


def test_a_correct_config_has_no_warnings(tmp_path, monkeypatch):
    _write(tmp_path, monkeypatch, '[database]\ndsn = "host=/x"\n[contexts]\nwork = ["claude-work"]\n')
    assert load_settings().warnings == []


def test_agent_history_config_naming_a_missing_file_is_an_error(tmp_path, monkeypatch):
    missing = tmp_path / "nope.toml"
    monkeypatch.setenv("AGENT_HISTORY_CONFIG", str(missing))
    with pytest.raises(ConfigError) as err:
        load_settings()
    assert str(err.value) == f"config file {missing} (AGENT_HISTORY_CONFIG) does not exist"


def test_no_config_file_at_the_default_place_means_defaults(tmp_path, monkeypatch):
    monkeypatch.delenv("AGENT_HISTORY_CONFIG", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("AGENT_HISTORY_DSN", raising=False)
    s = load_settings()
    assert (s.dsn, s.contexts, s.warnings) == (None, {}, [])
