"""Secret redaction: every secret-shaped span becomes ``[REDACTED]`` before text leaves the process.

Pure: `find_secrets(text)` returns the spans, `redact(text)` applies them. Deterministic (the
embedding cache keys on the redacted input). Rules are data (`RULES`), applied by one function:

1. **Provider rules from detect-secrets 1.5.0** (Yelp, maintained): the compiled ``denylist``
   regexes of its regex plugins are used directly (`_DETECT_SECRETS`), so their coverage —
   AWS, Artifactory, Azure storage keys, credential URLs (BasicAuth), Cloudant, Discord,
   GitHub, GitLab, IBM, Mailchimp, npm, OpenAI, PyPI, SendGrid, Slack, SoftLayer, Square, Stripe,
   Telegram, Twilio — stays theirs. Their plugins' ``analyze_string`` yields matched *values*,
   not positions, so the spans come from ``pattern.finditer`` here. Not used: its
   ``PrivateKeyDetector`` (flags only the BEGIN line; the block rule below takes the whole key),
   ``JwtTokenDetector`` (its lazy tail stops before the signature), ``KeywordDetector`` and the
   high-entropy plugins (quoted strings only, and the hex plugin flags git shas and hashes),
   ``IPPublicDetector`` (an address is not a secret).
2. **Rules of our own** for what it lacks or cuts short: Anthropic, newer OpenAI project/service
   keys, GitHub fine-grained PATs, Hugging Face, Google API keys and OAuth tokens, Azure AD client
   secrets and SAS signatures, Stripe test keys, bare npm tokens, JWTs (with signature), PEM /
   OpenSSH / PGP private-key blocks (to the END line, or to the end of the text when cut off),
   credential URLs with any password characters, ``Bearer``/``Basic`` authorization values, and
   ``password=`` / ``secret:`` / ``api_key:``-style assignments. Prefixes follow the providers'
   documented formats and gitleaks' default rules (config/gitleaks.toml).
3. **High-entropy tokens** (`is_high_entropy_token`): runs of 24+ base64 / base64url characters
   that — separators ``_ - / +`` aside — mix upper case, lower case and at least two digits,
   switch character class often (random strings do, identifiers and paths do not) and have a Shannon entropy ≥ 3.5 bits/char. Hex strings
   (git shas, sha256 hashes, UUIDs, ``0x`` addresses, ``sha256:`` digests) are never flagged, nor
   are harness ids such as ``msg_…``, ``toolu_…``, ``call_…`` (`ID_PREFIXES`), names made of short
   words (three or more pieces between ``/ - _ +``, none longer than `NAME_PIECE_CHARS`: model ids
   such as ``Qwen/Qwen3-Next-80B-A3B-Instruct``, slugs, paths), or a token in a URL's path
   (``https://docs.google.com/document/d/<id>/edit``: a document id, not a credential — credential
   URLs, query values after ``=`` and webhook URLs are the rules' above). Both exceptions came from
   the two false positives of the shared corpus (a newcomer's `secrets` run, stop 34).

A span's rule decides which part is secret: the whole match, or for rules with a keyword or
scheme in front, the value group (so ``password=`` and ``https://user:`` stay readable).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any

REDACTED = "[REDACTED]"


@dataclass(frozen=True)
class Rule:
    """One detector: a pattern, which group is the secret (0 = whole match), an optional check
    on the secret value, and where the pattern comes from."""

    name: str
    pattern: re.Pattern[str]
    group: int | None = 0  # None: the longest non-empty group, else the whole match
    check: Callable[[str], bool] | None = None
    source: str = "agent-history"


@dataclass(frozen=True)
class Span:
    """A secret-shaped span of the input: ``text[start:end]``, found by `rule`."""

    start: int
    end: int
    rule: str


# --- 1. detect-secrets plugins --------------------------------------------------------------

# (plugin class name, which group is the secret): "match" = the whole match (trimmed of the
# delimiters some patterns include), "group" = the longest captured group.
_DETECT_SECRETS: tuple[tuple[str, str], ...] = (
    ("AWSKeyDetector", "group"),
    ("ArtifactoryDetector", "match"),
    ("AzureStorageKeyDetector", "match"),
    ("BasicAuthDetector", "group"),
    ("CloudantDetector", "group"),
    ("DiscordBotTokenDetector", "match"),
    ("GitHubTokenDetector", "match"),
    ("GitLabTokenDetector", "match"),
    ("IbmCloudIamDetector", "group"),
    ("IbmCosHmacDetector", "group"),
    ("MailchimpDetector", "match"),
    ("NpmDetector", "group"),
    ("OpenAIDetector", "match"),
    ("PypiTokenDetector", "match"),
    ("SendGridDetector", "match"),
    ("SlackDetector", "match"),
    ("SoftlayerDetector", "group"),
    ("SquareOAuthDetector", "match"),
    ("StripeDetector", "match"),
    ("TelegramBotTokenDetector", "match"),
    ("TwilioKeyDetector", "match"),
)


def _detect_secrets_rules() -> tuple[Rule, ...]:
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class

    by_name = {cls.__name__: cls for cls in get_mapping_from_secret_type_to_class().values()}
    rules = []
    for name, mode in _DETECT_SECRETS:
        cls = by_name[name]
        for i, pattern in enumerate(cls.denylist):
            group = None if mode == "group" and pattern.groups else 0
            rules.append(Rule(f"{name}[{i}]", pattern, group, source="detect-secrets 1.5.0"))
    return tuple(rules)


# --- 2. our own rules -----------------------------------------------------------------------

_B = r"(?<![A-Za-z0-9_-])"  # token start: not inside a longer token
_E = r"(?![A-Za-z0-9_-])"  # token end

_REFERENCE = re.compile(r"^(?:\$|%|<|\{|\*{3,}|x{4,}|\.\.\.|os\.|env\.|process\.|self\.|settings\.|config\.)", re.I)
_PLACEHOLDER_WORDS = frozenset(
    "none null nil true false undefined required optional string str int bool your_password changeme example "
    "redacted hidden masked secret password token".split()
)


def _assigned_value(value: str) -> bool:
    """A keyword assignment's value looks like a literal secret (not a reference or placeholder)."""
    v = value.strip("\"'")
    return len(v) >= 3 and not _REFERENCE.match(v) and v.lower() not in _PLACEHOLDER_WORDS and REDACTED not in v


TOKEN_VALUE_MIN_CHARS = 10
TOKEN_VALUE_MIN_ENTROPY = 3.0
"""A weaker keyword's quoted value must be this long and this random (bits/char) to count:
gitleaks' ``generic-api-key`` rule (config/gitleaks.toml) takes 10+ characters at entropy 3.5
over the whole match; over the value alone 3.0 keeps 10-character random keys."""
_IDENTIFIER = re.compile(r"^[A-Za-z_$][A-Za-z_$]*(?:\.[A-Za-z_$][\w$]*)*$")
"""A code identifier or member path without digits (``getApiKey``, ``options.apiKey``)."""


def _secretish_value(value: str) -> bool:
    """A weaker keyword's quoted value (token, api key) looks like a secret: not a reference or
    placeholder, at least `TOKEN_VALUE_MIN_CHARS` long, not a number, identifier or URL (a
    credential URL is `credential_url`'s), with
    Shannon entropy ≥ `TOKEN_VALUE_MIN_ENTROPY`."""
    v = value.strip("\"'")
    if not _assigned_value(v) or len(v) < TOKEN_VALUE_MIN_CHARS or _IDENTIFIER.match(v) or "://" in v:
        return False
    if re.fullmatch(r"[\d.,_eE+-]+", v):  # a number (a count, a size, a version)
        return False
    return shannon_entropy(v) >= TOKEN_VALUE_MIN_ENTROPY


_STRONG_KEYS = r"(?:password|passwd|passphrase|pwd|secret|client[_-]?secret|private[_-]?key)"
_WEAK_KEYS = (
    r"(?:api[_-]?key|apikey|access[_-]?key|auth[_-]?token|access[_-]?token|refresh[_-]?token|token|credentials?)"
)
_ASSIGN = r"[\"']?\]?\s*(?:=|:=|=>|:|::)\s*(?:\"|'|)"
_ASSIGN_QUOTED = r"[\"']?\]?\s*(?:=|:=|=>|:|::)\s*([\"'])"
_VALUE = r"([^\s\"'`,;(){}\[\]<>]{3,200})(?![^\s\"'`,;(){}\[\]<>]|[(\[])"  # whole run, not a call

OWN_RULES: tuple[Rule, ...] = (
    Rule(
        "private_key_block",
        re.compile(
            r"-----BEGIN[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----.*?(?:-----END[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----|\Z)",
            re.S,
        ),
    ),
    Rule("putty_private_key", re.compile(r"PuTTY-User-Key-File-\d:.*?(?:Private-MAC: *\S+|\Z)", re.S)),
    Rule("anthropic_key", re.compile(_B + r"sk-ant-[A-Za-z0-9_-]{20,}" + _E)),
    Rule("openai_key", re.compile(_B + r"sk-(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_-]{32,}" + _E)),
    Rule("github_token", re.compile(_B + r"(?:github_pat_[A-Za-z0-9_]{22,}|gh[pousr]_[A-Za-z0-9]{30,})" + _E)),
    Rule("gitlab_token", re.compile(_B + r"gl(?:pat|dt|ft|rt|soat|cbt|imt|ptt|oas)-[A-Za-z0-9_-]{20,}" + _E)),
    Rule("huggingface_token", re.compile(_B + r"hf_[A-Za-z0-9]{30,}" + _E)),
    Rule("google_api_key", re.compile(_B + r"AIza[0-9A-Za-z_-]{35}" + _E)),
    Rule("google_oauth_token", re.compile(_B + r"ya29\.[0-9A-Za-z_-]{20,}" + _E)),
    Rule(
        "azure_ad_client_secret",
        re.compile(r"(?:^|[\\'\"`\s>=:(,)])([A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.-]{31,34})(?:$|[\\'\"`\s<),])"),
        group=1,
    ),
    Rule("azure_sas_signature", re.compile(r"[?&]sig=([A-Za-z0-9%+/=]{30,})"), group=1),
    Rule("stripe_key", re.compile(_B + r"(?:sk|rk)_(?:test|live)_[0-9A-Za-z]{10,}" + _E)),
    Rule("npm_token", re.compile(_B + r"npm_[A-Za-z0-9]{36}" + _E)),
    Rule("pypi_token", re.compile(_B + r"pypi-AgE[A-Za-z0-9_-]{50,}" + _E)),
    Rule("slack_token", re.compile(_B + r"xox[abposre]-[A-Za-z0-9-]{10,}" + _E)),
    Rule("slack_app_token", re.compile(_B + r"xapp-\d-[A-Z0-9]+-\d+-[a-z0-9]+" + _E)),
    Rule("aws_access_key_id", re.compile(_B + r"(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}" + _E)),
    Rule(
        # the 40-character secret access key written after its key id on one line (`AKIA… wJalr…`,
        # "id AKIA… secret wJalr…"): no keyword to anchor it, so the id nearby is the anchor
        "aws_secret_access_key",
        re.compile(
            _B
            + r"(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}[^\n]{1,60}?(?<![A-Za-z0-9/+])([A-Za-z0-9/+]{40})"
            + r"(?![A-Za-z0-9/+=])"
        ),
        group=1,
        check=lambda v: (
            any(c.isupper() for c in v) and any(c.islower() for c in v) and any(c in "/+0123456789" for c in v)
        ),
    ),
    Rule("jwt", re.compile(_B + r"eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}(?:\.[A-Za-z0-9_-]+)?" + _E)),
    Rule("credential_url", re.compile(r"\b[A-Za-z][A-Za-z0-9+.-]*://[^\s/:@]+:([^\s@/]+)@"), group=1),
    Rule(
        "authorization_value",
        re.compile(r"\b(?:Bearer|Basic|Token)\s+([A-Za-z0-9._~+/=-]{16,})"),
        group=1,
        check=lambda v: any(c.isdigit() for c in v) or len(v) >= 32,
    ),
    Rule(
        "secret_assignment",
        re.compile(r"(?i)\b[\w.-]*" + _STRONG_KEYS + r"[\w.-]*" + _ASSIGN + _VALUE),
        group=1,
        check=_assigned_value,
    ),
    Rule(
        # a quoted literal only (an expression, env lookup or number is no secret), and never a
        # ``*_tokens``/``maxTokens`` key (token counts): gitleaks' generic-api-key shape
        "token_assignment",
        re.compile(r"(?i)\b[\w.-]*" + _WEAK_KEYS + r"[\w.-]*(?<!tokens)" + _ASSIGN_QUOTED + r"([^\s\"'`]{3,200})\1"),
        group=2,
        check=_secretish_value,
    ),
)


# --- 3. high-entropy tokens -----------------------------------------------------------------

_TOKEN = re.compile(r"(?<![A-Za-z0-9_+/=-])[A-Za-z0-9_+/-]{24,}={0,2}(?![A-Za-z0-9_+/=-])")
_SEPARATORS = re.compile(r"[_/+-]")
_URL_PATH_BEFORE = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s?#=@]*$")
"""The text just before a token when the token is part of a URL's host or path (no ``?``, ``#``,
``=`` or ``@`` between: query values and user info are not exempt)."""
RULES_VERSION = 2
"""Bump whenever a rule changes what is found: the secrets scan (`ingest.secret_scan`) then
re-scans every row once. 1: the rules of stop 34; 2: rule 3's name and URL exceptions."""
NAME_PIECE_CHARS = 10
"""A token whose pieces between separators are all at most this long reads as words (see rule 3)."""
_HEXISH = re.compile(r"^(?:0x|sha\d*[-:_]|g)?[0-9a-fA-F-]+$")
ID_PREFIXES: tuple[str, ...] = (
    "msg_", "toolu_", "tool_", "req_", "call_", "resp_", "chatcmpl-", "run_", "thread_", "asst_", "file-",
    "file_", "batch_", "srvtoolu_", "rs_", "fc_", "ctc_",
)  # fmt: skip
"""Harness and API object ids: random-looking but not secrets."""


def _char_class(c: str) -> int:
    return 0 if c.islower() else 1 if c.isupper() else 2 if c.isdigit() else 3


def shannon_entropy(s: str) -> float:
    """Bits per character of `s` over its own symbol frequencies."""
    n = len(s)
    return -sum(k / n * math.log2(k / n) for k in (s.count(c) for c in set(s))) if n else 0.0


def is_high_entropy_token(token: str) -> bool:
    """A random-looking token: see the module docstring (rule 3)."""
    if _HEXISH.match(token) or token.startswith(ID_PREFIXES):
        return False
    pieces = [p for p in _SEPARATORS.split(token.rstrip("=")) if p]
    if len(pieces) >= 3 and max(map(len, pieces)) <= NAME_PIECE_CHARS:
        return False
    body = "".join(pieces)  # paths and snake/kebab words: judge the letters
    if sum(c.isdigit() for c in body) < 2 or not any(c.isupper() for c in body) or not any(c.islower() for c in body):
        return False
    switches = sum(_char_class(a) != _char_class(b) for a, b in zip(body, body[1:], strict=False))
    return switches / max(1, len(body) - 1) >= 0.4 and shannon_entropy(body) >= 3.5


# --- applying the rules ---------------------------------------------------------------------


@cache
def rules() -> tuple[Rule, ...]:
    """Every rule, detect-secrets' first."""
    return (*_detect_secrets_rules(), *OWN_RULES)


_TRIM = " \t\r\n\"'=:`"


def _span_of(rule: Rule, m: re.Match[str]) -> tuple[int, int] | None:
    if rule.group is None:
        groups = [(m.end(i) - m.start(i), i) for i in range(1, (m.re.groups or 0) + 1) if m.start(i) >= 0]
        start, end = m.span(max(groups)[1]) if groups and max(groups)[0] > 0 else m.span()
    else:
        start, end = m.span(rule.group)
    while start < end and m.string[start] in _TRIM:
        start += 1
    while end > start and m.string[end - 1] in _TRIM:
        end -= 1
    if end <= start:
        return None
    if rule.check is not None and not rule.check(m.string[start:end]):
        return None
    return start, end


def _in_url_path(text: str, start: int) -> bool:
    """Whether the token starting at `start` is a piece of a URL's path (rule 3's exception)."""
    run = text.rfind(" ", max(0, start - 2048), start) + 1 or max(0, start - 2048)
    before = text[run:start]
    cut = max(before.rfind(c) for c in "\n\t\"'`(<[")
    return _URL_PATH_BEFORE.search(before[cut + 1 :]) is not None


def find_secrets(text: str) -> list[Span]:
    """Secret-shaped spans of `text`, sorted and merged (overlaps joined, first rule's name kept)."""
    found: list[Span] = []
    for rule in rules():
        for m in rule.pattern.finditer(text):
            span = _span_of(rule, m)
            if span:
                found.append(Span(span[0], span[1], rule.name))
    for m in _TOKEN.finditer(text):
        if is_high_entropy_token(m.group()) and not _in_url_path(text, m.start()):
            found.append(Span(m.start(), m.end(), "high_entropy"))
    found.sort(key=lambda s: (s.start, -s.end))
    merged: list[Span] = []
    for s in found:
        if merged and s.start <= merged[-1].end:
            last = merged[-1]
            if s.end > last.end:
                merged[-1] = Span(last.start, s.end, last.rule)
        else:
            merged.append(s)
    return merged


def apply_spans(text: str, spans: list[Span], start: int = 0, end: int | None = None) -> tuple[str, int]:
    """``text[start:end]`` with every span that intersects it replaced by ``[REDACTED]``.

    Returns (redacted text, number of spans replaced). A span crossing the window's edge is
    replaced too: no part of a secret survives a cut.
    """
    end = len(text) if end is None else end
    out, pos, n = [], start, 0
    for s in spans:
        if s.end <= start or s.start >= end:
            continue
        a, b = max(s.start, start), min(s.end, end)
        out.append(text[pos:a])
        out.append(REDACTED)
        pos, n = b, n + 1
    out.append(text[pos:end])
    return "".join(out), n


def redact(text: str) -> str:
    """`text` with every secret-shaped span replaced by ``[REDACTED]``."""
    return apply_spans(text, find_secrets(text))[0]


IDENTIFIER_KEYS = frozenset(
    {
        "agent", "agent_id", "session_uid", "root_session_uid", "namespace", "cwd", "source_path", "kind",
        "label", "role", "model", "ts", "started_at", "ended_at", "child_session_uid", "child_agent_id", "sha",
        "old_sha", "branch", "remote_ref", "outcome", "error_class", "product", "format", "redacted", "uid",
        "cite", "path", "file", "repo", "host", "namespaces",
    }
)  # fmt: skip
"""Keys whose values are identifiers, not prose: `redact_tree` never passes them through the
scanner (uids, names, paths, times, classes)."""


def redact_tree(value: Any, keep: frozenset[str] = IDENTIFIER_KEYS, key: str | None = None) -> Any:
    """`value` (JSON-shaped: dicts, lists, scalars) with every string redacted (`redact`) except
    the values of keys in `keep` (and the lists under them). Dict keys themselves are kept."""
    if isinstance(value, str):
        return value if key in keep else redact(value)
    if isinstance(value, dict):
        return {k: redact_tree(v, keep, k) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redact_tree(v, keep, key) for v in value]
    return value


def detector_of(rule_name: str) -> str:
    """The detector type a span's rule name reports: the rule without its pattern index
    (``AWSKeyDetector[0]`` → ``AWSKeyDetector``), one of `DETECTORS`."""
    return rule_name.split("[", 1)[0]


DETECTORS: tuple[str, ...] = (
    *(name for name, _ in _DETECT_SECRETS),
    *(r.name for r in OWN_RULES),
    "high_entropy",
)
"""Every detector type `detector_of` can report (a closed set: the secrets metric's label values)."""
