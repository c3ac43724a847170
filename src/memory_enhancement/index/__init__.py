"""The SQLite index of a store: a cache of its files for fast reads, search and IDs.

`index` keeps it in step with the files (`schema`, `writer`, `reading`,
`idassign`, `linking` do the parts of a sync); `queries` reads it; `search` is
BM25 and hybrid fusion, `semantic` the optional embeddings; `lookup` finds a
memory from a path, an ID or a name; `usage` records which memories agents used.
"""
