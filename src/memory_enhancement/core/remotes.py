"""Which repository a git remote names, for telling a blob URL into it from one elsewhere.

Apart from core/mentions.py, the grammar that indexing runs on every memory: only the
verification of URL mentions asks it, so indexing compiles neither pattern.
"""

from __future__ import annotations

import re

_REMOTE_URL = re.compile(r"[a-z+]+://(?:[^@/\s]+@)?(?P<host>[^/:\s]+)(?::\d+)?/(?P<path>.+)")
_SCP_URL = re.compile(r"(?:[^@/\s]+@)?(?P<host>[^:/\s]+):(?P<path>[^/\s].*)")  # git@host:o/n


def remote_repository(url: str) -> str | None:
    """`host/owner/name` of a git remote URL (https, ssh or scp-like), lowercased."""
    text = url.strip()
    scp = _SCP_URL.fullmatch(text) if "://" not in text else None
    found = scp or _REMOTE_URL.fullmatch(text)
    if found is None:
        return None
    path = found["path"].strip("/").removesuffix(".git")
    return f"{found['host']}/{path}".lower() if path else None
