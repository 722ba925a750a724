"""``list``, ``show`` and ``stats`` read without click exactly as click reads them (as ``search`` is: test_search_fast_path).

Their click commands are built from the same option tables; the fast reader accepts only
what click accepts and yields click's values, or leaves argv to click. The server checks
what argv gives against the API's request types (``api.decode_request``).
"""

from __future__ import annotations

import random

import click
import pytest

from voyager_sessions.cli import commands
from voyager_sessions.cli.app import cli


def _click_params(name: str, args: list[str]) -> dict | None:
    try:
        return cli.commands[name].make_context(name, list(args)).params
    except (click.ClickException, click.exceptions.Exit):
        return None


@pytest.mark.parametrize("name", ["list", "show", "stats"])
def test_click_commands_are_built_from_the_tables(name):
    options, positional = commands.tables(name)
    params = [p for p in cli.commands[name].params if p.name != "help"]
    if positional:
        assert isinstance(params[0], click.Argument) and params[0].name == "session"
        params = params[1:]
    assert [p.name for p in params] == [o.dest for o in options]
    for opt, param in zip(options, params):
        assert tuple(param.opts) == opt.decls
        if opt.kind == "int":
            assert (param.type.min, param.type.max) == opt.bounds


ACCEPTED = {
    "list": [[], ["--json"], ["--provider", "codex", "-n", "3", "--offset=2"], ["--limit", "1", "--limit", "9"]],
    "show": [
        ["abc"],
        ["abc", "--json"],
        ["--around", "5", "abc", "-C", "2"],
        ["abc", "--color", "never"],
        ["--", "-abc"],
        ["abc", "--context=0"],
    ],
    "stats": [[], ["--json"], ["--json", "--json"]],
}
REFUSED = {
    "list": [["x"], ["--help"], ["-n", "0"], ["--offset", "-1"], ["--bogus"], ["-n5"], ["--json=1"]],
    "show": [[], ["a", "b"], ["--around", "-1", "a"], ["a", "-C", "100001"], ["a", "--color", "yes"], ["-h"]],
    "stats": [["x"], ["--verbose"], ["--help"]],
}


@pytest.mark.parametrize(
    "name, args",
    [(n, a) for n, cases in ACCEPTED.items() for a in cases],
    ids=lambda x: " ".join(x) if isinstance(x, list) else x,
)
def test_fast_reader_reads_what_click_reads(name, args):
    fast = commands.parse(name, args)
    assert fast is not None
    assert fast == _click_params(name, args)


@pytest.mark.parametrize(
    "name, args",
    [(n, a) for n, cases in REFUSED.items() for a in cases],
    ids=lambda x: " ".join(x) if isinstance(x, list) else x,
)
def test_fast_reader_leaves_the_rest_to_click(name, args):
    assert commands.parse(name, args) is None


def test_fast_reader_never_disagrees_with_click_fuzzed():
    vocab = [
        "w",
        "-",
        "--",
        "--json",
        "--json=1",
        "--provider",
        "codex",
        "-n",
        "--limit",
        "--limit=5",
        "5",
        "0",
        "-3",
        "--offset",
        "--around",
        "7",
        "-C",
        "--context",
        "100000",
        "100001",
        "--color",
        "never",
        "auto",
        "--help",
        "-x",
        "",
        "05",
    ]
    rng = random.Random(20261201)
    accepted = 0
    for _ in range(3000):
        name = rng.choice(["list", "show", "stats"])
        args = [rng.choice(vocab) for _ in range(rng.randint(0, 6))]
        fast = commands.parse(name, args)
        if fast is not None:
            accepted += 1
            assert fast == _click_params(name, args), (name, args)
    assert accepted > 200


@pytest.mark.parametrize(
    "name, args",
    [
        ("search", ["x", "--provider", "codex", "-C", "2", "--json"]),
        ("list", ["--provider", "codex"]),
        ("show", ["abc", "--around", "3"]),
        ("stats", ["--json"]),
    ],
)
def test_what_argv_gives_is_a_request_the_api_takes_unchanged(name, args):
    import json

    import msgspec

    from voyager_sessions import api
    from voyager_sessions.cli import present

    fields, _ = present.request(name, commands.parse(name, args), lambda mode: False)
    fields = json.loads(json.dumps(fields))  # as it crosses a socket
    req = api.decode_request(name, fields)
    assert {k: v for k, v in msgspec.to_builtins(req).items() if k in fields} == fields


@pytest.mark.parametrize(
    "change, message",
    [
        ({"limit": 0}, "limit must be an integer from 1 to 10000"),
        ({"limit": True}, "limit must be an integer"),
        ({"limit": 2.5}, "limit must be an integer"),
        ({"offset": 2**63}, "offset must be an integer from 0 to"),
        ({"providers": "codex"}, "providers must be a list"),
        ({"providers": [1]}, "providers must be a list of strings"),
        ({"sort": "random"}, "sort must be one of"),
        ({"sessions": 1}, "sessions must be true or false"),
        ({"query": [None]}, "query must be a string"),
        ({"as_json": True}, "unknown field for search: as_json"),
    ],
)
def test_the_api_refuses_what_argv_could_not_give(change, message):
    from voyager_sessions import api
    from voyager_sessions.cli import present

    fields, _ = present.request("search", commands.parse("search", ["x"]), lambda mode: False)
    with pytest.raises(ValueError, match=message):
        api.decode_request("search", {**fields, **change})
    with pytest.raises(ValueError, match="unknown operation"):
        api.decode_request("scan", {})
    with pytest.raises(ValueError, match="request must be an object"):
        api.decode_request("stats", [])
