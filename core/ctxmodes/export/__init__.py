"""The HTML export of a session: one self-contained page (no network, no CDN), rendered on
the server from the session file.

The page shows the tree in a sidebar with the active path marked and Pi's ``/tree`` filters
(default, no-tools, user-only, labeled-only, all), and the active path in full: Markdown
replies, thinking and tool calls folded, window markers and notes, Tree's archived windows
folded under the summaries that stand for them, other branches folded where they leave the
path. Every piece of session content is escaped; the only script is the page's own, pinned
by hash in the page's Content-Security-Policy.

Internal package: not part of the API plugins and programs use (see :mod:`ctxmodes`).
"""

from ctxmodes.export.render import (
    default_page_name,
    export_session,
    render_html,
    write_html,
    write_page,
)

__all__ = ["default_page_name", "export_session", "render_html", "write_html", "write_page"]
