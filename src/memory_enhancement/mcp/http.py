"""Serving over streamable HTTP safely: a bearer token and the Host/Origin checks.

Over stdio the server talks to the one agent that started it. Over HTTP anyone
who can reach the address can call every tool, including the ones that write
and delete, so:

- binding an address that is not loopback needs a bearer token (`--auth-token`
  or `MEMORY_ENHANCEMENT_AUTH_TOKEN`); the server refuses to start without one;
- every request's `Host` header (and `Origin`, when a browser sends one) must
  name this server, on every address: a web page cannot reach a local server
  through DNS rebinding, and a forged header is refused (421/403) before any tool
  runs. The SDK turns this on by itself only for 127.0.0.1, localhost and ::1;
  here it is on for every address, with the names the server answers to.

The SDK does the work (its `TransportSecuritySettings` and bearer middleware);
this module only decides the settings.
"""

from __future__ import annotations

import hmac
import ipaddress
import socket
from collections.abc import Sequence
from dataclasses import dataclass

from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.transport_security import TransportSecuritySettings

from memory_enhancement.core.errors import InvalidInputError

TOKEN_ENV = "MEMORY_ENHANCEMENT_AUTH_TOKEN"
MIN_TOKEN_LENGTH = 16
_WILDCARDS = ("0.0.0.0", "::", "")


class StaticTokenVerifier:
    """Accepts exactly one bearer token, compared in constant time."""

    def __init__(self, token: str) -> None:
        self._token = token.encode("utf-8")

    async def verify_token(self, token: str) -> AccessToken | None:
        if hmac.compare_digest(token.encode("utf-8"), self._token):
            return AccessToken(token=token, client_id="bearer", scopes=[])
        return None


def auth_settings() -> AuthSettings:
    """The SDK's auth settings for a server that checks tokens itself (no OAuth server)."""
    return AuthSettings(
        issuer_url="http://localhost",  # type: ignore[arg-type]  # unused: no OAuth routes
        resource_server_url=None,
        validate_token_resource=False,
    )


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True)
class HttpPlan:
    """How the HTTP transport will run: what it checks and what to warn about."""

    security: TransportSecuritySettings
    warning: str | None


def plan(
    host: str,
    port: int,
    token: str | None,
    *,
    extra_hosts: Sequence[str] = (),
    extra_origins: Sequence[str] = (),
) -> HttpPlan:
    """The checks for serving on host:port; InvalidInputError when it must not start."""
    if token is not None and len(token) < MIN_TOKEN_LENGTH:
        raise InvalidInputError(
            f"the bearer token is {len(token)} characters long; use at least "
            f"{MIN_TOKEN_LENGTH} random ones (e.g. `openssl rand -hex 32`)"
        )
    loopback = is_loopback(host)
    if not loopback and token is None:
        raise InvalidInputError(
            f"refusing to serve on {host}:{port} without a bearer token: that address can "
            "be reached from other machines, and every tool (add, update, remove) would be "
            f"open to them; give --auth-token or set {TOKEN_ENV}, or serve on 127.0.0.1"
        )
    names = _names(host)
    hosts = [f"{name}:{port}" for name in names] + list(extra_hosts)
    origins = [f"{scheme}://{name}:{port}" for name in names for scheme in ("http", "https")]
    origins += list(extra_origins)
    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=list(dict.fromkeys(hosts)),
        allowed_origins=list(dict.fromkeys(origins)),
    )
    warning = None
    if not loopback:
        warning = (
            f"serving MCP on {host}:{port}, reachable from other machines, over plain HTTP: "
            "every request needs the bearer token, and the token and the memories cross the "
            "network unencrypted unless a TLS proxy is in front (see docs/security.md); "
            f"accepted Host headers: {', '.join(security.allowed_hosts)}"
        )
    return HttpPlan(security, warning)


def _names(host: str) -> list[str]:
    """The names a client may use in its Host header to reach a server bound to host."""
    local = ["127.0.0.1", "localhost", "[::1]"]
    if host in _WILDCARDS:
        names = [*local, socket.gethostname(), socket.getfqdn()]
    elif is_loopback(host):
        names = [*local, _bracketed(host)]
    else:
        names = [_bracketed(host)]
    return list(dict.fromkeys(n for n in names if n))


def _bracketed(host: str) -> str:
    """An IPv6 address as a Host header writes it."""
    return f"[{host}]" if ":" in host and not host.startswith("[") else host
