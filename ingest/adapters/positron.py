"""The Positron Assistant adapter: Positron's chat panel sessions (documented, not yet observed).

Positron, Posit's data-science IDE, is a fork of VS Code; its built-in Positron Assistant keeps
its conversations in VS Code's chat-session files, in Positron's own user dir:
``<Positron>/User/workspaceStorage/<ws>/chatSessions/<uuid>.json`` (a serialized session) or
``.jsonl`` (a mutation log), as agentsview's ``positron_provider.go`` reads them. They are read by
Copilot Chat's reader (:mod:`.copilot_vscode`, see it for the mapping), with Positron's ids and
every request kept: the panel is Positron Assistant's, whatever model answers (Copilot's filter
of other extensions' participants does not apply). ``<Positron>`` is ``~/.config/Positron``
(``$XDG_CONFIG_HOME``), ``~/Library/Application Support/Positron`` on macOS, ``%APPDATA%\\Positron``
on Windows; ``VOYAGER_POSITRON_HOME`` names one user dir outright. No command reopens a chat
outside the IDE.
"""

from __future__ import annotations

from voyager_sessions.ingest.adapters.copilot_vscode import ChatApp, CopilotVSCodeAdapter, probe

__all__ = ["ADAPTER", "POSITRON", "probe"]

POSITRON = ChatApp(provider="positron", label="Positron", override="positron", apps=("Positron",), copilot_only=False)

ADAPTER = CopilotVSCodeAdapter(POSITRON)
