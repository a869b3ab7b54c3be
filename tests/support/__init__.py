"""Helpers shared by test packages (``tests/`` is on ``sys.path`` through pytest's
``pythonpath`` setting): locating the real Pi and the oracle corpus, and the rigs of the host
and Local tests."""
