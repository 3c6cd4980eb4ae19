"""Which addresses `agent-history web` may bind (pure).

Rules (issue 20): a loopback host (``127.0.0.0/8``, ``::1``, ``localhost``) is always allowed;
any other host is refused unless ``--allow-remote`` is given AND a token is configured (config
``[web] token`` or ``AGENT_HISTORY_WEB_TOKEN``). With ``--allow-remote`` every request must carry
the token, whatever the host.
"""

from __future__ import annotations

import ipaddress

LOOPBACK_NAMES: tuple[str, ...] = ("localhost",)
"""Host names treated as loopback without resolving them (RFC 6761 §6.3 reserves `localhost`)."""

MIN_TOKEN_CHARS = 16
"""Shortest accepted token: a guessable token on a network-reachable port is a configuration
mistake, not a choice (16 characters ≈ 80+ bits from a password generator)."""


class BindRefused(ValueError):
    """The host/token combination may not serve (one line, for the user)."""


def is_loopback(host: str) -> bool:
    """True for a loopback IP literal (v4 or v6, brackets allowed) or ``localhost``."""
    name = host.strip().strip("[]").lower()
    if name in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def check_bind(host: str, port: int, *, allow_remote: bool, token: str | None) -> None:
    """Raise BindRefused unless `host`:`port` may serve under the rules above. `port` 0 means
    "any free port" (tests); otherwise 1…65535."""
    if not 0 <= port <= 65535:
        raise BindRefused(f"--port {port} is out of range (0-65535)")
    if allow_remote:
        if not token:
            raise BindRefused(
                "--allow-remote needs a token: set [web] token in the config file or AGENT_HISTORY_WEB_TOKEN"
            )
        if len(token) < MIN_TOKEN_CHARS:
            raise BindRefused(f"the web token is too short ({len(token)} characters; at least {MIN_TOKEN_CHARS})")
        return
    if not is_loopback(host):
        raise BindRefused(
            f"refusing to serve on non-loopback host {host!r}: the catalogue holds private transcripts; "
            "use --host 127.0.0.1, or --allow-remote with a [web] token"
        )
