import importlib.util
import inspect
import re
from pathlib import Path

from ctxmodes import hookspecs
from ctxmodes.hooks import HookRelay

ROOT = Path(__file__).resolve().parents[2]


def _load_generator():
    spec = importlib.util.spec_from_file_location("gen_hooks", ROOT / "docs" / "gen_hooks.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


GEN = _load_generator()
HOOKS = GEN.hook_functions()


def test_there_are_hooks_for_every_lifecycle_stage():
    names = {name for name, _ in HOOKS}
    required = {
        "ctx_register_modes",
        "ctx_register_tools",
        "ctx_register_commands",
        "ctx_session_start",
        "ctx_session_shutdown",
        "ctx_input",
        "ctx_new_context",
        "ctx_agent_settled",
        "ctx_session_tree",
        "ctx_session_before_compact",
        "ctx_session_compact",
        "ctx_project_context",
        "ctx_provider_request",
        "ctx_retrieve",
    }
    assert required <= names


def test_every_hook_is_prefixed():
    assert all(name.startswith("ctx_") for name, _ in HOOKS)


def test_every_hookspec_documents_params_and_return():
    for name, func in HOOKS:
        doc = inspect.getdoc(func)
        assert doc, f"{name} has no docstring"
        for param in inspect.signature(func).parameters:
            assert f":param {param}:" in doc, f"{name} does not document {param}"
        assert ":return:" in doc, f"{name} does not say what its return means"


def test_hook_reference_is_generated_from_the_specs():
    # Regenerate and compare: the reference cannot drift from the docstrings.
    assert (ROOT / "docs" / "hooks.md").read_text() == GEN.render()


def test_every_hook_appears_in_the_reference_with_its_signature():
    reference = (ROOT / "docs" / "hooks.md").read_text()
    for name, func in HOOKS:
        assert f"## `{name}`" in reference
        assert GEN.signature_line(name, func) in reference


def test_the_facade_covers_every_hook():
    # Every session hookspec has a typed method; the registry and the command line call the
    # registration hooks one plugin at a time (ctxmodes.plugins.each_plugin).
    facade_source = inspect.getsource(HookRelay)
    called = set(re.findall(r"self\._hook\.(ctx_\w+)", facade_source))
    assert called == {name for name, _ in HOOKS} - hookspecs.MODULE_HOOKS


def test_firstresult_only_where_one_answer_is_wanted():
    firstresult = {name for name, func in HOOKS if func.ctxmodes_spec.get("firstresult")}
    for name in firstresult:
        annotation = inspect.signature(getattr(hookspecs, name)).return_annotation
        assert annotation != "None", name
        assert annotation.endswith("| None"), name


def test_every_type_a_hook_names_is_public():
    """The contract's promise: a plugin imports every type a hookspec names from ``ctxmodes``
    (models' from ``ctxmodes.providers``), never from the internal module defining it."""
    import ctxmodes
    import ctxmodes.providers

    public = {*ctxmodes.__all__, *ctxmodes.providers.__all__}
    plain = {"Callable", "None", "list", "dict", "str", "int", "bool"}
    named = set()
    for _, func in HOOKS:
        signature = inspect.signature(func)
        annotations = [signature.return_annotation] + [
            parameter.annotation for parameter in signature.parameters.values()
        ]
        named |= {word for text in annotations for word in re.findall(r"[A-Za-z_]\w*", text)}
    assert "HostSession" in named
    assert sorted(named - plain - public) == []
