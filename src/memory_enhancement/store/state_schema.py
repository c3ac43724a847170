"""The state database's tables, as the steps that made them (store/state.py).

Append only: a database records how many steps it has taken (`PRAGMA user_version`)
and takes the rest when opened; a step is never changed once released, since
databases out there have taken it.
"""

from __future__ import annotations

MIGRATIONS = [
    """
    CREATE TABLE ids (
        identity TEXT PRIMARY KEY,
        citation_id TEXT NOT NULL UNIQUE
    );
    CREATE TABLE usage (
        id INTEGER PRIMARY KEY,
        citation_id TEXT NOT NULL,
        path TEXT NOT NULL,
        session TEXT NOT NULL,
        used_at TEXT NOT NULL,
        action TEXT NOT NULL,
        query TEXT
    );
    CREATE INDEX usage_citation ON usage(citation_id);
    """,
    """
    CREATE TABLE runs (
        run_id TEXT PRIMARY KEY,
        verified_at TEXT NOT NULL,
        commit_sha TEXT
    );
    CREATE TABLE verdicts (
        id INTEGER PRIMARY KEY,
        run_id TEXT NOT NULL,
        citation_id TEXT NOT NULL,
        path TEXT NOT NULL,
        checks TEXT NOT NULL,
        failing INTEGER NOT NULL
    );
    CREATE TABLE evidence (
        citation_id TEXT PRIMARY KEY,
        recent TEXT NOT NULL,
        last_verified TEXT NOT NULL,
        last_valid TEXT
    ) WITHOUT ROWID;
    CREATE TABLE verdict_days (
        day TEXT NOT NULL,
        status TEXT NOT NULL,
        count INTEGER NOT NULL,
        PRIMARY KEY (day, status)
    );
    CREATE TABLE reinforcements (
        id INTEGER PRIMARY KEY,
        citation_id TEXT NOT NULL,
        path TEXT NOT NULL,
        session TEXT NOT NULL,
        reinforced_at TEXT NOT NULL,
        note TEXT
    );
    CREATE INDEX reinforcements_memory ON reinforcements(citation_id);
    CREATE TABLE policy_expiry (
        citation_id TEXT PRIMARY KEY,
        path TEXT NOT NULL,
        set_at TEXT NOT NULL,
        expires_at TEXT NOT NULL
    );
    """,
    # Issue 17: what git blame and the code at the memory line's commit said about a
    # memory file's prose mentions, kept while the file (its blob hash) is unchanged,
    # and the verdicts last given with a fingerprint of what they depend on; and the
    # memory files that mention no code, as last seen (size, mtime).
    """
    CREATE TABLE mention_history (
        path TEXT PRIMARY KEY,
        blob TEXT NOT NULL,
        head TEXT,
        data TEXT NOT NULL,
        checked TEXT
    ) WITHOUT ROWID;
    CREATE TABLE mention_free (
        path TEXT PRIMARY KEY,
        size INTEGER NOT NULL,
        mtime_ns INTEGER NOT NULL
    ) WITHOUT ROWID;
    """,
    # History writes only what changed (issue 15): a run row (with its scope), and for a
    # memory only a verdict that differs from its last one. The summary row of a memory
    # keeps its current mark and the run it was last written at; runs of the whole store
    # since then are replayed when it is read (see verify/history.py).
    """
    ALTER TABLE runs ADD COLUMN scope TEXT;
    ALTER TABLE evidence ADD COLUMN mark TEXT NOT NULL DEFAULT '';
    ALTER TABLE evidence ADD COLUMN seq INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE evidence ADD COLUMN runs INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE evidence ADD COLUMN path TEXT;
    ALTER TABLE evidence ADD COLUMN checks TEXT;  -- what the last verdicts were, compared
    CREATE INDEX verdicts_memory ON verdicts(citation_id, id);
    CREATE INDEX verdicts_path ON verdicts(path);
    UPDATE evidence SET
        runs = (SELECT count(DISTINCT v.run_id) FROM verdicts v
                WHERE v.citation_id = evidence.citation_id),
        path = (SELECT v.path FROM verdicts v WHERE v.citation_id = evidence.citation_id
                ORDER BY v.id DESC LIMIT 1),
        seq = (SELECT max(rowid) FROM runs);
    """,
    # A run over the whole store asks which memories it no longer vouches for: the marked
    # ones it did not see. The summaries are wide (their last verdicts): an index answers
    # that without reading them.
    """
    CREATE INDEX evidence_mark ON evidence(mark);
    """,
    # Which index (its instance and count of citation changes) the last whole-store run
    # read: while they are the same, a memory whose cited files all kept their recorded
    # verdicts (index `settled_files`) has the verdicts its summary holds (verify/history.py).
    """
    CREATE TABLE history_marks (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
    """,
    # The mention grammar reads more forms (core/prose_mentions.py: `x.go` lines 28-76):
    # the memory files it found no mention in, and the mentions kept as read, are read
    # again (both are caches, rebuilt by the next run).
    """
    DELETE FROM mention_free;
    DELETE FROM mention_history;
    """,
    # Whether a file of a name was ever in the history of HEAD (verify/blame.py
    # `ever_named`): a walk of the whole history per name, asked by every run of a store
    # whose memories git does not track; kept while HEAD is the same commit.
    """
    CREATE TABLE mention_names (
        name TEXT PRIMARY KEY, head TEXT NOT NULL, named INTEGER NOT NULL
    ) WITHOUT ROWID;
    """,
    # When git last committed each undated memory file, for `recent` (verify/commit_times.py):
    # kept while HEAD and the file's mtime and size are the same; NULL when git does not
    # have it as it is (modified, untracked, ignored), so its mtime stands.
    """
    CREATE TABLE commit_times (
        path TEXT PRIMARY KEY, head TEXT NOT NULL, mtime_ns INTEGER NOT NULL,
        size INTEGER NOT NULL, committed INTEGER
    ) WITHOUT ROWID;
    """,
    # Facts about the repository a run learned and the next may reuse while what they
    # were read from is unchanged (verify/mention_cache.CloneNames: the origin remote's
    # name, kept while git's config file is the same).
    """
    CREATE TABLE facts (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
    """,
]
