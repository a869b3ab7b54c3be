"""Runtime tools: the contract (:mod:`~ctxmodes.tools.base`), the built-in tools and the
processes behind them (:mod:`~ctxmodes.tools.runtime`).

The built-in tools reach the host through :class:`ctxmodes.tools.builtin.BuiltinToolsPlugin`.
Importing this package stays cheap; import the submodules you need.

Internal package: the tool contract's public names (``Tool``, ``ToolContext``,
``ToolResult``) are imported from :mod:`ctxmodes`.
"""
