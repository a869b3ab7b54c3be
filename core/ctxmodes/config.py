"""Settings: the mode and model, how plugins load, durability, configured providers, the
thinking level, message delivery, images, compaction, retries, the shell and the terminal,
with the origin of every value.

Sources, lowest precedence first:

1. built-in defaults;
2. the settings of Pi's ``settings.json`` that ctxmodes has an equivalent for: the startup
   model, thinking level, message delivery, compaction, branch summaries, retries and
   timeouts, images, the shell and the terminal's (a trusted project's
   ``.pi/settings.json`` over the global one; :mod:`ctxmodes.pi_settings`);
3. the user file ``config.toml`` in the platform config directory (``CTXMODES_CONFIG_DIR``
   overrides the directory);
4. the project file ``.ctxmodes.toml`` in the working directory, or else the
   ``[tool.ctxmodes]`` table of its ``pyproject.toml`` -- only when the project is trusted
   (Pi's project trust, :mod:`ctxmodes.resources.trust`); a trusted project may set
   everything the user file may;
5. environment variables (``CTXMODES_MODE``, ``CTXMODES_MODEL``);
6. command-line flags.

Nested tables merge key by key, so a project file can set ``plugins.block`` without
repeating the user's ``mode``. :mod:`ctxmodes.config_sources` reads the files and the
environment; this module validates what it reads.

Owned tables
    Some top-level tables hold one sub-table per plugin-provided thing, validated by its
    owner rather than here: ``[modes.<name>]`` reaches mode ``<name>``'s factory, checked by
    the settings model its :class:`~ctxmodes.modes.ModeSpec` declares. Such a table is a
    field of type :data:`OwnedTables`; :func:`validate_owned` checks one sub-table against
    its owner's model, so another owned table (one per provider, say) needs only its field.

Internal to ctxmodes: not part of the API plugins and programs use (see :mod:`ctxmodes`).
"""

from __future__ import annotations

import copy
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from ctxmodes.compaction.settings import BranchSummarySettings, CompactionSettings
from ctxmodes.config_sources import DEFAULT_MODE, TrustCheck, read_sources
from ctxmodes.errors import ConfigError
from ctxmodes.host.retry_settings import RetrySettings
from ctxmodes.pi_settings import pi_layers
from ctxmodes.providers.request_settings import ThinkingBudgets
from ctxmodes.thinking_levels import DEFAULT_THINKING_LEVEL, ThinkingLevel

DEFAULT_SOURCE = "default"
#: The owned table of modes' settings (``[modes.tree]``).
MODES_TABLE = "modes"


class PluginSettings(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    #: When set, only these entry-point plugins are loaded.
    allow: list[str] | None = None
    #: Entry-point or default plugins never to load.
    block: list[str] = Field(default_factory=list)


#: ``{owner name: its raw settings}``: a top-level table whose sub-tables their owners
#: validate (see *Owned tables* in the module docstring).
OwnedTables = dict[str, dict[str, Any]]

M = TypeVar("M", bound=BaseModel)


def validate_owned(table: str, name: str, model: type[M], values: Mapping[str, Any]) -> M:
    """Validate ``[<table>.<name>]`` against its owner's ``model``.

    Keys the model does not declare are errors even when the model itself would ignore
    them: a misspelled setting must not be silently dropped.

    :raises ConfigError: an unknown key or a bad value, naming the table and the owner.
    """
    where = f"[{table}.{name}]"
    known = set(model.model_fields) | {
        field.alias for field in model.model_fields.values() if field.alias
    }
    unknown = sorted(set(values) - known)
    if unknown:
        allowed = ", ".join(sorted(model.model_fields)) or "none"
        raise ConfigError(f"{where}: unknown setting {unknown[0]!r} (settings: {allowed})")
    try:
        return model.model_validate(dict(values))
    except ValidationError as exc:
        raise ConfigError(f"{where}: {_first_error(exc)}") from None


class ProviderCost(BaseModel):
    """Dollars per million tokens."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    input: float = 0
    output: float = 0
    cache_read: float = Field(default=0, alias="cacheRead")
    cache_write: float = Field(default=0, alias="cacheWrite")


class ProviderModelSettings(BaseModel):
    """One model of a configured endpoint (Pi's ``models.json`` defaults)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    name: str | None = None
    reasoning: bool = False
    input: list[str] = Field(default_factory=lambda: ["text"])
    context_window: int = 128000
    max_tokens: int = 16384
    cost: ProviderCost = Field(default_factory=ProviderCost)
    #: Pi's compatibility flags, by Pi's names (``supportsDeveloperRole`` …).
    compat: dict[str, Any] = Field(default_factory=dict)


class ProviderSettings(BaseModel):
    """``[providers.<name>]``: an endpoint, its wire format, its key and its models."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    api: Literal[
        "openai-responses",
        "openai-codex-responses",
        "openai-completions",
        "anthropic-messages",
        "google-generative-ai",
        "google-vertex",
    ]
    base_url: str
    #: The key itself (prefer ``api_key_env``: configuration files get shared).
    api_key: str | None = Field(default=None, repr=False)
    #: The environment variable that holds the key.
    api_key_env: str | None = None
    headers: dict[str, str] = Field(default_factory=dict)
    compat: dict[str, Any] = Field(default_factory=dict)
    models: list[ProviderModelSettings] = Field(default_factory=list)


#: Pi's ``/tree`` filters, in the order Ctrl+O cycles them.
TreeFilter = Literal["default", "no-tools", "user-only", "labeled-only", "all"]
#: What Esc Esc on an empty editor opens (Pi's ``doubleEscapeAction``): the tree navigator,
#: the fork selector, or nothing.
DoubleEscapeAction = Literal["tree", "fork", "none"]


class TerminalSettings(BaseModel):
    """``[terminal]``: the interactive session."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    #: How many turns of the active branch are printed when a session is opened, resumed or
    #: replaced, and after a move in its tree (earlier entries are counted, not shown).
    replay_turns: int = Field(default=10, ge=0)
    #: Offer each skill as a ``/skill:name`` command in completion (Pi's
    #: ``enableSkillCommands``); a typed ``/skill:name`` is expanded either way, as in Pi.
    skill_commands: bool = True
    #: The filter ``/tree`` opens with (Pi's ``treeFilterMode``).
    tree_filter: TreeFilter = "default"
    #: What Esc Esc opens while the editor is empty (Pi's ``doubleEscapeAction``): ``/tree``,
    #: the ``/fork`` selector, or nothing.
    double_escape_action: DoubleEscapeAction = "tree"
    #: Leave out the start-up header and the list of what was loaded (Pi's
    #: ``quietStartup``); warnings, and what was left out for want of trust, still show.
    quiet_startup: bool = False
    #: How many completions the menu shows at once (Pi's ``autocompleteMaxVisible``, whose
    #: bounds these are).
    completion_rows: int = Field(default=10, ge=3, le=20)
    #: The command Ctrl+G opens the draft in (Pi's ``externalEditor``): a command line, the
    #: file's name added; before ``$VISUAL`` and ``$EDITOR``, as in Pi.
    external_editor: str | None = None
    #: Replies' thinking collapsed to one line until Ctrl+T shows it in full (Pi's
    #: ``hideThinkingBlock``; ctxmodes' default collapses it, Pi's shows it).
    hide_thinking: bool = True
    #: After a reply whose prompt the provider's cache missed for 20,000 tokens or $0.10, a
    #: line saying so, and after a compaction or branch summary what it was billed (Pi's
    #: ``showCacheMissNotices``).
    cache_miss_notices: bool = False
    #: Warn once a run when the session's Anthropic model is reached with a Claude
    #: subscription, whose calls from ctxmodes are billed as extra usage (Pi's
    #: ``warnings.anthropicExtraUsage``).
    anthropic_extra_usage_warning: bool = True


class ShellSettings(BaseModel):
    """``[shell]``: what runs the ``bash`` tool's and ``!`` commands."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    #: The bash to run (Pi's ``shellPath``; ``~`` and a path relative to the working
    #: directory allowed); unset or empty: ``bash`` on ``PATH``.
    path: str | None = None
    #: Run before every command, e.g. ``"shopt -s expand_aliases\nalias ll='ls -l'"`` (Pi's
    #: ``shellCommandPrefix``); unset or empty: nothing.
    command_prefix: str | None = None


class Settings(BaseModel):
    """The effective configuration of one ctxmodes process."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    #: The context-management mode; must name an installed mode.
    mode: str = DEFAULT_MODE
    #: The model spec, e.g. ``scripted:path/to/script.json``; ``None`` means the host default.
    model: str | None = None
    #: When an appended session entry is considered written: after ``fsync`` (default), after
    #: a flush to the OS, or whenever the OS gets to it.
    durability: Literal["fsync", "flush", "none"] = "fsync"
    plugins: PluginSettings = Field(default_factory=PluginSettings)
    #: ``[modes.<name>]``: each mode's own settings, validated when the mode is activated.
    modes: OwnedTables = Field(default_factory=dict)
    #: Configured model endpoints, by provider name (``<name>/<model-id>`` specs).
    providers: dict[str, ProviderSettings] = Field(default_factory=dict)
    #: One directory for every project's session files (Pi's ``sessionDir``: ``~`` and a
    #: path relative to the working directory allowed); unset: Pi's folder per project.
    session_dir: str | None = None
    #: The thinking level a new session starts with (Pi's ``defaultThinkingLevel``).
    thinking_level: ThinkingLevel = DEFAULT_THINKING_LEVEL
    #: The level a new session of one model starts with, and switching to it takes, by
    #: ``provider/model-id`` (Pi's ``modelThinkingLevels``).
    model_thinking_levels: dict[str, ThinkingLevel] = Field(default_factory=dict)
    #: The models Ctrl+P cycles through, as ``--models`` patterns (Pi's ``enabledModels``):
    #: globs, ids, ``provider/id``, each with an optional ``:<level>``; empty: every model
    #: with credentials.
    enabled_models: list[str] = Field(default_factory=list)

    #: The core's own tools offered (Pi's ``defaultTools``); unset: all of them.
    default_tools: list[str] | None = None
    #: The tokens a turn may think at each level where the model counts them (Pi's
    #: ``thinkingBudgets``); unset levels keep the transport's own.
    thinking_budgets: ThinkingBudgets = Field(default_factory=ThinkingBudgets)
    #: Queued steering messages reach the model one per turn, or all at once.
    steering_mode: Literal["one-at-a-time", "all"] = "one-at-a-time"
    #: The same for follow-up messages.
    follow_up_mode: Literal["one-at-a-time", "all"] = "one-at-a-time"
    #: Send the model a short text in place of each image (Pi's ``images.blockImages``).
    block_images: bool = False
    #: Shrink images to what models take, 2000x2000 pixels and 4.5 MiB (Pi's
    #: ``images.autoResize``); off, images are only converted to a type models take.
    auto_resize_images: bool = True
    #: When to compact automatically, and how much a compaction keeps (Pi's ``compaction``).
    compaction: CompactionSettings = Field(default_factory=CompactionSettings)
    #: The room a branch summary leaves in the model's window (Pi's ``branchSummary``).
    branch_summary: BranchSummarySettings = Field(default_factory=BranchSummarySettings)
    #: Retrying turns that failed on transient errors (Pi's ``retry`` settings).
    retry: RetrySettings = Field(default_factory=RetrySettings)
    terminal: TerminalSettings = Field(default_factory=TerminalSettings)
    shell: ShellSettings = Field(default_factory=ShellSettings)

    @field_validator("enabled_models", mode="before")
    @classmethod
    def _no_scope(cls, value: Any) -> Any:
        """Pi's ``null`` (which replaces a lower file's list) is no scope, as ``[]`` is."""
        return [] if value is None else value


@dataclass(frozen=True, slots=True)
class LoadedSettings:
    settings: Settings
    #: Dotted key (``mode``, ``plugins.block``) → the source that set it.
    origins: dict[str, str]
    #: The project file left out because the project is not trusted.
    skipped: Path | None = None


def load_settings(
    *,
    cwd: Path | None = None,
    environ: Mapping[str, str] | None = None,
    cli: Mapping[str, Any] | None = None,
    trust: TrustCheck | None = None,
) -> LoadedSettings:
    """Merge every source into :class:`Settings`.

    :param cli: values from command-line flags, dotted keys allowed (``{"mode": "tree"}``);
        ``None`` values are ignored.
    :param trust: whether the project is trusted, so that its file loads; share the run's
        :class:`~ctxmodes.resources.trust.TrustResolver` (``.is_trusted``) so the question is
        asked once. By default a saved decision or ``defaultProjectTrust`` decides, and an
        undecided project is not trusted.
    :raises ConfigError: unreadable TOML, an unknown key or a bad value, naming the source.
    """
    env = os.environ if environ is None else environ
    directory = Path.cwd() if cwd is None else cwd
    sources = read_sources(directory, env, trust)
    layers = pi_layers(directory, trust) + sources.layers
    if cli:
        layers.append(("command line", _undot({k: v for k, v in cli.items() if v is not None})))

    merged: dict[str, Any] = {}
    origins = dict.fromkeys(flatten(Settings().model_dump()), DEFAULT_SOURCE)
    for source, values in layers:
        try:
            layer = Settings.model_validate(values)  # attribute bad values to their layer
        except ValidationError as exc:
            raise ConfigError(f"{source}: {_first_error(exc)}") from None
        # By field name: a file may spell a key as Pi does (``retry.maxRetries``), and
        # another layer may spell the same key the other way.
        values = layer.model_dump(exclude_unset=True)
        _merge(merged, values)
        for key in flatten(values):
            origins[key] = source
    return LoadedSettings(Settings.model_validate(merged), origins, sources.skipped)


def _first_error(exc: ValidationError) -> str:
    err = exc.errors()[0]
    where = ".".join(str(part) for part in err["loc"])
    # A validator's own words, without pydantic's "Value error, " before them.
    message = str(err["ctx"]["error"]) if err["type"] == "value_error" else err["msg"]
    return f"{where}: {message}" if where else message


def _undot(values: Mapping[str, Any]) -> dict[str, Any]:
    nested: dict[str, Any] = {}
    for key, value in values.items():
        *parents, leaf = key.split(".")
        target = nested
        for part in parents:
            target = target.setdefault(part, {})
        target[leaf] = value
    return nested


def _merge(into: dict[str, Any], values: Mapping[str, Any]) -> None:
    for key, value in values.items():
        if isinstance(value, dict) and isinstance(into.get(key), dict):
            _merge(into[key], value)
        else:
            into[key] = copy.deepcopy(value)


def flatten(values: Mapping[str, Any]) -> dict[str, Any]:
    """Nested settings as ``{"plugins.block": [...]}``; empty tables count as values."""
    return {".".join(path): value for path, value in flatten_paths(values)}


def flatten_paths(
    values: Mapping[str, Any], prefix: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], Any]]:
    """:func:`flatten`'s items with each key's path of names (a name may hold a dot)."""
    for key, value in values.items():
        if isinstance(value, dict) and value:
            yield from flatten_paths(value, (*prefix, key))
        else:
            yield (*prefix, key), value
