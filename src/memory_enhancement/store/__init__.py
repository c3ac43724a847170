"""Memory stores on disk: file formats, the store folder, where stores live, the state database.

`formats/` holds one plug-in per file dialect (YAML frontmatter, Serena body
sections), each preserving what it does not understand byte for byte; `disk`
reads and writes a store's files atomically under a lock; `edits` rewrites one
file in place with a diff; `scan` finds what changed on disk cheaply;
`locations` says where the project, global and named stores are; `state` is the
database of what cannot be rebuilt from the files (IDs handed out, usage,
verification history).
"""
