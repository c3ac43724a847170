"""The memories columns a `Row` is made of (rows.py), in order.

A module of its own so that lexical.py can select them without importing
`dataclasses` (a quarter of the quick search path's budget).
"""

ROW_COLUMNS = (
    "path, title, format, tags, created_at, updated_at, expires_at, source, citation_count, "
    "citation_id, mtime_ns"
)
