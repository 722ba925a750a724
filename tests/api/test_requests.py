"""One Struct per request: every front end spells the API's request fields as ``api/requests.py`` declares them.

The command line's option tables (read without msgspec on the lean path), the web page's parameters and
the docs are each held here to the request Structs: a field a front end offers appears there with the same
bounds, default and help; a field it does not offer says why.
"""

from __future__ import annotations

import msgspec
import pytest

from voyager_sessions.api import requests as rq
from voyager_sessions.cli import options
from voyager_sessions.cli.argv import Option

#: Command -> (request Struct, its option table, its positional argument's name).
COMMANDS = {
    "search": (rq.SearchRequest, options.SEARCH_OPTIONS, options.QUERY_PARAM),
    "list": (rq.ListRequest, options.LIST_OPTIONS, None),
    "show": (rq.ShowRequest, options.SHOW_OPTIONS, "session"),
    "stats": (rq.StatsRequest, options.STATS_OPTIONS, None),
}

#: Options of the command line that are not request fields: how it shows a result, not what it asks.
VIEW_ONLY = {"--json", "--jsonl", "--flat", "--color"}

#: A CLI flag that is a field's negation.
INVERTED = {"--no-refresh": "refresh"}


def _fields(struct: type) -> dict[str, msgspec.inspect.Field]:
    info = msgspec.inspect.type_info(struct)
    assert isinstance(info, msgspec.inspect.StructType)
    return {f.name: f for f in info.fields}


def _meta(field: msgspec.inspect.Field) -> tuple[msgspec.inspect.Type, dict]:
    """The field's type (inside ``X | None``) and what its Meta says (bounds, description)."""
    t = field.type
    if isinstance(t, msgspec.inspect.UnionType):
        t = next(m for m in t.types if not isinstance(m, msgspec.inspect.NoneType))
    if isinstance(t, msgspec.inspect.Metadata):
        return t.type, dict(t.extra_json_schema or {})
    return t, {}


def _option(table: tuple[Option, ...], decls: tuple[str, ...]) -> Option:
    found = [o for o in table if o.decls == tuple(decls)]
    assert len(found) == 1, (decls, table)
    return found[0]


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_cli_option_of_a_field_is_the_fields_own(command: str) -> None:
    struct, table, positional = COMMANDS[command]
    spelled = rq.spelled(struct, "cli")
    fields = _fields(struct)
    for name, spelling in spelled.items():
        if spelling == "ARG":
            assert positional is not None and (positional == name or name == "query"), (command, name)
            continue
        opt = _option(table, spelling)
        kind, meta = _meta(fields[name])
        if spelling[-1] in INVERTED:  # the flag that turns the field off: its help says the negation
            assert INVERTED[spelling[-1]] == name and opt.kind == "flag" and fields[name].default is True
            description = meta["description"]
            assert opt.help == f"Don't {description[0].lower()}{description[1:]}", (command, name, opt.help)
            continue
        assert opt.help == meta["description"], (command, name, opt.help)
        if isinstance(kind, msgspec.inspect.IntType):
            assert opt.kind == "int" and opt.bounds == (kind.ge, kind.le), (command, name, opt.bounds)
            assert opt.default == fields[name].default, (command, name)
        elif isinstance(kind, msgspec.inspect.LiteralType):
            assert opt.kind == "choice" and set(opt.choices) == set(kind.values) and opt.default == fields[name].default
        elif isinstance(kind, msgspec.inspect.BoolType):
            assert opt.kind == "flag" and fields[name].default is False
        elif isinstance(kind, msgspec.inspect.ListType):
            assert opt.kind == "text" and opt.multiple
        else:
            assert opt.kind == "text" and not opt.multiple, (command, name)


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_cli_option_is_a_field_or_a_view(command: str) -> None:
    struct, table, _ = COMMANDS[command]
    spelled = {tuple(s) for s in rq.spelled(struct, "cli").values() if s != "ARG"}
    for opt in table:
        assert opt.decls in spelled or opt.decls[-1] in VIEW_ONLY, (command, opt.decls)


@pytest.mark.parametrize("struct", [c[0] for c in COMMANDS.values()] + [rq.SessionRequest, rq.ExportRequest])
def test_a_field_a_front_end_does_not_offer_says_why(struct: type) -> None:
    for name, field in _fields(struct).items():
        extra = _extra(field)
        for front in ("mcp", "web"):
            if extra.get(front, rq.SAME) is None and extra.get("cli") is not None:
                continue  # the command line offers it; a page or an agent has no use for it (sessions, context)
        if all(extra.get(front, rq.SAME if front != "cli" else None) is None for front in ("cli", "mcp", "web")):
            assert extra.get("why"), (struct.__name__, name)


def _extra(field: msgspec.inspect.Field) -> dict:
    t = field.type
    if isinstance(t, msgspec.inspect.UnionType):
        t = next(m for m in t.types if not isinstance(m, msgspec.inspect.NoneType))
    return dict(t.extra or {}) if isinstance(t, msgspec.inspect.Metadata) else {}


def test_the_command_line_request_holds_exactly_the_fields_it_spells() -> None:
    """``present.request`` (argv's parameters -> the request) fills every field the CLI offers, and no other
    but ``remember`` (a person's search is remembered)."""
    from voyager_sessions.cli.present import request

    for command, (struct, table, positional) in COMMANDS.items():
        params = {o.dest: () if o.multiple else False if o.kind == "flag" else o.default for o in table}
        if positional:
            params[positional] = ("x",) if command == "search" else "x"
        fields, _ = request(command, params, lambda mode: False)
        offered = set(rq.spelled(struct, "cli"))
        assert offered <= set(fields), (command, offered - set(fields))
        assert set(fields) - offered <= {"remember"}, (command, set(fields) - offered)
        msgspec.convert(fields, struct)  # and it is a valid request


def test_every_web_parameter_reaches_its_field() -> None:
    from voyager_sessions.web.data import search_request

    samples = {"limit": "7", "offset": "3", "sort": "recent", "since": "7d", "until": "1d"}
    for field, param in rq.spelled(rq.SearchRequest, "web").items():
        value = samples.get(param, f"v-{param}")
        req, rows = search_request({param: value}, {param: [value]})
        got = getattr(req, field)
        want = {"limit": 7, "offset": 3}.get(param, value)
        assert rows and (got == want or got == [want]), (field, param, got)


def test_a_bad_web_parameter_is_named_as_the_page_names_it() -> None:
    from voyager_sessions.core.errors import UserError
    from voyager_sessions.web.data import search_request

    with pytest.raises(UserError, match="^offset must be an integer"):
        search_request({"offset": "-4"}, {})
    with pytest.raises(UserError, match="^sort must be one of "):
        search_request({"sort": "sideways"}, {})


def test_the_engine_takes_every_search_option_from_the_request_by_name() -> None:
    """A filter is a field of ``SearchRequest`` and of the engine's ``SearchOptions`` under one name, or a
    session-attribute filter of ``core.filters`` the engine takes in ``where``: the API hands either on without
    a line of its own (``api._search_options``)."""
    from voyager_sessions import api
    from voyager_sessions.core.filters import SESSION_FILTERS
    from voyager_sessions.search.engine import SearchOptions

    shared = set(SearchOptions.__struct_fields__) - {"where"}
    assert shared <= set(rq.SearchRequest.__struct_fields__)
    given = {f.name: f"v-{f.name}" for f in SESSION_FILTERS}
    req = rq.SearchRequest(query="x", providers=["codex"], kinds=["user"], session="s", since="7d", **given)
    opts = api._search_options(req)
    assert all(getattr(opts, f) == getattr(req, f) for f in shared)
    assert opts.where == given
    assert api._search_options(rq.SearchRequest(query="x")).where == {}


def test_every_session_attribute_filter_is_a_request_field_the_command_line_spells() -> None:
    """A row of ``core.filters`` is a ``SearchRequest`` field of its name: a text, described as the table's help,
    ``--name`` on the command line (and so in every other front end, which derive from the field)."""
    from voyager_sessions.core.filters import SESSION_FILTERS

    fields = _fields(rq.SearchRequest)
    cli = rq.spelled(rq.SearchRequest, "cli")
    for f in SESSION_FILTERS:
        assert f.name in fields, f.name
        t = fields[f.name].type
        assert isinstance(t, msgspec.inspect.Metadata) and (t.extra_json_schema or {}).get("description") == f.help
        assert fields[f.name].default is None, f.name
        assert getattr(msgspec.convert({f.name: "text"}, rq.SearchRequest), f.name) == "text"
        assert cli[f.name] == (f"--{f.name}",), f.name


def _doc(path: str) -> str:
    from pathlib import Path

    return (Path(__file__).resolve().parents[2] / path).read_text(encoding="utf-8")


def test_the_readme_names_every_search_option() -> None:
    readme = _doc("README.md")
    said = readme[readme.index("`search` options:") :][:1200]
    for field, spelling in rq.spelled(rq.SearchRequest, "cli").items():
        if spelling != "ARG":
            assert any(f"`{s}" in said or f"/{s}`" in said for s in spelling), (field, spelling)


def test_the_web_docs_name_every_search_parameter() -> None:
    """docs/web.md names each parameter of ``/api/search``; a session-attribute filter's (``core.filters``) under
    its own name it may leave to docs/query.md's list of filters, which the line points to."""
    from voyager_sessions.core.filters import BY_NAME

    web = _doc("docs/web.md")
    line = next(x for x in web.splitlines() if x.startswith("| `GET /api/search?"))
    assert "(query.md)" in line and "session-attribute filter" in line
    filters = next(x for x in _doc("docs/query.md").splitlines() if x.startswith("**Filters** (`name:value`)"))
    for field, param in rq.spelled(rq.SearchRequest, "web").items():
        assert f"{param}=" in line or (field in BY_NAME and param == field and f"`{field}`" in filters), (field, param)
