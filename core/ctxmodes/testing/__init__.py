"""Test support for mode authors: pytest fixtures and the mode conformance suite.

The fixtures are installed as a pytest plugin (entry point ``pytest11``); the suite is a
base class to subclass::

    from ctxmodes.testing.conformance import ModeConformance
    import my_mode

    class TestMyMode(ModeConformance):
        plugin = my_mode
        mode_name = "mine"
"""
