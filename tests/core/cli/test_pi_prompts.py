"""The prompts of a Pi-style command line, read in process: the end-to-end tests, judged by
the real Pi, are in ``test_pi_command_line.py``."""

from __future__ import annotations

from pathlib import Path

from support.images import dot_gif, solid_png

from ctxmodes.cli.pi_prompts import pi_prompts


def test_an_image_is_attached_by_its_content_not_its_name(tmp_path: Path) -> None:
    """A PNG named ``.txt`` is an image; a file named ``.png`` that is no PNG is text; an
    empty image adds nothing; images follow the order of the arguments."""
    (tmp_path / "shot.txt").write_bytes(solid_png(1, 1, (0, 0, 0)))
    (tmp_path / "fake.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 16)
    (tmp_path / "empty.png").write_bytes(b"")
    (tmp_path / "dot.gif").write_bytes(dot_gif())
    names = ["@dot.gif", "@fake.png", "@empty.png", "@shot.txt"]
    prompts = pi_prompts([*names, "look"], piped=None, base=tmp_path)
    assert [image.mime_type for image in prompts.images] == ["image/gif", "image/png"]
    fake = (b"\x89PNG\r\n\x1a\n" + b"\0" * 16).decode("utf-8", "replace")
    assert prompts.texts == (
        f'<file name="{tmp_path / "dot.gif"}"></file>\n'
        f'<file name="{tmp_path / "fake.png"}">\n{fake}\n</file>\n'
        f'<file name="{tmp_path / "shot.txt"}"></file>\nlook',
    )
