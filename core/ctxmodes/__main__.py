from ctxmodes.cli import run

run()
