"""How a memory is named on disk: its path plus this suffix.

Its own module, with no imports, so that the quick read path (cli/fast.py) and
the store scan can name memory files without loading `core.model`.
"""

MEMORY_SUFFIX = ".md"
