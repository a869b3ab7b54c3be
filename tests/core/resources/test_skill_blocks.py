"""A prompt a skill command became is taken apart as Pi takes it apart to show it: judged by
Pi's own ``parseSkillBlock``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.pi_oracle import run_pi_script

from ctxmodes.resources.skills import Skill, expand_skill_command, parse_skill_block

SCRIPT = Path(__file__).parents[2] / "support" / "pi_skill_blocks.mjs"
BLOCK = '<skill name="lint" location="/p/.pi/skills/lint/SKILL.md">\nRun ruff.\n</skill>'

TEXTS = [
    "just a prompt",
    BLOCK,
    f"{BLOCK}\n\nfix src/",
    f"{BLOCK}\n\n   \n",
    f"{BLOCK}\n\nfirst line\n\nsecond paragraph",
    f"{BLOCK}\nno blank line before this",
    BLOCK.replace("Run ruff.", "line one\n</skill>\nline three"),
    BLOCK.replace("Run ruff.", ""),
    '<skill name="lint">\nno location\n</skill>',
    f"before {BLOCK}",
    f"{BLOCK}\n\n",
]


@pytest.mark.pi
def test_prompts_are_taken_apart_as_pi_takes_them_apart(tmp_path: Path) -> None:
    skill_file = tmp_path / "deploy" / "SKILL.md"
    skill_file.parent.mkdir()
    skill_file.write_text("---\ndescription: Ship it\n---\nShip it.\n")
    skill = Skill("deploy", "Ship it", str(skill_file), str(skill_file.parent))
    texts = [*TEXTS, expand_skill_command("/skill:deploy now", [skill])]
    expected = run_pi_script(SCRIPT, stdin=json.dumps(texts))
    for text, pi in zip(texts, expected, strict=True):
        block = parse_skill_block(text)
        ours = (
            None
            if block is None
            else [block.name, block.location, block.content, block.user_message]
        )
        assert ours == pi, text
