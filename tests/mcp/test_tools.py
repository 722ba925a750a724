"""The MCP tools' schemas are the API's request Structs: every MCP-spelled field, with its bounds, default and
description, and nothing else but the arguments MCP declares itself; arguments map back by the same spellings."""

from __future__ import annotations

import msgspec
import pytest

from voyager_sessions.api import requests as rq
from voyager_sessions.core.errors import UserError
from voyager_sessions.mcp import calls, server, tools

IDENTIFIED = tools.Caller("Claude Code", True)


def _fields(struct: type) -> dict[str, msgspec.inspect.Field]:
    info = msgspec.inspect.type_info(struct)
    assert isinstance(info, msgspec.inspect.StructType)
    return {f.name: f for f in info.fields}


def _described(t: msgspec.inspect.Type) -> tuple[msgspec.inspect.Type, str | None]:
    """The field's type inside ``X | None`` and ``Annotated``, and its description."""
    description = None
    while isinstance(t, (msgspec.inspect.UnionType, msgspec.inspect.Metadata)):
        if isinstance(t, msgspec.inspect.Metadata):
            description = (t.extra_json_schema or {}).get("description", description)
            t = t.type
        else:
            t = next(m for m in t.types if not isinstance(m, msgspec.inspect.NoneType))
    return t, description


@pytest.mark.parametrize("tool", sorted(tools.READING))
def test_every_mcp_spelled_field_is_in_the_schema_as_declared(tool: str) -> None:
    struct, op = tools.READING[tool]
    listed = {t["name"]: t for t in tools.tool_list(IDENTIFIED)}
    schema = listed[tool]["inputSchema"]
    assert schema == tools.input_schema(tool)
    props = schema["properties"]
    spelled = rq.spelled(struct, "mcp")
    # Nothing but the request's MCP fields and the MCP-only arguments.
    assert set(props) == set(spelled.values()) | set(tools.MCP_ONLY.get(tool, {}))
    assert schema["additionalProperties"] is False
    fields = _fields(struct)
    for name, spelling in spelled.items():
        prop, field = props[spelling], fields[name]
        kind, meta = _described(field.type)
        assert meta and prop["description"] == meta, (tool, name)
        if isinstance(kind, msgspec.inspect.IntType):
            assert prop["type"] == "integer" and (prop.get("minimum"), prop.get("maximum")) == (kind.ge, kind.le)
        elif isinstance(kind, msgspec.inspect.ListType):
            assert prop["type"] == "array" and prop["items"] == {"type": "string"}
        elif isinstance(kind, msgspec.inspect.LiteralType):
            assert prop["enum"] == list(kind.values)
        elif isinstance(kind, msgspec.inspect.BoolType):
            assert prop["type"] == "boolean"
        else:
            assert prop["type"] == "string"
        if field.required:
            assert spelling in schema["required"]
        elif name in tools.MCP_DEFAULTS.get(tool, {}):
            assert prop["default"] == tools.MCP_DEFAULTS[tool][name]  # MCP's own default, declared
        elif field.default_factory is list:
            assert prop["default"] == []
        elif field.default is None:
            assert "default" not in prop  # "not given": the agent leaves it out
        else:
            assert prop["default"] == field.default, (tool, name)
    assert set(schema.get("required", ())) == {spelled[f] for f, v in fields.items() if v.required and f in spelled}
    assert op in {"search", "show", "list"}


def test_a_field_mcp_does_not_offer_is_not_offered() -> None:
    props = tools.input_schema("search")["properties"]
    for hidden in ("exclude_sessions", "refresh", "remember", "snippet_width", "providers", "kinds"):
        assert hidden not in props
    assert {"provider", "kind", "include_current"} <= set(props)


def test_the_server_names_every_tool_the_list_describes() -> None:
    assert tuple(t["name"] for t in tools.tool_list(IDENTIFIED)) == server.TOOL_NAMES


def test_arguments_map_to_fields_by_the_same_spellings() -> None:
    got = calls.request_fields("search", {"query": "x", "provider": "codex", "kind": ["tool"], "since": None})
    assert got == {"query": "x", "providers": ["codex"], "kinds": ["tool"]}
    assert calls.request_fields("show", {"session": "abc", "around": 3}) == {"session": "abc", "around": 3}
    assert calls.request_fields("list_sessions", {"provider": "gemini"}) == {"provider": "gemini"}
    with pytest.raises(UserError, match=r"^unknown argument\(s\) for search: colour, providers$"):
        calls.request_fields("search", {"query": "x", "colour": "red", "providers": ["codex"]})
    # include_current is MCP's own: taken, never a request field.
    assert calls.request_fields("search", {"query": "x", "include_current": True}) == {"query": "x"}


def test_the_filters_are_the_fields_that_narrow() -> None:
    from voyager_sessions.core.filters import BY_NAME

    assert set(tools.filters("search")) == {"provider", "kind", "session", "since", "until", *BY_NAME}
    assert {"repo", "cwd"} <= set(BY_NAME)


def test_a_bad_argument_is_named_as_the_agent_spelled_it(tmp_path) -> None:
    c = calls.Calls(tmp_path)
    with pytest.raises(UserError, match="^provider must be"):
        c.search({"query": "x", "provider": [1]}, None)
    with pytest.raises(UserError, match="^limit must be an integer from 1 to 10000$"):
        c.search({"query": "x", "limit": 0}, None)
