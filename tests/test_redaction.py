"""Secret redaction (docs/design.md §9): what must become [REDACTED], and what must stay intact.

Secrets are fabricated at run time from a seeded generator (never real credentials), shaped like
each provider's documented format.
"""

from __future__ import annotations

import random
import string

import pytest

from agent_history.embed.redact import REDACTED, apply_spans, find_secrets, is_high_entropy_token, redact

_rng = random.Random(7)
B62 = string.ascii_letters + string.digits


def r(n: int, alphabet: str = B62) -> str:
    """n random characters (seeded; mixes cases and digits like a real token)."""
    while True:
        s = "".join(_rng.choice(alphabet) for _ in range(n))
        if alphabet != B62 or (sum(c.isdigit() for c in s) >= 2 and not s.isupper() and not s.islower()):
            return s


HEX = "0123456789abcdef"

# (case id, text, the secret that must disappear)
POSITIVE: list[tuple[str, str, str]] = [
    (p[0], p[1].replace("{s}", p[2]), p[2])
    for p in [
        ("openai_legacy", "export OPENAI_API_KEY={s}", "sk-" + r(20) + "T3BlbkFJ" + r(20)),
        ("openai_project", "key is {s} for the proj", "sk-proj-" + r(48) + "_" + r(20)),
        ("anthropic", "ANTHROPIC_API_KEY={s}", "sk-ant-api03-" + r(93) + "AA"),
        ("github_classic", "git clone https://x-access-token:{s}@github.com/o/r", "ghp_" + r(36)),
        ("github_fine_grained", "token {s} expires soon", "github_pat_11A" + r(19) + "_" + r(59)),
        ("github_oauth", "GH_TOKEN={s}", "gho_" + r(36)),
        ("gitlab_pat", "PRIVATE-TOKEN: {s}", "glpat-" + r(20)),
        ("slack_bot", "SLACK_BOT_TOKEN is {s} now", "xoxb-1234567890-1234567890123-" + r(24)),
        (
            "slack_webhook",
            "post to {s}",
            "https://hooks.slack.com/services/T" + r(8).upper() + "/B" + r(8).upper() + "/" + r(24),
        ),
        (
            "aws_access_key_id",
            "aws configure set aws_access_key_id {s}",
            "AKIA" + r(16, string.ascii_uppercase + string.digits),
        ),
        ("aws_secret_assignment", 'aws_secret_access_key = "{s}"', r(40, B62 + "/+")),
        ("gcp_api_key", "https://maps.googleapis.com/maps/api/js?key={s}", "AIza" + r(35, B62 + "_-")),
        ("gcp_oauth", "Authorization header: ya29 token {s}", "ya29.a0" + r(60, B62 + "_-")),
        (
            "azure_storage",
            "DefaultEndpointsProtocol=https;AccountName=acct;{s};EndpointSuffix=core",
            "AccountKey=" + r(86) + "==",
        ),
        ("azure_client_secret", 'AZURE_CLIENT_SECRET="{s}"', r(3) + "8Q~" + r(34, B62 + "_~.-")),
        ("azure_sas", "https://acct.blob.core.windows.net/c/b?sv=2022-11-02&sig={s}", r(43, B62 + "%") + "%3D"),
        ("stripe_live", "STRIPE_KEY={s}", "sk_live_" + r(24)),
        ("stripe_test", "use {s} in tests", "sk_test_" + r(24)),
        ("npm_token", "//registry.npmjs.org/:_authToken={s}", "npm_" + r(36)),
        ("npm_bare", "NPM_TOKEN is {s}", "npm_" + r(36)),
        ("pypi_token", "password = {s}", "pypi-AgEIcHlwaS5vcmc" + r(80, B62 + "_-")),
        ("huggingface", "HF_TOKEN={s}", "hf_" + r(34)),
        ("jwt", "Authorization: Bearer {s}", "eyJhbGciOiJIUzI1NiJ9." + "eyJzdWIiOiI" + r(30) + "." + r(43, B62 + "_-")),
        (
            "private_key_block",
            "here:\n{s}\nthanks",
            "-----BEGIN RSA PRIVATE KEY-----\nMIIEow" + r(60) + "\n" + r(64) + "\n-----END RSA PRIVATE KEY-----",
        ),
        (
            "openssh_key_cut_off",
            "cat id_ed25519\n{s}",
            "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA" + r(40),
        ),
        ("credential_url", "DATABASE_URL=postgres://app:{s}@db.internal:5432/app", "S3cr3t-Pa55"),
        ("credential_url_special", "redis://default:{s}@cache:6379/0", "p!ss$w0rd&x"),
        ("password_assignment", "login with password={s} then retry", "hunter2"),
        ("secret_yaml", "client_secret: {s}", "Xk9" + r(20)),
        ("db_password_env", "export DB_PASSWORD='{s}'", "correct horse".replace(" ", "-") + "7"),
        ("api_key_json", '{"api_key": "{s}"}', r(32)),
        ("bearer_token", "curl -H 'Authorization: Bearer {s}' https://api.example.com", r(40, B62 + "-._")),
        ("high_entropy_unknown_provider", "the vendor key {s} was rotated", r(40)),
        ("high_entropy_base64", "blob {s} end", r(44, B62 + "+/") + "="),
        ("sendgrid", "SENDGRID={s}", "SG." + r(22) + "." + r(43)),
        ("twilio", "sid {s}", "SK" + r(32, HEX)),
        ("discord", "bot token {s}", "M" + r(23) + "." + r(6) + "." + r(27)),
    ]
]

NEGATIVE: list[tuple[str, str]] = [
    ("git_sha", "commit 3f2a9c1b7e8d4f60a1b2c3d4e5f60718293a4b5c fixed it"),
    ("short_sha", "[main 3f2a9c1] Fix the pool"),
    ("sha256_hex", "sha256 e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855 ok"),
    ("docker_digest", "image@sha256:9b2a5f7e4c1d8a3b6e0f2c5d8a1b4e7f0c3d6a9b2e5f8c1d4a7b0e3f6c9d2a5b"),
    ("uuid", "session 0fae0449-64d3-4788-8622-d3a47d82c14b resumed"),
    ("path", "edited /Users/user9/work/app/src/components/UserProfileCard2.tsx and src/db/pool.py"),
    ("camel_identifier", "call getUserAccountSettingsFromDatabase2 then useEffectCleanup3"),
    ("snake_identifier", "test_split_response_lines_count_usage_once_v2 passed"),
    ("url_without_credentials", "see https://github.com/iansherr/claude-code-log/blob/main/README.md"),
    ("prose_password", "The password field must be at least 12 characters long."),
    ("password_reference", 'password = os.environ["DB_PASSWORD"]'),
    ("password_template", "password: ${{ secrets.DB_PASSWORD }}"),
    ("max_tokens", "max_tokens=4096, temperature: 0.2, token_count: 1500"),
    ("token_prose", "the token: expired after an hour"),
    ("harness_ids", "msg_01XFDUDYJgAACzvnptvVoYEL toolu_01A09q90qw90lq917835lq9 req_011CUxyzAbCdEf12345"),
    ("iso_timestamp", "2026-11-30T12:34:56.789Z and version 1.2.3-rc.4+build.5"),
    ("email", "mail user9@example.com about it"),
    ("hex_address", "segfault at 0x7ffd5a8b3c2e1f40 in libc"),
    ("placeholder_password", "set password=changeme in the example config"),
    ("base64_words", "the QUICK brown fox jumps over THE lazy dog twelve times"),
]


def test_at_least_25_positive_and_15_negative_cases():
    assert len(POSITIVE) >= 25 and len(NEGATIVE) >= 15


@pytest.mark.parametrize(("case", "text", "secret"), POSITIVE, ids=[p[0] for p in POSITIVE])
def test_secret_is_redacted(case, text, secret):
    out = redact(text)
    assert secret not in out, f"{case}: secret survived in {out!r}"
    assert REDACTED in out
    # no long fragment of the secret survives either
    for i in range(0, max(1, len(secret) - 12)):
        frag = secret[i : i + 12]
        if len(frag) == 12 and not frag.isalpha():
            assert frag not in out, f"{case}: fragment {frag!r} survived in {out!r}"


@pytest.mark.parametrize(("case", "text"), NEGATIVE, ids=[n[0] for n in NEGATIVE])
def test_non_secret_is_kept(case, text):
    assert redact(text) == text, f"{case}: {find_secrets(text)}"


def test_keyword_stays_readable_only_the_value_goes():
    assert redact("password=hunter2 then") == f"password={REDACTED} then"
    assert redact("postgres://app:S3cret99@db/app") == f"postgres://app:{REDACTED}@db/app"


def test_redaction_is_deterministic():
    text = " ".join(p[1] for p in POSITIVE)
    assert redact(text) == redact(text)


def test_window_cut_through_a_secret_redacts_both_sides():
    secret = "ghp_" + r(36)
    text = f"before {secret} after"
    spans = find_secrets(text)
    cut = text.index(secret) + 10
    left, n1 = apply_spans(text, spans, 0, cut)
    right, n2 = apply_spans(text, spans, cut, len(text))
    assert (n1, n2) == (1, 1)
    assert secret[:10] not in left and secret[10:] not in right


@pytest.mark.parametrize(
    ("token", "expected"),
    [
        (r(32), True),
        ("3f2a9c1b7e8d4f60a1b2c3d4e5f60718293a4b5c", False),
        ("getUserAccountSettingsFromDatabase2", False),
        ("msg_01XFDUDYJgAACzvnptvVoYEL", False),
        ("ABCDEFGHIJKLMNOPQRSTUVWX12", False),
        # a model id from the shared corpus (Claude session 9e953218…): short words, not random
        ("Qwen/Qwen3-Next-80B-A3B-Instruct", False),
        ("deepseek-ai/DeepSeek-V3.1-Terminus", False),
        # long random pieces stay secrets even with separators
        (r(20) + "-" + r(12) + "_" + r(8), True),
    ],
)
def test_high_entropy_token_rule(token, expected):
    assert is_high_entropy_token(token) is expected


def test_a_token_in_a_url_path_is_an_id_but_the_same_token_elsewhere_is_a_secret():
    # the shared corpus's Codex session cf4def41…: a Google Docs link in a Markdown list
    doc_id = "1NJFd-EWdUlQ7wVzjqcgXewqC5nzv_qII4OvlDtK6SE8"
    assert is_high_entropy_token(doc_id)
    link = f"* [Security Model](https://docs.google.com/document/d/{doc_id}/edit) * Blink"
    assert find_secrets(link) == []
    assert find_secrets(f"see https://docs.google.com/document/d/{doc_id}") == []
    for text in (f"printed {doc_id} here", f"https://example.com/cb?token={doc_id}", f"x=({doc_id})"):
        spans = find_secrets(text)  # found: by rule 3, or a keyword rule when one names it
        assert [text[s.start : s.end] for s in spans] == [doc_id], text


def test_an_aws_secret_key_after_its_key_id_is_redacted_without_a_keyword():
    """A newcomer's MCP finding: "AKIA… secret wJalr…" — the 40-character secret access key has
    no keyword of its own; the key id before it on the line anchors it."""
    from agent_history.embed.redact import find_secrets, redact

    text = "keys: AKIAIOSFODNN7EXAMPLE secret wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY (rotate)"
    assert redact(text) == "keys: [REDACTED] secret [REDACTED] (rotate)"
    assert [s.rule for s in find_secrets(text)] == ["AWSKeyDetector[0]", "aws_secret_access_key"]
    # a 40-character run that is a path piece or all one case is not taken for the secret
    assert redact("AKIAIOSFODNN7EXAMPLE in build/output/artifacts/final/bundle") == (
        "[REDACTED] in build/output/artifacts/final/bundle"
    )
