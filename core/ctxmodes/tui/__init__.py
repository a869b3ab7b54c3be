"""The interactive terminal session (``ctxmodes`` on a terminal, ``ctxmodes chat``).

A client of :mod:`ctxmodes.sdk`: the session, its queues and its commands are the embedding
API's; this package only draws and reads keys. It writes to the terminal's normal
scrollback (no alternate screen): finished messages are printed once, above a small live
region — the streaming reply, the queue, the editor and the footer — which is all that is
ever redrawn.

Nothing here is imported by ``ctxmodes --help``: prompt_toolkit loads when a session starts.

Internal package: not part of the API plugins and programs use (see :mod:`ctxmodes`).
"""
