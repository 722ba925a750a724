"""What ``voyager mcp``'s tools do: each call's arguments in, the application API's document out.

This is the one module through which the MCP server reaches Voyager, so that moving it
onto the typed API requests (issue #23, item 1) touches nothing else. A reading call
goes to ``voyager serve`` when one runs for the data dir (its index is open and fresh
already) and to :mod:`voyager_sessions.api` in this process otherwise. Until the server
speaks the typed requests, the bridge to it asks for the command's ``--json`` document,
which is the API's Struct encoded by msgspec: the same data either way, never text meant
for a person.

Arguments are checked against the command's own option table
(:func:`voyager_sessions.commands.validate`), so an agent gets exactly the bounds and
messages the CLI gives. Every failure an agent should see is a one-line ``UserError``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from voyager_sessions.errors import UserError

#: A session id we put into a query filter: what every agent's ids look like (uuid, ses_…, provider:native).
_SAFE_ID = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.:")


def exclusion_query(query: str, current: str | None) -> str:
    """``query`` with the caller's own session left out (``current``: its Voyager or native id)."""
    if not current or not set(current) <= _SAFE_ID:
        return query
    # By its native id: an agent's fork (Kilo sends what OpenCode sends) files it under another provider.
    native = current.partition(":")[2] or current
    own = f'-session:"{native}"'
    # Parenthesised so a top-level OR still applies to the whole of what the agent asked.
    return f"({query}) {own}" if query.strip() else own


class Calls:
    """The reading tools' work, for one data dir (the process's, unless a test names another)."""

    def __init__(self, data_dir: Path | None = None) -> None:
        from voyager_sessions.paths import data_dir as default_data_dir

        self.data_dir = Path(data_dir) if data_dir is not None else default_data_dir()

    # -- the tools ----------------------------------------------------------------------

    def search(self, args: dict[str, Any], current: str | None) -> dict[str, Any]:
        query = _text(args, "query", "")
        explicit = args.get("session")
        filters = ("provider", "kind", "repo", "cwd", "session", "since", "until")
        if not query.strip() and not any(args.get(f) for f in filters):
            raise UserError("nothing to search for: give a query or a filter")  # before our own filter is added
        from voyager_sessions.api import check_query

        check_query(query)  # before any work, and named as the agent typed it (not with our filter added)
        asked = query
        if not args.get("include_current") and not explicit:
            query = exclusion_query(query, current)
        params = {
            "query": (query,),
            "limit": args.get("limit", 20),
            "offset": args.get("offset", 0),
            "providers": tuple(_strings(args, "provider")),
            "kinds": tuple(_strings(args, "kind")),
            "repo": args.get("repo"),
            "cwd": args.get("cwd"),
            "session": explicit,
            "since": args.get("since"),
            "until": args.get("until"),
            "sort": args.get("sort", "relevance"),
            "by_session": args.get("sessions", False),
            "context": args.get("context", 0),
            "as_json": True,
            "as_jsonl": False,
            "no_refresh": False,
            "color": "never",
        }
        doc = self._read("search", params)
        if "query" in doc:
            doc["query"] = asked  # the document names what the agent asked, not our filter
        return doc

    def show(self, args: dict[str, Any]) -> dict[str, Any]:
        return self._read(
            "show",
            {
                "session": args.get("session"),
                "around": args.get("around"),
                "window": args.get("window", 10),
                "as_json": True,
                "color": "never",
            },
        )

    def list_sessions(self, args: dict[str, Any]) -> dict[str, Any]:
        return self._read(
            "list",
            {
                "provider": args.get("provider"),
                "limit": args.get("limit", 50),
                "offset": args.get("offset", 0),
                "as_json": True,
            },
        )

    # -- plumbing -----------------------------------------------------------------------

    def _read(self, cmd: str, params: dict[str, Any]) -> dict[str, Any]:
        from voyager_sessions import commands
        from voyager_sessions.serve import client

        try:
            checked = commands.validate(cmd, client.jsonable(params))
        except ValueError as exc:
            raise UserError(str(exc)) from None
        served = self._from_server(cmd, checked)
        if served is not None:
            return served
        return _in_process(self.data_dir, cmd, checked)

    def _from_server(self, cmd: str, params: dict[str, Any]) -> dict[str, Any] | None:
        """The document from a running ``voyager serve``; None when none answers (the call then runs here)."""
        from voyager_sessions.serve import client, protocol

        if os.environ.get(client.NO_SERVER_VAR):
            return None
        request = client.base_request(cmd, str(self.data_dir), client.jsonable(params))
        request["tty"] = [False, False]
        request["stdout"] = ["utf-8", "strict"]
        request["origin"] = "mcp"  # not the person's last search (voyager resume -)
        got = client.exchange(client.socket_path(self.data_dir), request, ack_timeout=protocol.ack_timeout(os.environ))
        if got is None or not isinstance(got[0].get("exit"), int):
            return None
        header, out = got
        if header["exit"] not in (0, 1):
            lines = [text for _, text in header["stderr"]]
            message = " ".join(line.removeprefix("voyager: ").strip() for t in lines for line in t.splitlines())
            raise UserError(message.strip() or f"voyager {cmd} failed (exit {header['exit']})")
        return json.loads(out)


def _in_process(data_dir: Path, cmd: str, p: dict[str, Any]) -> dict[str, Any]:
    """Run ``cmd`` through the application API in this process; its document as JSON-ready data."""
    import msgspec

    from voyager_sessions import api
    from voyager_sessions.paths import DataDir

    ddir = DataDir(data_dir)
    if cmd == "search":
        doc = _search(ddir, p)
    else:
        with api.reader(ddir) as r:
            if cmd == "show":
                doc = r.show(p["session"], around=p["around"], window=p["window"])
            else:
                doc = r.list_sessions(provider=p["provider"], limit=p["limit"], offset=p["offset"])
    return msgspec.json.decode(msgspec.json.encode(doc))


def _search(ddir: Any, p: dict[str, Any]) -> Any:
    from voyager_sessions import api
    from voyager_sessions.errors import Busy, VoyagerError
    from voyager_sessions.scan import scan
    from voyager_sessions.search.engine import SearchOptions

    text = " ".join(p["query"]).strip()
    filters = [p["providers"], p["kinds"], p["repo"], p["cwd"], p["session"], p["since"], p["until"]]
    if not text and not any(filters):
        raise UserError("nothing to search for: give a query or a filter")
    try:
        scan(ddir.root, None)  # the same refresh `voyager search` runs first: what was just said is found
    except Busy:
        pass  # a scan is running elsewhere: answer from what it has committed
    except VoyagerError:
        if not ddir.has_index():
            raise
    opts = SearchOptions(
        limit=p["limit"],
        offset=p["offset"],
        providers=list(p["providers"]),
        kinds=list(p["kinds"]),
        repo=p["repo"],
        cwd=p["cwd"],
        session=p["session"],
        since=p["since"],
        until=p["until"],
        sort=p["sort"],
        sessions=p["by_session"],
        context=p["context"],
    )
    with api.reader(ddir) as r:
        return r.search(text, opts)


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

#: Text fields a save replaces (an empty string clears one): tool argument -> CheckpointPatch field.
_REPLACED = {
    "title": "title",
    "objective": "objective",
    "status": "status",
    "summary": "summary",
    "plan": "current_plan",
    "notes": "notes",
}
#: Lists a save appends to (skipping items already there): tool argument -> CheckpointPatch field.
_APPENDED = {"done": "add_done", "next": "add_next", "blockers": "add_blockers", "files": "add_files"}
#: The operations that change a checkpoint: an agent that says which session it is may change only its own.
_WRITES = frozenset({"save", "restore", "undo"})


class NoSession(UserError):
    """A checkpoint tool needs a session and the agent named none."""


def checkpoint(data_dir: Path, op: str, args: dict[str, Any], current: str | None) -> dict[str, Any]:
    """Checkpoint operation ``op`` for the calling session (or the one ``args["session"]`` names); its result."""
    import msgspec

    from voyager_sessions import checkpoint_api
    from voyager_sessions.paths import DataDir

    ddir = DataDir(data_dir)
    if op == "list":
        return msgspec.to_builtins(checkpoint_api.list_checkpoints(ddir))
    ref = _session_for(op, args, current)
    if op == "save":
        result: Any = checkpoint_api.save(ddir, ref, _patch(args))
    elif op == "status":
        result = checkpoint_api.status(ddir, ref)
    elif op == "snapshots":
        result = checkpoint_api.snapshots(ddir, ref)
    elif op == "restore":
        result = checkpoint_api.restore(ddir, ref, _text(args, "snapshot", "") or None)
    elif op == "undo":
        result = checkpoint_api.undo(ddir, ref)
    else:
        result = checkpoint_api.handoff(ddir, ref)
        doc = msgspec.to_builtins(result)
        doc["markdown"] = Path(result.path).read_text(encoding="utf-8", errors="replace")
        return doc
    return msgspec.to_builtins(result)


def _session_for(op: str, args: dict[str, Any], current: str | None) -> str:
    named = _text(args, "session", "").strip()
    if current is None:
        if not named:
            raise NoSession(
                "this agent does not tell Voyager which session is calling: pass session "
                "(your session id; `search` or `list_sessions` shows ids)"
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


def _patch(args: dict[str, Any]) -> Any:
    from voyager_sessions.store.checkpoints import CheckpointPatch

    fields: dict[str, Any] = {}
    for arg, field in _REPLACED.items():
        if args.get(arg) is not None:
            fields[field] = _text(args, arg, "")
    for arg, field in _APPENDED.items():
        fields[field] = tuple(_strings(args, arg))
    unknown = sorted(set(args) - set(_REPLACED) - set(_APPENDED) - {"session"})
    if unknown:
        raise UserError(f"unknown argument(s) for checkpoint_save: {', '.join(unknown)}")
    return CheckpointPatch(**fields)
