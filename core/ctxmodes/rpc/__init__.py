"""Pi's RPC mode (``pi --mode rpc``): the agent driven by JSON commands on standard input.

A program writes one command a line (``{"id": …, "type": "prompt", "message": …}``); each is
answered with one ``response`` line, and the session's events (the lines of Pi's JSON mode,
:mod:`ctxmodes.host.json_stream`) stream on standard output between them. Plugins' dialogs
and notices travel as Pi's ``extension_ui_request`` lines; a dialog waits for the client's
``extension_ui_response``.

- :mod:`ctxmodes.rpc.framing`: LF-only JSON lines in, locked JSON lines out.
- :mod:`ctxmodes.rpc.protocol`: the response shapes and the command table's types.
- :mod:`ctxmodes.rpc.server`: reads commands, runs them, shuts down at the end of input.
- :mod:`ctxmodes.rpc.dialogs`: plugins' notices, status texts and confirmations.
- :mod:`ctxmodes.rpc.commands`: the command table, gathered from the command modules
  (:mod:`~ctxmodes.rpc.prompting`, :mod:`~ctxmodes.rpc.state`,
  :mod:`~ctxmodes.rpc.model_commands`, :mod:`~ctxmodes.rpc.session_commands`,
  :mod:`~ctxmodes.rpc.bash_command`, :mod:`~ctxmodes.rpc.work_commands`), one group of Pi's
  commands each.
- :mod:`ctxmodes.rpc.model_objects`: Pi's ``Model`` objects of the session's model and
  of the models with credentials.
- :mod:`ctxmodes.rpc.command_line`: ``ctxmodes --mode rpc``.

Internal package: not part of the API plugins and programs use (see :mod:`ctxmodes`); the
protocol on standard input and output is the interface.
"""
