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
    "gemini": "voyager_sessions.ingest.adapters.gemini",
    "qwen": "voyager_sessions.ingest.adapters.qwen",
    "pi": "voyager_sessions.ingest.adapters.pi",
    "opencode": "voyager_sessions.ingest.adapters.opencode",
    "kilo": "voyager_sessions.ingest.adapters.kilo",
    "copilot": "voyager_sessions.ingest.adapters.copilot",
    "droid": "voyager_sessions.ingest.adapters.droid",
    "aider": "voyager_sessions.ingest.adapters.aider",
    "vibe": "voyager_sessions.ingest.adapters.vibe",
    "hermes": "voyager_sessions.ingest.adapters.hermes",
    "openhands": "voyager_sessions.ingest.adapters.openhands",
    "kimi": "voyager_sessions.ingest.adapters.kimi",
    "cline": "voyager_sessions.ingest.adapters.cline",
    "roo": "voyager_sessions.ingest.adapters.roo",
    "cursor": "voyager_sessions.ingest.adapters.cursor",
    "copilot-vscode": "voyager_sessions.ingest.adapters.copilot_vscode",
    "windsurf": "voyager_sessions.ingest.adapters.windsurf",
    "kiro": "voyager_sessions.ingest.adapters.kiro",
    "antigravity": "voyager_sessions.ingest.adapters.antigravity",
    "zcode": "voyager_sessions.ingest.adapters.zcode",
    "dsh": "voyager_sessions.ingest.adapters.dsh",
    "grok": "voyager_sessions.ingest.adapters.grok",
    "crush": "voyager_sessions.ingest.adapters.crush",
    "goose": "voyager_sessions.ingest.adapters.goose",
    "zed": "voyager_sessions.ingest.adapters.zed",
    "gptme": "voyager_sessions.ingest.adapters.gptme",
    "continue": "voyager_sessions.ingest.adapters.continue_cli",
    "nanocoder": "voyager_sessions.ingest.adapters.nanocoder",
}

PROVIDERS: tuple[str, ...] = tuple(REGISTRY)


def get(name: str) -> Adapter:
    """The adapter for provider ``name``; KeyError if there is none."""
    return importlib.import_module(REGISTRY[name]).ADAPTER

