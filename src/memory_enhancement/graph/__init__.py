"""The link graph between memories: traversal, backlinks, broken links and their fixes.

Links are resolved when the index is built (`core.links` holds the rules); this
package walks the resolved edges (`traverse`), finds dangling and ambiguous
links and rewrites them (`broken`), and draws a traversal as text, Mermaid or
DOT (`render`).
"""
