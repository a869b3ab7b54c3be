"""``ctxmodes serve``: run the history/notes service, issue tokens, rotate the master key.

::

    ctxmodes serve --upstream MODEL --data DIR [--host H] [--port P] [--tls-cert F --tls-key F]
    ctxmodes serve token create NAME --data DIR
    ctxmodes serve token list --data DIR
    ctxmodes serve token revoke (ID | --account NAME) --data DIR
    ctxmodes serve key rotate --data DIR
    ctxmodes serve backup --data DIR --to FILE
    ctxmodes serve codex-home DIR --url URL < TOKEN_FILE

The Remote plugin registers it through ``ctx_register_cli_commands``. Registration imports
nothing heavy: the HTTP stack (the ``serve`` extra) is imported when the server starts.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

from ctxmodes import CliCommand, CtxmodesError

if TYPE_CHECKING:
    from pathlib import Path

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8443
MAX_PORT = 65_535


DESCRIPTION = (
    "Serve Codex's history/notes contract and its /responses endpoint in front of any "
    "ctxmodes model, for the Remote mode and for the Codex CLI."
)


def command() -> CliCommand:
    return CliCommand(
        name="serve",
        help="run the Codex history/notes service in front of a model",
        run=_dispatch,
        configure=_configure,
        description=DESCRIPTION,
    )


def _dispatch(args: argparse.Namespace) -> int:
    handler: Callable[[argparse.Namespace], int] = args.serve_handler
    return handler(args)


def _configure(parser: argparse.ArgumentParser) -> None:
    from ctxmodes_remote.service.defaults import DEFAULT_CONNECTIONS

    parser.add_argument(
        "--upstream",
        metavar="MODEL",
        help="the model that answers /responses, as `ctxmodes models` lists it "
        "(e.g. anthropic/claude-sonnet-4-5), or scripted:FILE",
    )
    _add_data(parser, default=None)
    parser.add_argument("--host", default=DEFAULT_HOST, help=f"address (default {DEFAULT_HOST})")
    parser.add_argument(
        "--port", type=int, default=DEFAULT_PORT, help=f"port, 0 for any (default {DEFAULT_PORT})"
    )
    parser.add_argument("--tls-cert", metavar="FILE", help="PEM certificate chain")
    parser.add_argument("--tls-key", metavar="FILE", help="PEM private key")
    parser.add_argument(
        "--upstream-timeout",
        metavar="SECONDS",
        type=float,
        default=300.0,
        help="fail a response when the model sends nothing for this long (default 300)",
    )
    parser.add_argument(
        "--idle-timeout",
        metavar="SECONDS",
        type=float,
        default=75.0,
        help="close a connection that sends no request headers, or stops sending a body, "
        "for this long (default 75)",
    )
    parser.add_argument(
        "--database-connections",
        metavar="N",
        type=int,
        default=DEFAULT_CONNECTIONS,
        help="Postgres connections of this process's worker threads (one thread each), and "
        "of its note reads and writes on the event loop; more let more sessions' writes "
        f"commit together (default {DEFAULT_CONNECTIONS})",
    )
    parser.set_defaults(serve_handler=_serve)

    actions = parser.add_subparsers(dest="serve_command", metavar="COMMAND")
    token = actions.add_parser("token", help="bearer tokens").add_subparsers(
        dest="token_command", metavar="COMMAND", required=True
    )
    create = token.add_parser("create", help="issue a token for an account (created if new)")
    create.add_argument("name", metavar="NAME", help="account name")
    _add_data(create)
    create.set_defaults(serve_handler=_token_create)
    listing = token.add_parser("list", help="the tokens: id, when made, account (never the token)")
    _add_data(listing)
    listing.set_defaults(serve_handler=_token_list)
    revoke = token.add_parser(
        "revoke", help="revoke a token by its id, or every token of an account"
    )
    revoke.add_argument("token_id", metavar="ID", nargs="?", help="a token id from `token list`")
    revoke.add_argument("--account", metavar="NAME", help="revoke every token of this account")
    _add_data(revoke)
    revoke.set_defaults(serve_handler=_token_revoke)

    key = actions.add_parser("key", help="the master key").add_subparsers(
        dest="key_command", metavar="COMMAND", required=True
    )
    rotate = key.add_parser("rotate", help="encrypt with a new master key; old values still open")
    _add_data(rotate)
    rotate.set_defaults(serve_handler=_key_rotate)

    backup = actions.add_parser(
        "backup", help="copy the SQLite database consistently, even while the service runs"
    )
    from pathlib import Path  # here: `ctxmodes --help` loads this module, not pathlib

    # --database is taken so that a service on Postgres is told, in one line, how its backups
    # are made.
    _add_data(backup, database_help=argparse.SUPPRESS)
    backup.add_argument("--to", metavar="FILE", type=Path, required=True, help="a new file")
    backup.set_defaults(serve_handler=_backup)

    codex = actions.add_parser(
        "codex-home",
        help="make a Codex CLI home signed in to the service with a token read from standard input",
    )
    codex.add_argument("home", metavar="DIR", type=Path, help="the home (CODEX_HOME) to make")
    codex.add_argument(
        "--url",
        required=True,
        help="the service's URL, as it printed it: https://HOST:PORT/backend-api/codex",
    )
    codex.set_defaults(serve_handler=_codex_home)


def _add_data(
    parser: argparse.ArgumentParser,
    *,
    default: object = argparse.SUPPRESS,
    database_help: str = "keep everything in Postgres (postgresql://…) instead of SQLite in --data",
) -> None:
    """``--data`` and ``--database``. A command's own take ``SUPPRESS`` as their default, so
    that the options may come before the command as well (``ctxmodes serve --data D token
    create NAME``): a default of the command's would replace the value given there."""
    from pathlib import Path

    parser.add_argument(
        "--data",
        metavar="DIR",
        type=Path,
        default=default,
        help="the service's data directory (master keys; the SQLite database by default)",
    )
    parser.add_argument(
        "--database",
        metavar="URL",
        default=default,
        help=database_help,
    )


def _given_data(args: argparse.Namespace) -> Path:
    """The ``--data`` of a command, which every command but the server itself needs."""
    data: Path | None = args.data
    if data is None:
        words = (args.serve_command, vars(args).get("token_command"), vars(args).get("key_command"))
        command = " ".join(word for word in words if word)
        raise CtxmodesError(f"ctxmodes serve {command} needs --data DIR")
    return data


def _data_directory(path: Path) -> Path:
    try:
        path.mkdir(parents=True, exist_ok=True, mode=0o700)
    except OSError as exc:
        raise CtxmodesError(f"cannot use data directory {path}: {exc.strerror or exc}") from None
    if not path.is_dir():
        raise CtxmodesError(f"not a directory: {path}")
    return path


def _existing_data(args: argparse.Namespace) -> Path:
    """The data directory of a command that reads or changes what the service already holds
    (``token list``, ``token revoke``): on SQLite its database must be there, so
    that a mistyped ``--data`` is an error rather than a new, empty database."""
    data = _given_data(args)
    if args.database is not None:
        return _data_directory(data)
    from ctxmodes_remote.service.sqlite_storage import DATABASE_NAME

    if not (data / DATABASE_NAME).is_file():
        raise CtxmodesError(
            f"no service database in {data} (`ctxmodes serve token create NAME --data "
            f"{data}` or `ctxmodes serve` make one)"
        )
    return data


def _token_create(args: argparse.Namespace) -> int:
    from ctxmodes_remote.service.accounts import create_token, token_id
    from ctxmodes_remote.service.storage import open_storage

    storage = open_storage(_data_directory(_given_data(args)), args.database)
    try:
        issued = create_token(storage, args.name)
    finally:
        storage.close()
    print(issued.token)
    print(
        f"account {issued.account.name} ({issued.account.account_id}), "
        f"token id {token_id(issued.token)}",
        file=sys.stderr,
    )
    return 0


def _token_list(args: argparse.Namespace) -> int:
    from datetime import UTC, datetime

    from ctxmodes_remote.service.storage import open_storage

    storage = open_storage(_existing_data(args), args.database)
    try:
        tokens = storage.list_tokens()
    finally:
        storage.close()
    if tokens:
        print(f"{'ID':16}  {'CREATED':20}  ACCOUNT")
    for record in tokens:
        made = datetime.fromtimestamp(record.created_at, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        print(f"{record.token_id:16}  {made:20}  {record.account.name}")
    if not tokens:
        print("no tokens (`ctxmodes serve token create NAME` issues one)", file=sys.stderr)
    return 0


def _token_revoke(args: argparse.Namespace) -> int:
    from ctxmodes_remote.service.accounts import TOKEN_CACHE_S, revoke
    from ctxmodes_remote.service.storage import open_storage

    if (args.token_id is None) == (args.account is None):
        raise CtxmodesError("serve token revoke takes a token id or --account NAME, not both")
    storage = open_storage(_existing_data(args), args.database)
    try:
        count = revoke(storage, token=args.token_id, account=args.account)
    finally:
        storage.close()
    # A process keeps a token it found for a short while: the refusal is not instant.
    print(
        f"revoked {count} token(s); every process refuses them within {TOKEN_CACHE_S:g} seconds",
        file=sys.stderr,
    )
    return 0


def _key_rotate(args: argparse.Namespace) -> int:
    from ctxmodes_remote.service.crypto import rotate_master_key

    count = rotate_master_key(_data_directory(_given_data(args)))
    print(f"new master key in use; {count - 1} older key(s) kept for decryption", file=sys.stderr)
    return 0


def _backup(args: argparse.Namespace) -> int:
    from ctxmodes_remote.service.sqlite_storage import DATABASE_NAME, backup_sqlite

    data = _given_data(args)
    if args.database is not None or not (data / DATABASE_NAME).is_file():
        # On Postgres the data directory holds only the key file: there is nothing to copy.
        where = "" if args.database is not None else f"no service database in {data}; "
        raise CtxmodesError(
            f"{where}serve backup copies a service's SQLite database; back up a service on "
            "Postgres with pg_dump --format=custom URL > FILE"
        )
    backup_sqlite(data, args.to)
    print(
        f"backed up to {args.to}; keep {data / 'master.keys'} with it (and apart from it)",
        file=sys.stderr,
    )
    return 0


def _codex_home(args: argparse.Namespace) -> int:
    from datetime import UTC, datetime

    from ctxmodes_remote.service.codex_home import CodexBackend, write_codex_home

    backend = CodexBackend.at(args.url)
    if sys.stdin.isatty():
        # A token typed on the command line or echoed to the terminal would be seen.
        raise CtxmodesError(
            "serve codex-home reads the token from standard input: "
            "`ctxmodes serve codex-home DIR --url URL < token`"
        )
    token = sys.stdin.read().strip()
    account = write_codex_home(args.home, backend, token, datetime.now(UTC))
    # Named whole: Codex is run from other folders than this one.
    home = args.home.absolute()
    print(
        f"Codex home {home} signed in to {backend.openai_base_url} as {account}; run Codex "
        f"with CODEX_HOME={home} (and CODEX_CA_CERTIFICATE=FILE when a private CA signed the "
        "service's certificate)",
        file=sys.stderr,
    )
    return 0


def _serve(args: argparse.Namespace) -> int:
    if args.upstream is None or args.data is None:
        raise CtxmodesError("ctxmodes serve needs --upstream MODEL and --data DIR")
    if (args.tls_cert is None) != (args.tls_key is None):
        raise CtxmodesError("--tls-cert and --tls-key go together")
    for option, value in (
        ("--upstream-timeout", args.upstream_timeout),
        ("--idle-timeout", args.idle_timeout),
    ):
        if not 0 < value < math.inf:
            raise CtxmodesError(f"{option} takes a number of seconds above 0")
    # The system would take the port modulo 65536 and listen elsewhere without a word.
    if not 0 <= args.port <= MAX_PORT:
        raise CtxmodesError(f"--port takes a number from 0 to {MAX_PORT}")
    if args.database_connections < 1:
        raise CtxmodesError("--database-connections takes a number above 0")
    try:
        from ctxmodes_remote.service.server import ServerConfig, run_server
    except ImportError as exc:
        raise CtxmodesError(
            f"ctxmodes serve needs its extra ({exc.name} is missing): pip install 'ctxmodes[serve]'"
        ) from None
    config = ServerConfig(
        upstream=args.upstream,
        data=_data_directory(args.data),
        database=args.database,
        host=args.host,
        port=args.port,
        tls_cert=args.tls_cert,
        tls_key=args.tls_key,
        upstream_timeout_s=args.upstream_timeout,
        idle_timeout_s=args.idle_timeout,
        database_connections=args.database_connections,
    )
    run_server(config)
    return 0
