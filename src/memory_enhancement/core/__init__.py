"""The pure core: memories, citations, links and verdicts as values, and their grammars.

Nothing here reads a file, a database or a process: the model (`model`), the
citation grammar (`citations`), the link resolution rules (`links`), prose
mentions of code (`mentions`), citation IDs (`ids`), timestamps, memory paths,
verdicts and the library's errors. Every other layer may import it.
"""
