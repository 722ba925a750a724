"""How a reading command's arguments become an API request, and its result document becomes its output.

``voyager search`` (``list``, ``show``, ``stats``) is answered in two halves that may run
in two processes. The API (:mod:`voyager_sessions.api`) turns a request into a result
document: in this process, or in ``voyager serve``, which sends the document back as JSON.
This module is the other half, and the CLI's only renderer: :func:`request` splits the
command's parameters into the request (a plain dict of the request Struct's fields) and
the :class:`View` (``--json``, ``--jsonl``, colours), and :func:`render` writes the
result as the command's stdout, stderr and exit code: from the API's typed result in the
process that answered it, from the JSON bytes a server sent otherwise. Text reads the same
fields either way, and JSON is the same encoder's bytes, so a served answer and an
in-process one print the same bytes (``tests/serve/test_identical.py``).

Standard library only: the client of a server (every plain ``voyager search`` while one
runs) imports this and nothing heavier. ``--json`` writes the document's bytes as they
came; ``--jsonl`` cuts each hit's bytes out of them (never re-encoding: Python's ``json``
spells some floats otherwise than msgspec); text decodes them into :class:`Doc` objects,
which :mod:`voyager_sessions.cli.render` reads as it reads the model's Structs.
"""

from __future__ import annotations

import sys

from voyager_sessions.core import jsontext, plural
from voyager_sessions.core.errors import EXIT_BUSY, EXIT_NONE, EXIT_OK
from voyager_sessions.core.filters import SESSION_FILTERS
from voyager_sessions.core.textsafe import escape_json_controls

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing: the server's client pays for imports
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Mapping
    from typing import Any


class Doc(dict):
    """A decoded JSON object whose fields also read as attributes; an absent one (an omitted default) is None."""

    __slots__ = ()

    def __getattr__(self, name: str) -> Any:
        return self.get(name)


def decode(body: bytes) -> Any:
    """A result document's JSON as :class:`Doc` objects (and lists, strings, numbers)."""
    return jsontext.loads(body, object_hook=Doc)


class View:
    """How the command shows a result: ``as_json``, ``as_jsonl``, ``color`` (decided where the terminal is), and
    ``grouped``: a search's hits under one heading per session, as ripgrep groups matches under their file (on a
    terminal, unless ``--flat`` or ``--sessions``; a pipe gets one self-contained hit after another)."""

    __slots__ = ("as_json", "as_jsonl", "color", "grouped")

    def __init__(
        self, *, as_json: bool = False, as_jsonl: bool = False, color: bool = False, grouped: bool = False
    ) -> None:
        self.as_json = as_json
        self.as_jsonl = as_jsonl
        self.color = color
        self.grouped = grouped


def request(cmd: str, params: Mapping[str, Any], color: Callable[[str], bool]) -> tuple[dict[str, Any], View]:
    """The API request (fields of ``api.OPERATIONS[cmd].request``) and the view for command ``cmd``'s click ``params``.

    ``color(mode)`` resolves ``--color`` against the stdout the output goes to.
    """
    view = View(
        as_json=bool(params.get("as_json")),
        as_jsonl=bool(params.get("as_jsonl")),
        color=color(params["color"]) if "color" in params else False,
    )
    if cmd == "search":
        view.grouped = (
            not (params["by_session"] or params.get("flat") or view.as_json or view.as_jsonl) and sys.stdout.isatty()
        )
        fields = {
            "query": " ".join(params["query"]),
            "limit": params["limit"],
            "offset": params["offset"],
            "providers": list(params["providers"]),
            "kinds": list(params["kinds"]),
            **{f.name: params[f.name] for f in SESSION_FILTERS},
            "session": params["session"],
            "since": params["since"],
            "until": params["until"],
            "sort": params["sort"],
            "sessions": params["by_session"],
            "context": params["context"],
            "refresh": not params["no_refresh"],
            "remember": True,
            "meaning": bool(params.get("meaning")),
        }  # a person's search: `voyager resume -` reopens it
    elif cmd == "list":
        fields = {"provider": params["provider"], "limit": params["limit"], "offset": params["offset"]}
    elif cmd == "show":
        fields = {"session": params["session"], "around": params["around"], "window": params["window"]}
    elif cmd == "stats":
        fields = {}
    else:
        raise KeyError(cmd)
    return fields, view


def quiet(view: View, stderr_is_a_terminal: bool) -> bool:
    """Whether a search's refresh keeps its skip notices to itself (not a person at a terminal, or JSON out)."""
    return not stderr_is_a_terminal or view.as_json or view.as_jsonl


def notice_line(text: str) -> str:
    """A notice of the API (``api.Notice``) as the CLI prints it on stderr."""
    return f"voyager: {text}"


class Writer:
    """Where output goes: ``text(line, err=…)`` writes a line (a newline added), ``raw(data)`` bytes to stdout.

    ``color``: the line carries Voyager's colours on purpose (``click.echo`` would strip
    them from a stream that is not a terminal otherwise); every other line has no escapes.
    """

    def text(self, line: str, *, err: bool = False, color: bool | None = None) -> None:
        raise NotImplementedError

    def raw(self, data: bytes) -> None:
        raise NotImplementedError


class Streams(Writer):
    """This process's stdout and stderr, written directly (the server's client: its stdout is UTF-8, checked)."""

    def text(self, line: str, *, err: bool = False, color: bool | None = None) -> None:
        stream = sys.stderr if err else sys.stdout
        stream.write(line + "\n")
        stream.flush()

    def raw(self, data: bytes) -> None:
        sys.stdout.flush()
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()


def render(cmd: str, fields: Mapping[str, Any], result: Any, view: View, out: Writer) -> int:
    """Write command ``cmd``'s result as the command does; its exit code.

    ``result`` is the result document: the API's Struct, in the process that answered it, or the JSON bytes a
    server sent (as msgspec encodes them). Text is drawn from the document's fields, which a Struct and a
    decoded :class:`Doc` both read as attributes; JSON is the document's bytes (a Struct's encoded here), so
    both ways print the same bytes.
    """
    body: bytes | None = None
    if isinstance(result, (bytes, bytearray)):
        body = bytes(result)
        doc = decode(body)
    else:
        doc = result
    if cmd == "search":
        return _search(fields, doc, body, view, out)
    if view.as_json:
        out.raw(escape_json_controls(body if body is not None else _encode(doc)) + b"\n")
        if cmd == "list":
            if doc.indexing:
                out.text(indexing_line(doc.indexing), err=True)
            return EXIT_OK if doc.sessions else EXIT_NONE
        return EXIT_OK
    if cmd == "list":
        from voyager_sessions.cli.render import render_row

        for row in doc.sessions:
            out.text(render_row(row))
        out.text(f"{fields['offset'] + len(doc.sessions)} of {plural.count(doc.total, 'session')}", err=True)
        if doc.indexing:
            out.text(indexing_line(doc.indexing), err=True)
        return EXIT_OK if doc.sessions else EXIT_NONE
    if cmd == "show":
        from voyager_sessions.cli.render import render_timeline

        out.text(render_timeline(doc.session, doc.events, color=view.color), color=view.color)
        return EXIT_OK
    if cmd == "stats":
        out.text(f"data dir: {doc.data_dir}")
        for p, c in doc.providers.items():
            out.text(
                f"  {p:<9} {c['sessions']:>6} {'session ' if c['sessions'] == 1 else 'sessions'} "
                f"{c['events']:>9} {'event' if c['events'] == 1 else 'events'}"
            )
        out.text(f"index: {doc.index_events} events, {doc.index_bytes / 1e6:.1f} MB, {doc.index_segments} segments")
        if doc.last_scan:
            from voyager_sessions.core.isotime import iso

            out.text(f"last scan: {iso(doc.last_scan['finished'])}")
        return EXIT_OK
    raise KeyError(cmd)


def _encode(doc: Any) -> bytes:
    """A result Struct's JSON, as a server would send it (only the process that answered has a Struct)."""
    import msgspec

    return msgspec.json.encode(doc)


def _search(fields: Mapping[str, Any], doc: Any, body: bytes | None, view: View, out: Writer) -> int:
    if doc.match == "partial":
        # One line, whatever the output format: the hits hold some of the terms, not all.
        out.text(
            f"voyager: no session holds all {len(doc.terms)} terms; showing the sessions that hold the most first",
            err=True,
        )
    if doc.indexing:
        out.text(indexing_line(doc.indexing), err=True)
    meaning: Any = getattr(doc, "meaning", None)  # with --meaning only (a decoded document's None, a result's UNSET)
    ready: int | None = getattr(meaning, "sessions_ready", None)
    total: int | None = getattr(meaning, "sessions_total", None)
    if ready is not None and total is not None and ready < total:
        # A search never waits for vectors: say what meaning could not rank yet, once, on stderr.
        out.text(
            f"voyager: meaning ranked {ready} of {total} sessions; {total - ready} not embedded "
            "yet (`voyager scan --meaning` embeds them and waits)",
            err=True,
        )
    if view.as_json:
        out.raw(escape_json_controls(body if body is not None else _encode(doc)) + b"\n")
    elif view.as_jsonl:
        spans = hit_spans(body) if body is not None else (_encode(h) for h in doc.hits)
        out.raw(b"".join(escape_json_controls(hit) + b"\n" for hit in spans))
    elif not doc.hits:
        if doc.total == 0:
            out.text("No matches yet." if doc.indexing else "No matches.", err=True)
        else:
            out.text(f"No hits on this page ({doc.total} in all).", err=True)
    else:
        from voyager_sessions.cli.render import render_group, render_hit

        by_session = bool(fields.get("sessions"))
        if view.grouped:
            for group in _by_session(doc.hits):
                out.text(render_group(group, color=view.color), color=view.color)
        else:
            for h in doc.hits:
                out.text(render_hit(h, color=view.color, by_session=by_session), color=view.color)
        shown_to = doc.offset + len(doc.hits)
        noun = ("session" if by_session else "hit") + ("" if doc.total == 1 else "s")
        # A broad query counts only the kinds of event it searched (docs/json.md, total_exact): at least this many.
        at_least = "+" if doc.total_exact is False else ""
        more = f"; next page: --offset {shown_to}" if shown_to < doc.total or at_least else ""
        out.text(f"{doc.offset + 1}-{shown_to} of {doc.total}{at_least} {noun}{more}", err=True)
    if doc.total:
        return EXIT_OK
    # "Nothing matched" is an answer only from a whole index: while one is being built, the match may be in
    # what is not indexed yet (exit 3, as when another scan holds the index).
    return EXIT_BUSY if doc.indexing else EXIT_NONE


def indexing_line(ix: Any) -> str:
    """The line a search answered from an index still being built writes on stderr (``indexing`` in its JSON)."""
    done, total, words = ix.sessions_done, ix.sessions_total, ix.sessions_words  # a Doc or the model's Struct
    said = f" (what was said in {words:,})" if words > done else ""
    if ix.running:
        return (
            f"voyager: still indexing: searched {done:,} of {total:,} sessions{said} so far; "
            "search again for the rest (`voyager scan` shows the progress)"
        )
    return (
        f"voyager: the index is incomplete: {done:,} of {total:,} sessions{said} were indexed when its scan stopped; "
        "`voyager scan` goes on with it"
    )


def _by_session(hits: list[Any]) -> list[list[Any]]:
    """The hits under their sessions, sessions in the order of their best (first) hit, hits in their order."""
    groups: dict[str, list[Any]] = {}
    for h in hits:
        groups.setdefault(h.session_id, []).append(h)
    return list(groups.values())


def hit_spans(body: bytes) -> Iterator[bytes]:
    """The bytes of each element of the top-level ``hits`` array of a search document, as they are in ``body``."""
    text = body.decode("utf-8")
    pos = _skip(text, 0)
    if text[pos : pos + 1] != "{":
        raise ValueError("a search document is a JSON object")
    pos = _skip(text, pos + 1)
    while text[pos : pos + 1] != "}":
        key, pos = jsontext.raw_decode(text, pos)
        pos = _skip(text, pos)
        if text[pos : pos + 1] != ":":
            raise ValueError("malformed search document")
        pos = _skip(text, pos + 1)
        if key != "hits":
            _, pos = jsontext.raw_decode(text, pos)
        else:
            if text[pos : pos + 1] != "[":
                raise ValueError("hits is not a list")
            pos = _skip(text, pos + 1)
            while text[pos : pos + 1] != "]":
                start = pos
                _, pos = jsontext.raw_decode(text, pos)
                yield text[start:pos].encode("utf-8")
                pos = _skip(text, pos)
                if text[pos : pos + 1] == ",":
                    pos = _skip(text, pos + 1)
            pos += 1
        pos = _skip(text, pos)
        if text[pos : pos + 1] == ",":
            pos = _skip(text, pos + 1)


def _skip(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in " \t\r\n":
        pos += 1
    return pos
