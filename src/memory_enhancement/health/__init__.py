"""The health report: which memories to trust, most urgent first, and how to show it.

`report` assesses every memory from a verification run, the index and the
history; `render` writes it as markdown or JSON, `html` as one dashboard file;
`expiry` is the optional policy that lets unused memories fade.
"""
