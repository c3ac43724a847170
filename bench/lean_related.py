"""For scale only: how fast a process can answer `related` from a warm index.

    python bench/lean_related.py STORE INDEX MEMORY

Python with `sqlite3` and nothing else: the index's warm-path check (one stat per
folder, as `scan.folders_unchanged` does) and the backlinks query of
`graph.backlinks`. It is not the tool (no argument handling, no fallback when a
folder changed: it exits 3), only the floor a lean read-only entry point could
reach; `bench_graph.py` times it next to `memory-enhancement related`.
"""

from __future__ import annotations

import json
import os
import sqlite3
import sys

RACY_NS = 2_000_000_000


def main() -> int:
    store, index, target = sys.argv[1:4]
    conn = sqlite3.connect(index)
    meta = dict(conn.execute("SELECT key, value FROM meta"))
    synced = int(meta["synced_at_ns"])
    for folder, recorded in json.loads(meta["dirs"]).items():
        mtime = os.stat(os.path.join(store, folder) if folder else store).st_mtime_ns
        if mtime != recorded or mtime >= synced - RACY_NS:
            return 3
    rows = conn.execute(
        "SELECT m.path, l.type, l.line FROM links l JOIN memories m ON m.id = l.memory_id "
        "WHERE l.resolved = ? AND l.status = 'resolved' AND m.path != ? ORDER BY m.path, l.line",
        (target, target),
    ).fetchall()
    print(f"Memories linking to '{target}': {len(rows)}")
    for path, kind, line in rows:
        print(f"  - {path}{'' if kind == 'link' else f' ({kind})'}  [line {line}]")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
