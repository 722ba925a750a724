"""The tools ``voyager mcp`` offers: what each is for, and its input schema, derived from the API's requests.

The reading tools' arguments are the fields of the API's request Structs (``api/requests.py``) that say
how MCP spells them (``Meta.extra["mcp"]``, read through :func:`~voyager_sessions.api.requests.spelled`):
each appears in the tool's ``inputSchema`` under that name with the field's type, bounds, default and
description, and nothing else does but the arguments MCP adds itself (:data:`MCP_ONLY`). So a filter added
to ``SearchRequest`` is offered to agents with no change here, and :mod:`voyager_sessions.mcp.calls` maps
arguments back to fields by the same spellings. The schemas are built on ``tools/list`` (never before the
handshake is answered: this module imports msgspec) and kept.

What a description says about the caller's own session is true for the agent connected (:class:`Caller`,
from its ``clientInfo``): left out where it says which session it is, said plainly where it does not.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import msgspec

from voyager_sessions.api import requests as rq
from voyager_sessions.core.filters import SESSION_FILTERS

#: Reading tool -> (its request Struct, the API operation it runs).
READING: dict[str, tuple[type[msgspec.Struct], str]] = {
    "search": (rq.SearchRequest, "search"),
    "show": (rq.ShowRequest, "show"),
    "list_sessions": (rq.ListRequest, "list"),
}

#: Arguments a reading tool takes that are not request fields: MCP's own, declared here (and in docs/serve.md).
MCP_ONLY: dict[str, dict[str, dict[str, Any]]] = {
    "search": {
        "include_current": {
            "type": "boolean",
            "default": False,
            "description": "Also search the session this call comes from (left out by default where it is known).",
        },
    },
}


#: Defaults MCP gives a request field other than the API's, and why (said in docs/serve.md): an agent describes
#: what it looks for, so a search ranks by meaning too wherever the model is installed (meaning=false: words only;
#: without the model a search is words alone, as if false).
MCP_DEFAULTS: dict[str, dict[str, Any]] = {"search": {"meaning": True}}


class Caller(NamedTuple):
    """What the server can say about the connected agent's own session."""

    label: str | None  # the agent's name, when Voyager knows the client
    identified: bool  # it says (or VOYAGER_CURRENT_SESSION says) which session is calling


def input_schema(tool: str) -> dict[str, Any]:
    """Reading tool ``tool``'s JSON Schema: every MCP-spelled field of its request, and its MCP-only arguments."""
    struct, _ = READING[tool]
    full = msgspec.json.schema(struct)
    body = full["$defs"][struct.__name__]
    spelled = rq.spelled(struct, "mcp")
    properties: dict[str, Any] = {}
    defaults = MCP_DEFAULTS.get(tool, {})
    for field, spelling in spelled.items():
        properties[spelling] = _flat(body["properties"][field])
        if field in defaults:
            properties[spelling]["default"] = defaults[field]
    properties.update(MCP_ONLY.get(tool, {}))
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    required = [spelled[f] for f in body.get("required", ()) if f in spelled]
    if required:
        schema["required"] = required
    schema["additionalProperties"] = False
    return schema


def _flat(prop: dict[str, Any]) -> dict[str, Any]:
    """An optional field (``X | None = None``) as X's schema: an agent leaves it out rather than sending null."""
    if "anyOf" not in prop:
        return dict(prop)
    inner = next(p for p in prop["anyOf"] if p.get("type") != "null")
    out = {**inner, **{k: v for k, v in prop.items() if k not in ("anyOf", "default")}}
    if prop.get("default") is not None:
        out["default"] = prop["default"]
    return out


def filters(tool: str) -> list[str]:
    """The arguments of ``tool`` that narrow what it finds: the fields whose default is "no constraint"
    (None or an empty list), by their MCP names."""
    struct, _ = READING[tool]
    info = msgspec.inspect.type_info(struct)
    assert isinstance(info, msgspec.inspect.StructType)
    spelled = rq.spelled(struct, "mcp")
    return [
        spelled[f.name] for f in info.fields if f.name in spelled and (f.default is None or f.default_factory is list)
    ]


# -- what the tools say -----------------------------------------------------------------------

#: The session-attribute filters as the description spells them (``repo:NAME cwd:PATH``).
_ATTRIBUTES = " ".join(f"{f.name}:{f.metavar}" for f in SESSION_FILTERS)

SEARCH_DESCRIPTION = """\
Search the past sessions of every coding agent on this machine: prompts, replies, reasoning, tool calls \
and their outputs. Use it to recall what was decided, tried, run or seen before ("what did we decide \
about the cache key", "where did we fix the login redirect", "the error we got from the migration").

Phrase the query as the words likely to appear in that session, not as a question: 2-4 distinctive \
terms (names, identifiers, error text, file paths) work best; all words must match, so drop filler. \
Syntax: "an exact phrase"; -word or NOT word excludes; a OR b; (groups); prefix*; identifiers, paths \
and pasted error lines work as typed; filters inside the query: provider:codex kind:tool_result \
{attributes} session:ID since:7d until:2026-11-01. kind is user, assistant, reasoning, \
tool_call, tool_result (tool = both), meta or checkpoint. If nothing matches, try fewer or other words. \
Where Voyager's meaning model is installed, a description in any language also finds the session \
("the time the nightly export timed out after the bucket moved"): sessions found by meaning alone come \
with match="meaning" (match="all": it holds every word; "partial": some); meaning=false searches words only.

{own} sessions=true gives one row per session (its best hit and hit_count); context=N adds N events \
around each hit. Returns {{"total", "offset", "hits": [{{session_id, seq, kind, provider, timestamp, cwd, \
title, snippet, highlights, resume, tool, exit_code, hit_count, context, match}}]}}; read more of a hit with \
show(session=session_id, around=seq)."""

SHOW_DESCRIPTION = """\
Read a past session: its metadata and events (seq, kind, origin, text, tool, exit_code). session is a \
session_id from search or list_sessions (or a unique prefix of it). With around=SEQ (a search hit's seq) \
only the `window` events on each side of it come back: prefer that for long sessions."""

LIST_DESCRIPTION = """\
Recent sessions of every coding agent on this machine, newest first: session_id, provider, title, cwd, \
started, updated, events, resume (the command that reopens it)."""

CHECKPOINT_INTRO = (
    "Checkpoints keep a task's state for whoever continues it (you after a context reset, "
    "another agent, a person): objective, status, plan, steps done and next, blockers, files, "
    "notes. Every change is kept as a snapshot. "
)


def own_session(caller: Caller) -> str:
    """What searching says about the caller's own session, true for this caller."""
    if caller.identified:
        return "Your own current session is left out of the results (include_current=true keeps it)."
    if caller.label:
        return (
            f"{caller.label} does not tell Voyager which session is calling, so your own current session can "
            "come up in the results."
        )
    return (
        "Your own current session is left out only when your agent tells Voyager which session is calling "
        "(Claude Code, Codex and OpenCode do); otherwise it can come up in the results."
    )


def session_argument(caller: Caller) -> dict[str, Any]:
    """The checkpoint tools' ``session`` argument, described as true for this caller."""
    if caller.identified:
        text = "The session to act on (a session_id or a unique prefix); leave it out for your own."
    else:
        who = caller.label or "Your agent"
        text = (
            f"The session to act on (a session_id or a unique prefix). {who} does not tell Voyager which "
            "session is calling, so give your own: list_sessions shows the newest first."
        )
    return {"session": {"type": "string", "description": text}}


def tool_list(caller: Caller) -> list[dict[str, Any]]:
    """Every tool, described for ``caller``."""
    read_only = {"readOnlyHint": True, "openWorldHint": False}
    writes = {"readOnlyHint": False, "destructiveHint": False, "openWorldHint": False}
    session = session_argument(caller)
    text = {"type": "string"}
    texts = {"type": "array", "items": {"type": "string"}}
    return [
        {
            "name": "search",
            "title": "Search past agent sessions",
            "description": SEARCH_DESCRIPTION.format(own=own_session(caller), attributes=_ATTRIBUTES),
            "inputSchema": input_schema("search"),
            "annotations": read_only,
        },
        {
            "name": "show",
            "title": "Read a past agent session",
            "description": SHOW_DESCRIPTION,
            "inputSchema": input_schema("show"),
            "annotations": read_only,
        },
        {
            "name": "list_sessions",
            "title": "List recent agent sessions",
            "description": LIST_DESCRIPTION,
            "inputSchema": input_schema("list_sessions"),
            "annotations": read_only,
        },
        {
            "name": "checkpoint_save",
            "title": "Save task state",
            "description": CHECKPOINT_INTRO + "Merge changes into this session's checkpoint: given text fields replace "
            "(an empty string clears one), done/next/blockers/files append (a step added to done leaves "
            "next). Save after each meaningful step; a save that changes nothing writes nothing.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    **session,
                    "title": text,
                    "objective": text,
                    "status": {**text, "description": "e.g. in progress"},
                    "summary": text,
                    "plan": text,
                    "notes": text,
                    "done": texts,
                    "next": texts,
                    "blockers": texts,
                    "files": texts,
                },
            },
            "annotations": {**writes, "idempotentHint": True},
        },
        {
            "name": "checkpoint_status",
            "title": "Read task state",
            "description": CHECKPOINT_INTRO + "This session's checkpoint (or another's, by session) and how many "
            "snapshots it keeps; checkpoint is null when there is none.",
            "inputSchema": {"type": "object", "properties": {**session}},
            "annotations": read_only,
        },
        {
            "name": "checkpoint_list",
            "title": "List checkpoints",
            "description": "Sessions that have a checkpoint, most recently updated first (title, status, project).",
            "inputSchema": {"type": "object", "properties": {}},
            "annotations": read_only,
        },
        {
            "name": "checkpoint_snapshots",
            "title": "List task-state snapshots",
            "description": "This session's checkpoint snapshots, newest first; current marks the one the state came "
            "from. Give a name to checkpoint_restore.",
            "inputSchema": {"type": "object", "properties": {**session}},
            "annotations": read_only,
        },
        {
            "name": "checkpoint_restore",
            "title": "Restore task state",
            "description": "Make a snapshot this session's current checkpoint (default: the version before the "
            "current one). The replaced state is kept; checkpoint_undo goes back.",
            "inputSchema": {"type": "object", "properties": {**session, "snapshot": text}},
            "annotations": writes,
        },
        {
            "name": "checkpoint_undo",
            "title": "Undo a restore",
            "description": "Revert this session's last checkpoint_restore.",
            "inputSchema": {"type": "object", "properties": {**session}},
            "annotations": writes,
        },
        {
            "name": "checkpoint_handoff",
            "title": "Hand off task state",
            "description": "A Markdown hand-off of this session's checkpoint (or another's, by session), to continue "
            "the task elsewhere: returns its text and the file it was written to.",
            "inputSchema": {"type": "object", "properties": {**session}},
            "annotations": read_only,
        },
    ]
