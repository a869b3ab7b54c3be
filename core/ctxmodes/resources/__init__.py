"""What the user and the project give the agent besides the conversation, loaded as Pi 0.85
loads it: context files (``AGENTS.md``/``CLAUDE.md``), ``SYSTEM.md`` and
``APPEND_SYSTEM.md``, prompt templates, skills, and the project trust that gates the
project-local ones.

Everything here is read from files the user (or a repository they opened) wrote; nothing a
model or a tool writes is ever loaded through it.

Internal package: not part of the API plugins and programs use (see :mod:`ctxmodes`).
"""

from ctxmodes.resources.loader import (
    LoadedResources,
    ResourceFlags,
    ResourceLoader,
    default_loader,
    load_resources,
)
from ctxmodes.resources.skills import Skill
from ctxmodes.resources.templates import PromptTemplate
from ctxmodes.resources.trust import ProjectTrustStore, TrustChoice, TrustResolver

__all__ = [
    "LoadedResources",
    "ProjectTrustStore",
    "PromptTemplate",
    "ResourceFlags",
    "ResourceLoader",
    "Skill",
    "TrustChoice",
    "TrustResolver",
    "default_loader",
    "load_resources",
]
