"""ctxmodes: context-management modes for coding agents over Pi's session tree.

The public surface for plugin authors is :data:`hookimpl`; everything else is imported from
its own module (``ctxmodes.session``, ``ctxmodes.modes`` ...), so importing ``ctxmodes``
stays cheap.
"""

from ctxmodes._version import __version__
from ctxmodes.hookspecs import hookimpl

__all__ = ["__version__", "hookimpl"]
