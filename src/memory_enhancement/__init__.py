"""memory-enhancement: memories for AI coding agents, with citations verified just in time."""

__version__ = "0.1.0"
