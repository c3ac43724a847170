"""The memories columns a `Row` is made of (rows.py), in order, and the conditions every
search mode filters them by.

A module of its own so that lexical.py can select them without importing
`dataclasses` (a quarter of the quick search path's budget).
"""

ROW_COLUMNS = (
    "path, title, format, tags, created_at, updated_at, expires_at, source, citation_count, "
    "citation_id, mtime_ns"
)


def where_sql(
    category: str | None, tag: str | None, include_expired: bool, now: str
) -> tuple[str, list[object]]:
    """WHERE conditions (on memories `m`) shared by every search mode (search.filter_sql)."""
    clauses: list[str] = ["m.error IS NULL"]
    args: list[object] = []
    if category:
        prefix = category.strip("/") + "/"
        clauses.append("m.path >= ? AND m.path < ?")
        args += [prefix, prefix[:-1] + "0"]
    if tag:
        clauses.append("EXISTS (SELECT 1 FROM tags t WHERE t.memory_id = m.id AND t.tag = ?)")
        args.append(tag)
    if not include_expired:
        clauses.append("(m.expires_at IS NULL OR m.expires_at > ?)")
        args.append(now)
    return " AND ".join(clauses), args
