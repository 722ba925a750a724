"""What agents call their tools: the names that run a shell command, and those that start a subagent.

Two modules read these names: :mod:`~voyager_sessions.ingest.toolcall` (a call's searchable text at
ingest: a shell call is searched as its command line) and :mod:`~voyager_sessions.core.toolview` (a
call as people read it in ``voyager show``, the picker and the web page: a shell call shown as its
command). The names are agents' vocabulary, so they live in ``ingest``; this module knows no agent's
file format. Standard library only: ``voyager show`` through ``voyager serve`` renders with it in a
client that imports nothing heavier.
"""

from __future__ import annotations

import re
from functools import lru_cache

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing: a server's client renders with this module
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Final

#: Tools that run a shell command (or code in an interpreter), by the name agents give them (compared
#: case-insensitively, so ``Bash``, ``bash`` and ``BASH`` are one tool). A call to one of these is
#: searched as its command line, what a person remembers and types.
SHELL_TOOLS: Final = frozenset(
    {
        "bash",
        "shell",
        "sh",
        "zsh",
        "exec",
        "exec_command",
        "execute",
        "execute_bash",
        "execute_command",
        "run_command",
        "run_shell_command",
        "run_terminal_cmd",
        "run_in_terminal",
        "runinterminal",
        "terminal",
        "local_shell",
        "shell_command",
        "developer__shell",
        "cmd",
        "powershell",
    }
)

#: Tools that hand a task to a subagent, by the name agents give them (compared case-insensitively):
#: what such a tool returns, when it is the subagent's answer, is a subagent's report. Not
#: ``spawn_agent``: Codex's only acknowledges the launch (Cline's, which runs the subagent to the end,
#: is named by its adapter).
SUBAGENT_TOOLS: Final = frozenset(
    {
        "task",
        "agent",
        "invoke_agent",
        "delegate_task",
        "delegate",
        "subagent",
        "run_subagent",
        "dispatch_agent",
    }
)

_NO_NAMES: Final[frozenset[str]] = frozenset()
#: What separates a namespace from a tool's own name: ``file_system.bash``, ``developer__shell``, ``mcp/bash``.
_NAMESPACE = re.compile(r"\.|__|/")


def _key(name: str | None) -> str:
    return name.strip().casefold() if isinstance(name, str) else ""


def is_shell_tool(name: str | None, extra: Iterable[str] = ()) -> bool:
    """True when ``name`` (any case) is a tool that runs a shell command: one of :data:`SHELL_TOOLS`
    or of ``extra``, the names an adapter knows its agent gives its shell tool beside those. A
    namespaced name (``file_system.bash``, ``developer__shell``, ``container.exec``) is known by its
    last part too."""
    if not isinstance(name, str) or not name:
        return False
    return _is_shell(name, extra if isinstance(extra, frozenset) else _NO_NAMES if extra == () else frozenset(extra))


@lru_cache(maxsize=1024)
def _is_shell(name: str, extra: frozenset[str]) -> bool:
    # Cached: a session calls a handful of tools thousands of times. Hostile names fill the cache, never grow it.
    key = _key(name)
    if not key:
        return False
    extra_keys = {_key(e) for e in extra}
    last = _NAMESPACE.split(key)[-1]
    return key in SHELL_TOOLS or key in extra_keys or last in SHELL_TOOLS or last in extra_keys


def is_subagent_tool(name: str | None) -> bool:
    """True when ``name`` (any case) is a tool that starts a subagent (:data:`SUBAGENT_TOOLS`)."""
    return _key(name) in SUBAGENT_TOOLS
