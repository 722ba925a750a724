"""What the front ends may know about the agents themselves (not their sessions): the manifest's MCP facts.

``voyager mcp install`` registers Voyager in an agent's own config (where, in what format and shape:
:func:`mcp_agents`), and ``voyager mcp`` says to each connected agent only what is true for it, and
leaves out of a search the session that is calling when the agent lets that be known
(:func:`mcp_client`, :func:`calling_session`). Both are rows of the agent manifest
(``ingest/manifest.py``, each row's ``mcp``); the front ends read them here, never from ``ingest/``.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Mapping
from typing import Any, NamedTuple

from voyager_sessions.ingest import manifest
from voyager_sessions.ingest.manifest import Mcp

__all__ = ["McpAgent", "Mcp", "calling_session", "mcp_agents", "mcp_client"]


class McpAgent(NamedTuple):
    """An agent Voyager registers itself with as an MCP server."""

    name: str
    label: str
    mcp: Mcp


def mcp_agents() -> dict[str, McpAgent]:
    """Provider name -> the agent, for every agent whose MCP config ``voyager mcp install`` edits."""
    return {a.name: McpAgent(a.name, a.label, a.mcp) for a in manifest.ROWS.values() if a.mcp is not None}


def mcp_client(client: str | None) -> McpAgent | None:
    """The agent whose MCP client sends ``clientInfo.name`` ``client`` (as observed), None for any other."""
    if not client:
        return None
    return next((a for a in mcp_agents().values() if a.mcp.client == client), None)


def identifies_caller(agent: McpAgent | None, environ: Mapping[str, str]) -> bool:
    """Whether ``agent`` (None: a client Voyager does not know) can say which of its sessions is calling, as far as
    the server can tell before a call: an ``env:`` way needs its variable set now; ``VOYAGER_CURRENT_SESSION`` names
    it for any agent."""
    if environ.get("VOYAGER_CURRENT_SESSION"):
        return True
    if agent is None:
        return False
    for way in agent.mcp.caller:
        kind, _, key = way.partition(":")
        if kind != "env" or environ.get(key):
            return True
    return False


def calling_session(
    client: str | None,
    environ: Mapping[str, str],
    meta: Any,
    tool: str,
    arguments: Mapping[str, Any],
) -> str | None:
    """The Voyager id (``provider:native``) of the agent session making this ``tools/call``, when it can be known.

    ``VOYAGER_CURRENT_SESSION`` in the server's environment names it for any agent (a Voyager id, a native id or
    a prefix). Otherwise the connected agent's manifest row says how it tells (``Mcp.caller``); a client Voyager
    does not know by name is asked each agent's first way when that is its own variable or ``_meta`` key (a
    renamed build of a known agent still says it the same way; a generic key such as ``sessionId`` could be
    anyone's), never a store lookup. The provider is known from whose way it was, so a session
    no scan has seen yet is still named exactly (a checkpoint can be saved for it).
    """
    named = environ.get("VOYAGER_CURRENT_SESSION")
    if named:
        return named
    known = mcp_client(client)
    agents = [known] if known is not None else list(mcp_agents().values())
    for agent in agents:
        ways = agent.mcp.caller if known is not None else agent.mcp.caller[:1]
        for way in ways:
            kind, _, key = way.partition(":")
            native: str | None = None
            if kind == "env":
                native = environ.get(key) or None
            elif kind == "meta":
                native = _meta_value(meta, key.split("."))
            elif kind == "running-tool" and agent is known:
                module = importlib.import_module(manifest.row(agent.name).module)
                found = module.calling_session(environ, tool, arguments)
                if found:
                    return str(found)
            if native:
                return native if native.startswith(f"{agent.name}:") else f"{agent.name}:{native}"
    return None


def _meta_value(meta: Any, keys: list[str]) -> str | None:
    value = meta
    for key in keys:
        if isinstance(value, str):  # a member that holds JSON in a string (Codex has sent its turn metadata so)
            try:
                value = json.loads(value)
            except ValueError:
                return None
        if not isinstance(value, dict):
            return None
        value = value.get(key)
    return value if isinstance(value, str) and value else None
