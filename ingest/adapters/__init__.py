"""The registry of agent adapters: one module a provider, each exposing ``ADAPTER``.

Adding an agent means writing ``ingest/adapters/<agent>.py`` with the interface in
``base.py`` and naming it here. Modules are imported only when asked for, so a
command that needs one adapter does not pay for all of them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from voyager_sessions.ingest.adapters.base import Adapter

#: provider name -> module path. Order is the order scans and ``doctor`` report in.
REGISTRY: dict[str, str] = {
    "claude": "voyager_sessions.ingest.adapters.claude",
    "codex": "voyager_sessions.ingest.adapters.codex",
    "opencode": "voyager_sessions.ingest.adapters.opencode",
    "pi": "voyager_sessions.ingest.adapters.pi",
    "hermes": "voyager_sessions.ingest.adapters.hermes",
    "kimi": "voyager_sessions.ingest.adapters.kimi",
    "gemini": "voyager_sessions.ingest.adapters.gemini",
    "qwen": "voyager_sessions.ingest.adapters.qwen",
    "cursor": "voyager_sessions.ingest.adapters.cursor",
    "copilot-vscode": "voyager_sessions.ingest.adapters.copilot_vscode",
    "windsurf": "voyager_sessions.ingest.adapters.windsurf",
    "copilot": "voyager_sessions.ingest.adapters.copilot",
    "droid": "voyager_sessions.ingest.adapters.droid",
    "vibe": "voyager_sessions.ingest.adapters.vibe",
    "openhands": "voyager_sessions.ingest.adapters.openhands",
    "aider": "voyager_sessions.ingest.adapters.aider",
    "cline": "voyager_sessions.ingest.adapters.cline",
    "roo": "voyager_sessions.ingest.adapters.roo",
    "kilo": "voyager_sessions.ingest.adapters.kilo",
    "dsh": "voyager_sessions.ingest.adapters.dsh",
    "zed": "voyager_sessions.ingest.adapters.zed",
    "goose": "voyager_sessions.ingest.adapters.goose",
    "crush": "voyager_sessions.ingest.adapters.crush",
    "kiro": "voyager_sessions.ingest.adapters.kiro",
    "antigravity": "voyager_sessions.ingest.adapters.antigravity",
    "zcode": "voyager_sessions.ingest.adapters.zcode",
    "grok": "voyager_sessions.ingest.adapters.grok",
}

PROVIDERS: tuple[str, ...] = tuple(REGISTRY)


def get(name: str) -> Adapter:
    """The adapter for provider ``name``; KeyError if there is none."""
    return importlib.import_module(REGISTRY[name]).ADAPTER

