"""What ``voyager mcp``'s tools do: each call's arguments in, the application API's document out.

This is the one module through which the MCP server reaches Voyager. A reading tool
(``search``, ``show``, ``list_sessions``) becomes an API request and goes through
:func:`voyager_sessions.api.call`, which asks ``voyager serve`` when one runs for the data
dir (its index is open and fresh already) and answers in this process otherwise: the
result document's JSON either way, the bytes ``voyager … --json`` prints. The checkpoint
tools call :mod:`voyager_sessions.api.checkpoints`, as ``voyager checkpoint`` does.

Arguments become the API's request Structs by the spellings the Structs declare for MCP
(:func:`voyager_sessions.api.requests.spelled`, the same the tools' schemas are built from:
:mod:`voyager_sessions.mcp.tools`), so an agent gets the bounds and messages the CLI gives, each
message naming the argument as the agent spelled it. The caller's own session is left out of
a search as a request field (``exclude_sessions``), never by rewriting the query: the query is
parsed once, as the agent typed it. Every failure an agent should see is a one-line ``UserError``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from voyager_sessions.core.errors import UserError


class Calls:
    """The reading tools' work, for one data dir (the process's, unless a test names another)."""

    def __init__(self, data_dir: Path | None = None) -> None:
        from voyager_sessions.core.paths import data_dir as default_data_dir

        self.data_dir = Path(data_dir) if data_dir is not None else default_data_dir()

    # -- the tools ----------------------------------------------------------------------

    def search(self, args: dict[str, Any], current: str | None) -> dict[str, Any]:
        from voyager_sessions.mcp.tools import filters

        fields = request_fields("search", args)
        query = fields.get("query", "")
        if not isinstance(query, str):
            raise UserError("query must be a string")
        if not query.strip() and not any(args.get(name) for name in filters("search")):
            raise UserError("nothing to search for: give a query or a filter")  # worded for an agent, not a shell
        fields["remember"] = False  # an agent's search is not the person's last search (voyager resume -)
        # Agents describe what they look for: meaning by default (tools.MCP_DEFAULTS), where the model is installed;
        # without it a search is words alone, as the tool's description says.
        from voyager_sessions.api import meaning_available
        from voyager_sessions.mcp.tools import MCP_DEFAULTS

        wanted = fields.pop("meaning", MCP_DEFAULTS["search"]["meaning"])
        if wanted is not False and meaning_available():
            fields["meaning"] = True
        if current and not fields.get("session") and not args.get("include_current"):
            # By its native id (the session filter matches either): an agent's fork (Kilo sends what
            # OpenCode sends) files the session under another provider.
            fields["exclude_sessions"] = [current.partition(":")[2] or current]
        return self._read("search", fields)

    def show(self, args: dict[str, Any]) -> dict[str, Any]:
        return self._read("show", request_fields("show", args))

    def list_sessions(self, args: dict[str, Any]) -> dict[str, Any]:
        return self._read("list", request_fields("list_sessions", args))

    # -- plumbing -----------------------------------------------------------------------

    def _read(self, op: str, fields: dict[str, Any]) -> dict[str, Any]:
        from voyager_sessions import api
        from voyager_sessions.core.errors import VoyagerError, failure

        try:
            api.decode_request(op, fields)  # a malformed request is the agent's mistake, said as the CLI says it
        except ValueError as exc:
            raise UserError(_as_spelled(op, str(exc))) from None
        try:
            return json.loads(api.call(op, fields, data_dir=self.data_dir))
        except api.Refused:
            raise  # the server's line, already what the CLI prints after "voyager: "
        except VoyagerError as exc:  # answered here: the same line the server would have sent
            raise UserError(failure(exc)[0].removeprefix("voyager: ")) from None


def request_fields(tool: str, args: dict[str, Any]) -> dict[str, Any]:
    """Reading tool ``tool``'s arguments as its request's fields, by the spellings the request declares for MCP.

    A null argument is left out (the field's default applies); one string where a list is asked is a list of
    one (models often send that); an argument the tool does not take is refused, by name.
    """
    from voyager_sessions.api import requests as rq
    from voyager_sessions.mcp.tools import MCP_ONLY, READING

    struct, _ = READING[tool]
    by_spelling = {spelling: field for field, spelling in rq.spelled(struct, "mcp").items()}
    unknown = sorted(set(args) - set(by_spelling) - set(MCP_ONLY.get(tool, {})))
    if unknown:
        raise UserError(f"unknown argument(s) for {tool}: {', '.join(unknown)}")
    lists = _list_fields(struct)
    fields: dict[str, Any] = {}
    for spelling, field in by_spelling.items():
        value = args.get(spelling)
        if value is None:
            continue
        if field in lists and isinstance(value, str):
            value = [value]
        fields[field] = value
    return fields


def _list_fields(struct: Any) -> set[str]:
    import msgspec

    info = msgspec.inspect.type_info(struct)
    assert isinstance(info, msgspec.inspect.StructType)
    out = set()
    for f in info.fields:
        t = f.type.type if isinstance(f.type, msgspec.inspect.Metadata) else f.type
        if isinstance(t, msgspec.inspect.ListType):
            out.add(f.name)
    return out


def _as_spelled(op: str, message: str) -> str:
    """The API's one line about a bad field, naming the argument as the agent spelled it (``provider``, not
    ``providers``)."""
    from voyager_sessions import api
    from voyager_sessions.api import requests as rq

    struct = api.OPERATIONS[op].request
    for field, spelling in rq.spelled(struct, "mcp").items():
        if field != spelling and message.startswith(f"{field} "):
            return spelling + message[len(field) :]
    return message


def _text(args: dict[str, Any], name: str, default: str) -> str:
    value = args.get(name, default)
    if value is None:
        return default
    if not isinstance(value, str):
        raise UserError(f"{name} must be a string")
    return value


def _strings(args: dict[str, Any], name: str) -> list[str]:
    value = args.get(name) or []
    if isinstance(value, str):
        value = [value]  # a model often sends one value where the schema asks for a list
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise UserError(f"{name} must be a list of strings")
    return value


# -- checkpoints -------------------------------------------------------------------------------

#: Text fields a save replaces (an empty string clears one): tool argument -> SaveRequest field.
_REPLACED = {
    "title": "title",
    "objective": "objective",
    "status": "status",
    "summary": "summary",
    "plan": "plan",
    "notes": "note",
}
#: Lists a save appends to (skipping items already there): tool argument = SaveRequest field.
_APPENDED = ("done", "next", "blockers", "files")
#: The operations that change a checkpoint: an agent that says which session it is may change only its own.
_WRITES = frozenset({"save", "restore", "undo"})


class NoSession(UserError):
    """A checkpoint tool needs a session and the agent named none."""


def warn(message: str) -> None:
    """A checkpoint operation's warning on stderr (the agent's log of this server); session text made visible."""
    from voyager_sessions.core.textsafe import printable

    sys.stderr.write(f"warning: {printable(message)}\n")
    sys.stderr.flush()


def checkpoint(
    data_dir: Path, op: str, args: dict[str, Any], current: str | None, unknown: str | None = None
) -> dict[str, Any]:
    """Checkpoint operation ``op`` for the calling session (or the one ``args["session"]`` names); its result.
    ``unknown`` says why the calling session is not known, for the line that asks for ``session``."""
    import msgspec

    from voyager_sessions.api import checkpoints as cp

    where: dict[str, Any] = {"data_dir": data_dir, "warn": warn}
    if op == "list":
        return _document(cp.list_checkpoints(cp.ListRequest(), **where))
    ref = _session_for(op, args, current, unknown)
    try:
        if op == "save":
            result: Any = cp.save(msgspec.convert(_save_fields(args, ref), cp.SaveRequest), **where)
        elif op == "status":
            result = cp.status(cp.StatusRequest(session=ref), **where)
        elif op == "snapshots":
            result = cp.snapshots(cp.SnapshotsRequest(session=ref), **where)
        elif op == "restore":
            result = cp.restore(cp.RestoreRequest(session=ref, snapshot=_text(args, "snapshot", "") or None), **where)
        elif op == "undo":
            result = cp.undo(cp.UndoRequest(session=ref), **where)
        else:
            result = cp.handoff(cp.HandoffRequest(session=ref), **where)
            doc = _document(result)
            doc["markdown"] = Path(result.path).read_text(encoding="utf-8", errors="replace")
            return doc
    except msgspec.ValidationError as exc:
        raise UserError(f"checkpoint_{op}: {exc}") from None
    return _document(result)


def _document(result: Any) -> dict[str, Any]:
    """A result Struct as the JSON data ``voyager checkpoint … --json`` prints."""
    import msgspec

    return json.loads(msgspec.json.encode(result))


def _session_for(op: str, args: dict[str, Any], current: str | None, unknown: str | None = None) -> str:
    named = _text(args, "session", "").strip()
    if current is None:
        if not named:
            raise NoSession(
                f"{unknown or 'this agent does not tell Voyager which session is calling'}: pass session "
                "(your session's id; list_sessions shows the newest sessions first)"
            )
        return named
    if named and op in _WRITES and not _same_session(named, current):
        raise UserError(
            f"checkpoint {op} changes only the calling session ({current}); "
            f"read another with checkpoint_status or checkpoint_handoff"
        )
    return named or current


def _same_session(named: str, current: str) -> bool:
    native = current.partition(":")[2] or current
    return named in (current, native)


def _save_fields(args: dict[str, Any], ref: str) -> dict[str, Any]:
    """checkpoint_save's arguments as ``checkpoints_api.SaveRequest`` fields."""
    unknown = sorted(set(args) - set(_REPLACED) - set(_APPENDED) - {"session"})
    if unknown:
        raise UserError(f"unknown argument(s) for checkpoint_save: {', '.join(unknown)}")
    fields: dict[str, Any] = {"session": ref}
    for arg, field in _REPLACED.items():
        if args.get(arg) is not None:
            fields[field] = _text(args, arg, "")
    for arg in _APPENDED:
        fields[arg] = _strings(args, arg)
    return fields
