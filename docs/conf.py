"""Sphinx configuration of the documentation site: Markdown pages read by MyST.

Built strictly by the test suite (``tests/docs/test_site.py``): every warning, among them a
link to a missing page or heading, fails the build.
"""

from __future__ import annotations

project = "ctxmodes"
extensions = ["myst_parser"]
source_suffix = {".md": "markdown"}
root_doc = "index"
# Source files beside the pages: the hook reference's generator and the example mode's
# distribution, shown in "Writing a mode" and tested in tests/docs/.
exclude_patterns = ["example-mode", "_build"]

# GitHub's heading slugs, so a link such as ``models.md#speed`` works on the site and in the
# repository browser alike.
myst_heading_anchors = 3
myst_enable_extensions = ["colon_fence"]

html_theme = "furo"
html_title = "ctxmodes"
