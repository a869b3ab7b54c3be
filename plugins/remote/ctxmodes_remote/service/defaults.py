"""Defaults the ``serve`` command's help shows, in a module that imports nothing: the command
line imports it to describe ``ctxmodes serve`` without loading the storage."""

#: Postgres connections (and worker threads) per service process: keep their sum over all
#: processes under the server's ``max_connections`` (100 by default).
DEFAULT_CONNECTIONS = 8
