"""Checking URL citations, only when asked (`--check-urls`).

Seed 000 says URLs are not checked at load time: they are slow and flaky. When
a person or CI asks, each distinct URL is fetched once (HEAD, then GET when the
server refuses HEAD), in parallel, with a short timeout.

Only `http` and `https` URLs are fetched, and redirects may only lead to those:
a `file://` citation checked "for existence" would let a memory probe any path
on the machine (and a FIFO there would hang the run). Other schemes keep the
verdict `skipped`, with a reason naming the scheme.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

_USER_AGENT = "memory-enhancement (citation check)"
CHECKED_SCHEMES = ("http", "https")


@dataclass(frozen=True)
class UrlChecker:
    timeout: float = 5.0
    workers: int = 8

    def check_all(self, urls: Iterable[str]) -> dict[str, tuple[str, str]]:
        """url -> (verdict value, reason) for each distinct URL."""
        from concurrent.futures import ThreadPoolExecutor

        distinct = list(dict.fromkeys(urls))
        if not distinct:
            return {}
        with ThreadPoolExecutor(max_workers=min(self.workers, len(distinct))) as pool:
            return dict(zip(distinct, pool.map(self.check, distinct), strict=True))

    def check(self, url: str) -> tuple[str, str]:
        import urllib.error
        import urllib.request

        scheme = url.partition("://")[0].lower()
        if scheme not in CHECKED_SCHEMES:
            return "skipped", f"not checked: only http and https URLs are fetched, not {scheme}://"
        opener = _http_only_opener()
        status: int | None = None
        for method in ("HEAD", "GET"):
            request = urllib.request.Request(
                url, method=method, headers={"User-Agent": _USER_AGENT}
            )
            try:
                with opener.open(request, timeout=self.timeout) as response:
                    return "valid", f"HTTP {response.status}"
            except urllib.error.HTTPError as exc:
                status = exc.code
                if method == "HEAD" and exc.code in (403, 405, 501):
                    continue  # some servers refuse HEAD; ask with GET
            except (urllib.error.URLError, TimeoutError, OSError, ValueError) as exc:
                reason = getattr(exc, "reason", exc)
                return "stale", f"cannot fetch: {reason}"
            break
        if status in (404, 410):
            return "missing", f"HTTP {status}"
        return "stale", f"HTTP {status}"


def _http_only_opener() -> Any:
    """An opener that speaks HTTP(S) alone: no file:, ftp: or data: handlers, so a
    redirect to one of those fails instead of being followed."""
    import urllib.request

    opener = urllib.request.OpenerDirector()
    for handler in (
        urllib.request.ProxyHandler(),
        urllib.request.HTTPHandler(),
        urllib.request.HTTPSHandler(),
        urllib.request.HTTPDefaultErrorHandler(),
        urllib.request.HTTPRedirectHandler(),
        urllib.request.HTTPErrorProcessor(),
        urllib.request.UnknownHandler(),
    ):
        opener.add_handler(handler)
    return opener
