"""The system prompt, prompt templates, skills and trust decisions of ctxmodes against the
real Pi's ``AgentSession``, for the same directory trees (global and project files,
overrides, a git checkout, templates, skills, saved trust)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support.pi_oracle import pi_resources

from ctxmodes.host.system_prompt import build_system_prompt
from ctxmodes.resources import ProjectTrustStore, ResourceFlags, TrustResolver, load_resources
from ctxmodes.resources.sources import ResourceSource
from ctxmodes.tools.files import EditTool, ReadTool, WriteTool

pytestmark = pytest.mark.pi

TOOLS = [ReadTool(), WriteTool(), EditTool()]


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def skill(name: str, description: str, *, extra: str = "") -> str:
    return f"---\nname: {name}\ndescription: {description}\n{extra}---\n# {name}\n\nSteps.\n"


@pytest.fixture
def tree(tmp_path: Path) -> dict[str, Path]:
    """A home with global resources, and a project nested in a git checkout."""
    home = tmp_path / "home"
    agent = home / ".pi" / "agent"
    write(agent / "AGENTS.md", "Global rules: be careful.\n")
    greet = "---\ndescription: Say hello\n---\nHello $1, from ${2:-nowhere}!"
    write(agent / "prompts" / "greet.md", greet)
    write(agent / "prompts" / "review.md", "Review the global way: $@\n")
    edge = "[${@:1:2}] [${@:-none}] [${ARGUMENTS:-empty}] [$0] [$10] [${@:0}] [$$1] [${3:-c}]"
    write(agent / "prompts" / "edge.md", edge)
    write(agent / "skills" / "global-skill" / "SKILL.md", skill("global-skill", "Global & <safe>"))
    write(agent / "skills" / "loose.md", "---\ndescription: A loose skill file\n---\nBody\n")
    write(agent / "skills" / "no-description.md", "Just notes\n")
    home_skills = home / ".agents" / "skills"
    write(home_skills / "home-skill" / "SKILL.md", skill("home-skill", "From ~/.agents"))
    work = tmp_path / "work"
    write(work / "AGENTS.md", "Outer rules.\n")
    repo = work / "repo"
    write(repo / ".git" / "HEAD", "ref: refs/heads/main\n")
    write(repo / "CLAUDE.md", "\ufeffRepository rules (CLAUDE.md).\n")
    repo_skills = repo / ".agents" / "skills"
    write(repo_skills / "repo-skill" / "SKILL.md", skill("repo-skill", "From the checkout"))
    write(repo_skills / "group" / "nested.md", "---\ndescription: nested one\n---\nx\n")
    pkg = repo / "pkg"
    write(pkg / "AGENTS.md", "Package rules (replaced by the override).\n")
    write(pkg / "AGENTS.override.md", "Package override rules.\n")
    config = pkg / ".pi"
    review = "---\nargument-hint: <files>\n---\nReview ${@:2} then $1 ($ARGUMENTS)\n"
    write(config / "prompts" / "review.md", review)
    write(config / "prompts" / "a-long-one.md", "x" * 80 + "\nmore\n")
    skills = config / "skills"
    write(skills / "proj-skill" / "SKILL.md", skill("proj-skill", "Project 'quoted' skill"))
    hidden = skill("hidden", "Only by command", extra="disable-model-invocation: true\n")
    write(skills / "hidden" / "SKILL.md", hidden)
    write(skills / "global-skill" / "SKILL.md", skill("global-skill", "Project copy wins"))
    write(config / "skills" / ".gitignore", "ignored/\n")
    write(config / "skills" / "ignored" / "SKILL.md", skill("ignored", "Never loaded"))
    write(config / "skills" / "Bad_Name" / "SKILL.md", skill("Bad_Name", "Loaded with a warning"))
    return {"home": home, "agent": agent, "cwd": pkg, "config": config}


EXPANSIONS = [
    "/greet Ada",
    "/greet 'Ada Lovelace' London",
    "/review a.py b.py c.py",
    "/edge a b",
    "/edge",
    "/edge \"x y\" z 'w'  v",
    "/edge\nsecond line",
    "/skill:proj-skill fix the bug",
    "/skill:hidden",
    "/skill:unknown x",
    "/nothing here",
    "plain text",
]


def ours(request: dict[str, Any], home: Path) -> dict[str, Any]:
    agent = Path(request["agentDir"])
    resolver = TrustResolver(
        ProjectTrustStore(agent),
        override=request.get("trustOverride"),
        default=request.get("defaultProjectTrust", "ask"),
    )
    trusted = resolver.is_trusted(request["cwd"])
    flags = ResourceFlags(
        context_files=not request.get("noContextFiles", False),
        skills=not request.get("noSkills", False),
        prompt_templates=not request.get("noPromptTemplates", False),
        skill_paths=tuple(request.get("skillPaths", ())),
        prompt_template_paths=tuple(request.get("promptTemplatePaths", ())),
        system_prompt=request.get("systemPrompt"),
        append_system_prompt=(
            tuple(request["appendSystemPrompt"]) if "appendSystemPrompt" in request else None
        ),
    )
    loaded = load_resources(request["cwd"], agent, trusted=trusted, flags=flags, home=home)
    return {
        "trusted": trusted,
        "systemPrompt": build_system_prompt(TOOLS, Path(request["cwd"]), loaded),
        "base": build_system_prompt(TOOLS, Path(request["cwd"])),
        "contextFiles": [context.path for context in loaded.context_files],
        "templates": [
            {
                "name": t.name,
                "description": t.description,
                "content": t.content,
                "filePath": t.file_path,
                "argumentHint": t.argument_hint,
                "sourceInfo": _source_info(t.file_path, t.source),
            }
            for t in loaded.templates
        ],
        "skills": [
            {
                "name": skill.name,
                "description": skill.description,
                "filePath": skill.file_path,
                "baseDir": skill.base_dir,
                "disableModelInvocation": skill.disable_model_invocation,
                "sourceInfo": _source_info(skill.file_path, skill.source),
            }
            for skill in loaded.skills
        ],
        "expanded": [loaded.expand(text) for text in request.get("expand", [])],
        "diagnostics": [w for w in loaded.warnings if " is shadowed by " not in w],
    }


def _source_info(path: str, source: ResourceSource | None) -> dict[str, Any]:
    assert source is not None, f"the loader gave {path} no source"
    return source.info(path)


_PI_BUILT_IN: list[str] = []


def _pi_built_in_prompt(scratch: Path) -> str:
    """Pi's built-in prompt for these tools, without any resource or working directory."""
    if not _PI_BUILT_IN:
        home = scratch / "home"
        home.mkdir(exist_ok=True)
        bare = {"cwd": str(scratch), "agentDir": str(home / "agent")}
        prompt = pi_resources([bare], home)[0]["systemPrompt"]
        _PI_BUILT_IN.append(prompt.rsplit("\nCurrent working", 1)[0])
    return _PI_BUILT_IN[0]


def compare(requests: list[dict[str, Any]], home: Path, empty_cwd: Path) -> None:
    # Pi's built-in prompt is Pi's own text: what is compared is everything the resources
    # add to it (the whole prompt when a SYSTEM.md replaces it).
    pi_base = _pi_built_in_prompt(empty_cwd)
    for request, pi in zip(requests, pi_resources(requests, home), strict=True):
        mine = ours(request, home)
        label = json.dumps({k: v for k, v in request.items() if k != "expand"})
        for key in ("trusted", "contextFiles", "templates", "skills", "expanded"):
            assert mine[key] == pi[key], f"{key} differs for {label}"
        assert sorted(mine["diagnostics"]) == sorted(pi["diagnostics"]), label
        if pi["systemPrompt"].startswith(pi_base):
            our_base = mine["base"].rsplit("\nCurrent working", 1)[0]
            assert mine["systemPrompt"].startswith(our_base), label
            ours_tail = mine["systemPrompt"][len(our_base) :]
            assert ours_tail == pi["systemPrompt"][len(pi_base) :], label
        else:
            assert mine["systemPrompt"] == pi["systemPrompt"], label


def test_resources_match_pi_for_each_trust_decision(tree: dict[str, Path], tmp_path: Path) -> None:
    home, agent, cwd = tree["home"], tree["agent"], tree["cwd"]
    write(tree["config"] / "SYSTEM.md", "You are the project's own agent.\n")
    write(tree["config"] / "APPEND_SYSTEM.md", "Project appendix.")
    write(agent / "APPEND_SYSTEM.md", "Global appendix.")
    empty = tmp_path / "empty"
    empty.mkdir()
    base = {"cwd": str(cwd), "agentDir": str(agent), "expand": EXPANSIONS}
    compare(
        [
            {**base, "trustOverride": True},
            {**base, "trustOverride": False},
            {**base},  # nobody to ask: not trusted
            {**base, "defaultProjectTrust": "always"},
            {**base, "defaultProjectTrust": "never"},
            {**base, "trustOverride": True, "noContextFiles": True},
        ],
        home,
        empty,
    )


def test_saved_trust_of_a_parent_folder_matches_pi(tree: dict[str, Path], tmp_path: Path) -> None:
    home, agent, cwd = tree["home"], tree["agent"], tree["cwd"]
    empty = tmp_path / "empty"
    empty.mkdir()
    base = {"cwd": str(cwd), "agentDir": str(agent), "expand": EXPANSIONS}
    ProjectTrustStore(agent).set(cwd.parent, True)
    compare([base], home, empty)
    ProjectTrustStore(agent).set(cwd, False)  # the nearest decision wins
    compare([base], home, empty)


def test_built_in_prompt_with_global_files_only_matches_pi(
    tree: dict[str, Path], tmp_path: Path
) -> None:
    home, agent = tree["home"], tree["agent"]
    write(agent / "SYSTEM.md", "Global system prompt.\n")
    plain = tmp_path / "plain"
    write(plain / "AGENTS.md", "Plain project.\n")
    empty = tmp_path / "empty"
    empty.mkdir()
    compare(
        [
            {"cwd": str(plain), "agentDir": str(agent), "expand": EXPANSIONS},
            {"cwd": str(tree["cwd"]), "agentDir": str(agent), "trustOverride": True},
        ],
        home,
        empty,
    )
    (agent / "SYSTEM.md").unlink()
    compare([{"cwd": str(plain), "agentDir": str(agent)}], home, empty)


def test_linked_worktree_inside_its_checkout_does_not_repeat_its_rules(tmp_path: Path) -> None:
    import subprocess

    home = tmp_path / "home"
    agent = home / ".pi" / "agent"
    agent.mkdir(parents=True)
    main = tmp_path / "main"
    main.mkdir()
    write(main / "AGENTS.md", "Project rules.\n")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-C", str(main)]
    subprocess.run([*git, "init", "-q", "-b", "main"], check=True)
    subprocess.run([*git, "add", "AGENTS.md"], check=True)
    subprocess.run([*git, "commit", "-qm", "rules"], check=True)
    subprocess.run([*git, "worktree", "add", "-q", str(main / "wt"), "-b", "wt"], check=True)
    empty = tmp_path / "empty"
    empty.mkdir()
    compare([{"cwd": str(main / "wt"), "agentDir": str(agent)}], home, empty)
    loaded = load_resources(main / "wt", agent, trusted=True, home=home)
    assert [c.path for c in loaded.context_files] == [str(main / "wt" / "AGENTS.md")]
    # A .git file that names no git folder is passed by, as Pi's walk passes it: the
    # worktree above is still found, and the checkout's rules still not repeated.
    inner = main / "wt" / "inner"
    write(inner / ".git", "not a gitdir line\n")
    compare([{"cwd": str(inner), "agentDir": str(agent)}], home, empty)
    loaded = load_resources(inner, agent, trusted=True, home=home)
    assert [c.path for c in loaded.context_files] == [str(main / "wt" / "AGENTS.md")]


@pytest.fixture
def extra(tree: dict[str, Path], tmp_path: Path) -> dict[str, Path]:
    """Skills and templates kept outside Pi's standard places, named by both settings files
    with globs, exclusions and forced paths, and folders for the command line's flags."""
    home, agent, cwd, config = tree["home"], tree["agent"], tree["cwd"], tree["config"]
    shared = home / "shared"
    write(shared / "skills" / "alpha" / "SKILL.md", skill("alpha", "Shared alpha"))
    write(shared / "skills" / "draft-beta" / "SKILL.md", skill("draft-beta", "Forced back in"))
    write(shared / "skills" / "draft-gamma" / "SKILL.md", skill("draft-gamma", "Excluded draft"))
    write(shared / "skills" / "loose-shared.md", "---\ndescription: Loose and shared\n---\nx\n")
    write(shared / "skills" / ".hidden" / "SKILL.md", skill("hidden-shared", "Dot folder"))
    write(shared / "skills" / "node_modules" / "m" / "SKILL.md", skill("dep", "A dependency"))
    write(shared / "prompts" / "one.md", "One: $1\n")
    write(shared / "prompts" / "draft-two.md", "Draft two\n")
    write(shared / "prompts" / "sub" / "three.md", "---\ndescription: Nested three\n---\nThree\n")
    write(shared / "prompts" / ".dot.md", "Dot template\n")
    write(shared / "prompts" / "sub" / ".gitignore", "ignored.md\n")
    write(shared / "prompts" / "sub" / "ignored.md", "Never loaded\n")
    write(shared / "notes.txt", "not a skill\n")
    write(home / "solo.md", "---\nname: solo\ndescription: One file by ~\n---\nSolo\n")
    user_settings = {
        "skills": [
            "../../shared/skills",
            "~/solo.md",
            "does/not/exist",
            "!**/draft-*",
            "+../../shared/skills/draft-beta",
            "-skills/global-skill",
        ],
        "prompts": ["~/shared/prompts", "../../shared/notes.txt", "!draft-*", "-prompts/edge.md"],
    }
    write(agent / "settings.json", json.dumps(user_settings))
    vendor = cwd / "vendor"
    write(vendor / "skills" / "alpha" / "SKILL.md", skill("alpha", "Vendored alpha wins"))
    write(vendor / "skills" / "vendor-secret" / "SKILL.md", skill("vendor-secret", "Excluded"))
    write(vendor / "skills" / "vendor-tool" / "SKILL.md", skill("vendor-tool", "Vendored"))
    absolute = tmp_path / "absolute-prompts"
    write(absolute / "special.md", "Special ${1:-none}\n")
    write(absolute / "review.md", "Absolute review $@\n")
    project_settings = {
        "skills": ["../vendor/skills", "skills", "!vendor-secret", "!hidden"],
        "prompts": [str(absolute), "!a-long-one.md", "*.md"],
    }
    write(config / "settings.json", json.dumps(project_settings))
    cli = tmp_path / "cli"
    write(cli / "skills" / "cli-skill" / "SKILL.md", skill("cli-skill", "From --skill"))
    write(cli / "skills" / "alpha" / "SKILL.md", skill("alpha", "Loses to every other alpha"))
    write(cli / "one-skill.md", "---\nname: one-skill\ndescription: A --skill file\n---\nx\n")
    write(cli / "prompts" / "cli-one.md", "From --prompt-template: $@\n")
    write(cli / "prompts" / ".dotted.md", "A dot file, read from a --prompt-template folder\n")
    write(cli / "prompts" / "sub" / "deeper.md", "Not read: one level only\n")
    write(cli / "prompts" / "one.md", "Loses to the shared one\n")
    write(cli / "loose.txt", "not markdown\n")
    return {**tree, "cli": cli, "shared": shared}


EXTRA_EXPANSIONS = [
    *EXPANSIONS,
    "/one first",
    "/three",
    "/special",
    "/special given",
    "/cli-one a b",
    "/skill:alpha go",
    "/skill:solo",
    "/skill:cli-skill now",
    "/skill:vendor-secret x",
]


def cli_paths(extra: dict[str, Path]) -> dict[str, list[str]]:
    cli = extra["cli"]
    return {
        "skillPaths": [
            str(cli / "skills"),
            str(cli / "one-skill.md"),
            "~/shared/skills/alpha",
            str(cli / "missing-skills"),
            str(cli / "loose.txt"),
            str(extra["shared"] / "skills" / "alpha"),
        ],
        "promptTemplatePaths": [
            str(cli / "prompts"),
            str(cli / "missing.md"),
            "../../../cli/prompts/cli-one.md",
            str(cli / "loose.txt"),
        ],
    }


def test_extra_skill_and_template_folders_load_as_in_pi(
    extra: dict[str, Path], tmp_path: Path
) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    base = {"cwd": str(extra["cwd"]), "agentDir": str(extra["agent"]), "expand": EXTRA_EXPANSIONS}
    flags = cli_paths(extra)
    compare(
        [
            {**base, "trustOverride": True},
            {**base, "trustOverride": False},
            {**base, "trustOverride": True, **flags},
            {**base, "trustOverride": False, **flags},
            {**base, "trustOverride": True, "noSkills": True, "noPromptTemplates": True},
            {**base, "trustOverride": True, "noSkills": True, "noPromptTemplates": True, **flags},
        ],
        extra["home"],
        empty,
    )


def test_legacy_skills_object_and_relative_flags_match_pi(
    extra: dict[str, Path], tmp_path: Path
) -> None:
    legacy = {"skills": {"enableSkillCommands": False, "customDirectories": ["~/shared/skills"]}}
    write(extra["agent"] / "settings.json", json.dumps(legacy))
    empty = tmp_path / "empty"
    empty.mkdir()
    base = {"cwd": str(extra["cwd"]), "agentDir": str(extra["agent"]), "expand": EXTRA_EXPANSIONS}
    relative = {"skillPaths": ["vendor/skills", "~/solo.md"], "promptTemplatePaths": ["vendor"]}
    compare(
        [{**base, "trustOverride": False}, {**base, "trustOverride": True, **relative}],
        extra["home"],
        empty,
    )


def test_links_braces_and_exact_paths_in_settings_match_pi(tmp_path: Path) -> None:
    home = tmp_path / "home"
    agent = home / ".pi" / "agent"
    real = home / "real-skills"
    for name in ("one", "two", "three"):
        write(real / name / "SKILL.md", skill(name, f"Skill {name}"))
    (agent / "skills").mkdir(parents=True)
    (agent / "linked").symlink_to(real)
    (agent / "skills" / "one").symlink_to(real / "one")  # the same file twice
    prompts = home / "p"
    for name in ("a", "b1", "c", "d"):
        write(prompts / f"{name}.md", f"Template {name}: $@\n")
    write(prompts / "node_modules" / "dep.md", "Never loaded\n")
    write(prompts / "deep" / "er" / "e.md", "---\ndescription: Deep e\n---\nE\n")
    write(prompts / ".gitignore", "d.md\n")
    settings = {
        "skills": ["linked", "**/{one,two}/SKILL.md", "!two", "+./linked/two", "-linked/three"],
        "prompts": ["~/p/a.md", "~/p", "!**/b*.md", "-~/p/c.md", "-../../p/a.md"],
    }
    write(agent / "settings.json", json.dumps(settings))
    project = tmp_path / "project"
    write(project / "outside" / "x.md", "Project x\n")
    write(project / ".pi" / "settings.json", json.dumps({"prompts": ["../outside", "!a.md"]}))
    empty = tmp_path / "empty"
    empty.mkdir()
    expand = ["/a 1", "/b1", "/c", "/d", "/e", "/x", "/skill:one", "/skill:two go"]
    base = {"cwd": str(project), "agentDir": str(agent), "expand": expand}
    compare(
        [
            {**base, "trustOverride": True},
            {**base, "trustOverride": False},
            {**base, "defaultProjectTrust": "always", "skillPaths": ["~/real-skills"]},
        ],
        home,
        empty,
    )


def test_system_prompts_given_on_the_command_line_match_pi(
    tree: dict[str, Path], tmp_path: Path
) -> None:
    """Pi's ``--system-prompt`` and ``--append-system-prompt``: a text, or the file it names
    (an absolute path here: the two tools' processes start in different folders), in place
    of ``SYSTEM.md`` and ``APPEND_SYSTEM.md`` (which the trusted project has)."""
    appended = tmp_path / "append.md"
    write(appended, "\ufeffAppended from a file.\n")
    system = tmp_path / "system.md"
    write(system, "The whole prompt, from a file.\n")
    write(tree["config"] / "SYSTEM.md", "The project's own prompt.\n")
    write(tree["config"] / "APPEND_SYSTEM.md", "The project's own addition.\n")
    cwd, agent = str(tree["cwd"]), str(tree["agent"])
    requests = [
        {"cwd": cwd, "agentDir": agent, "trustOverride": True, "systemPrompt": "Be terse."},
        {
            "cwd": cwd,
            "agentDir": agent,
            "trustOverride": True,
            "systemPrompt": str(system),
            "appendSystemPrompt": [str(appended), "And a text.", str(tmp_path / "missing.md")],
        },
        {"cwd": cwd, "agentDir": agent, "trustOverride": False, "appendSystemPrompt": []},
    ]
    (tmp_path / "empty").mkdir()
    compare(requests, tree["home"], tmp_path / "empty")
