"""The MCP client (see docs/mcp.md): configuration, connections on the official ``mcp`` SDK, tool adapter.

Nothing here imports the SDK at module level except :mod:`pi_coder.mcp.client`, which only the
background connecting task imports. ``pi_coder.mcp`` itself is imported only when some
``mcp.json`` exists (see :func:`pi_coder.mcp.config.config_paths`).
"""
