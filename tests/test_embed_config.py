"""The [embedding] config section: off until configured, defaults, model key, clear errors."""

from __future__ import annotations

import pytest

from agent_history.config import ConfigError, load_settings


def settings_from(tmp_path, monkeypatch, body: str):
    path = tmp_path / "config.toml"
    path.write_text(body)
    monkeypatch.setenv("AGENT_HISTORY_CONFIG", str(path))
    return load_settings()


def test_embeddings_are_off_without_the_section(tmp_path, monkeypatch):
    assert settings_from(tmp_path, monkeypatch, "").embedding is None


def test_openai_section_with_defaults_and_dimensions_in_the_model_key(tmp_path, monkeypatch):
    e = settings_from(
        tmp_path,
        monkeypatch,
        '[embedding]\nprovider = "openai"\nmodel = "text-embedding-3-large"\n'
        'dimensions = 1024\napi_key_env = "OPENAI_API_KEY"\nmax_tokens_per_day = 5000\n',
    ).embedding
    assert (e.provider, e.base_url, e.api_key_env, e.batch_size) == (
        "openai",
        "https://api.openai.com/v1",
        "OPENAI_API_KEY",
        64,
    )
    assert (e.max_tokens_per_day, e.max_tokens_per_run, e.query_timeout_s) == (5000, 2_000_000, 3.0)
    assert e.model_key == "text-embedding-3-large@1024"


def test_local_provider_takes_its_model_name_from_the_path(tmp_path, monkeypatch):
    e = settings_from(
        tmp_path, monkeypatch, '[embedding]\nprovider = "local"\nlocal_model_path = "/models/all-MiniLM-L6-v2"\n'
    ).embedding
    assert (e.model_key, str(e.local_model_path)) == ("all-MiniLM-L6-v2", "/models/all-MiniLM-L6-v2")


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ('provider = "cohere"\nmodel = "x"', "must be one of openai, local"),
        ('provider = "openai"', "embedding.model is required"),
        ('provider = "local"', "local_model_path is required"),
        ('provider = "openai"\nmodel = "m"\nbatch_size = "many"', "config embedding"),
        ('provider = "openai"\nmodel = "m"\nchunk_chars = 300\nchunk_overlap = 200', "chunk_overlap"),
    ],
)
def test_invalid_sections_are_one_line_errors(tmp_path, monkeypatch, body, message):
    with pytest.raises(ConfigError, match=message):
        settings_from(tmp_path, monkeypatch, "[embedding]\n" + body + "\n")
