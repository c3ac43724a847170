"""The MCP front end: every operation as a tool for agents (official Python SDK v2).

`server` builds the server and its tools (parse, call the service, return the
documented shapes); `shapes` declares those shapes as typed dicts, the tools'
output schemas. Only this package imports the `mcp` SDK.
"""
