"""``ctxmodes run --rpc`` (Pi's ``--mode rpc``): the session of the command line's options,
driven through standard input and output until standard input ends."""

from __future__ import annotations

import argparse
import sys

from ctxmodes.errors import CtxmodesError


def run_rpc(args: argparse.Namespace) -> int:
    """Serve RPC commands from standard input; 0 once it ended and the session closed.

    :raises CtxmodesError: prompts or ``@FILE`` arguments on the command line (commands
        bring them), another output mode.
    """
    from ctxmodes.cli.run_cmd import check_before_start, open_host, warn_about_resources
    from ctxmodes.host.interrupt import terminations_raise
    from ctxmodes.host.trace import RequestTrace
    from ctxmodes.rpc.server import RpcServer
    from ctxmodes.sdk.agent import Agent, AgentUI, Editor
    from ctxmodes.sdk.model_cycling import model_cycler

    if any(prompt.startswith("@") for prompt in args.prompts):
        raise CtxmodesError("@file arguments are not supported in RPC mode")
    if args.prompts:
        raise CtxmodesError("RPC mode takes its prompts from standard input, as commands")
    if args.print_reply or args.json_events:
        raise CtxmodesError("--rpc is an output mode of its own: leave out --print and --json")
    editor = Editor()
    ui = AgentUI(editor)
    opened = open_host(args, ui)
    host, manager = opened.host, opened.manager
    agent = Agent(host, ui, editor)
    trace = RequestTrace(args.trace) if args.trace is not None else None
    try:
        cycler, scope_warnings = model_cycler(agent, opened.model_patterns)
        for warning in scope_warnings:
            print(warning, file=sys.stderr)
        server = RpcServer(
            agent, sys.stdout.buffer, opened.options.clock, cycler, opened.reloadable
        )
        if trace is not None:
            agent.subscribe_records(trace)
        # As Pi's, a client may start without a model and name one with `set_model`.
        check_before_start(host, manager, args.model, model_required=False)
        host.start(manager)
        warn_about_resources(host)
        # SIGTERM or SIGHUP: the commands' loop unwinds as at the end of its input (the run
        # under way aborted), the session closes, and the command ends with the signal's
        # status, as Pi's RPC mode does.
        with terminations_raise():
            server.serve(sys.stdin.buffer)
    finally:
        try:
            agent.close()
        finally:
            if trace is not None:
                trace.close()
    return 0
