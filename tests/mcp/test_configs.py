"""``voyager mcp install``'s editor against configs it was not written from: it reads back as meant, or refuses.

Every generated TOML and JSON shape (``tests/support/configs.py``) goes through a set and a remove of
Voyager's entry. The one rule: the result, read by a strict parser (``tomllib``; for JSON the agent's own
rule, the last of a repeated key), is the old document with exactly that entry set (or gone), and every
comment the user wrote is still there; or the edit is refused with :class:`configs.Unsafe` (then the CLI
writes nothing). The shapes that can be edited must be: a refusal is checked against the reason it names.
"""

from __future__ import annotations

import copy
import json
import re
import sys

import pytest

from tests.support.configs import json_configs, toml_configs
from voyager_sessions.mcp import configs
from voyager_sessions.mcp.install import toml_block

KEYS = ["mcp_servers", "voyager"]
ENTRY = {
    "command": "/opt/v o/voyager",
    "args": ["mcp", 'x"y', "数据"],
    "required": True,
    "env": {"VOYAGER_HOME": "/d/é", "XDG_DATA_HOME": "/x"},
}

#: TOML server-list shapes that must be edited (not refused), and the ones that must be refused.
TOML_EDITABLE = ("absent", "headers", "headers-ours", "headers-ours-split", "explicit-dotted", "explicit-dotted-ours")
TOML_EDITABLE += ("inline", "inline-ours", "quoted-spaced", "quoted-ours")
TOML_REFUSED = ("not-a-table", "array-of-tables")

needs_tomllib = pytest.mark.skipif(sys.version_info < (3, 11), reason="the strict reader is tomllib (3.11+)")


def _comments(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip().startswith("#")]


@needs_tomllib
@pytest.mark.parametrize("name,text", list(toml_configs()), ids=[n for n, _ in toml_configs()])
def test_a_toml_config_reads_back_as_meant_or_is_refused(name: str, text: str) -> None:
    shape = name.split("/")[0]
    old = configs.load_toml(text)
    try:
        new = configs.toml_set(text, KEYS, ENTRY, toml_block(KEYS, ENTRY))
    except configs.Unsafe as exc:
        assert shape not in TOML_EDITABLE, f"{name}: refused {exc}"
        return
    assert shape not in TOML_REFUSED, name
    want = copy.deepcopy(old)
    want.setdefault("mcp_servers", {})["voyager"] = ENTRY
    assert configs.load_toml(new) == want, new
    for comment in _comments(text):
        if "notes" not in text or comment not in _strings(text):
            assert comment in new, (name, comment)
    # And out again: the rest as it was.
    back = configs.toml_remove(new, KEYS)
    gone = copy.deepcopy(want)
    del gone["mcp_servers"]["voyager"]
    got = configs.load_toml(back)
    if not gone["mcp_servers"] and "mcp_servers" not in got:
        del gone["mcp_servers"]
    assert got == gone, back
    # A second install of the same entry is a no-op.
    assert configs.toml_set(new, KEYS, ENTRY, toml_block(KEYS, ENTRY)) == new


def _strings(text: str) -> str:
    """The multi-line strings of ``text`` (comments written inside them are the string's, not comments)."""
    return "".join(re.findall(r'"""(.*?)"""', text, re.S) + re.findall(r"'''(.*?)'''", text, re.S))


def test_the_issues_two_toml_breakages_are_gone() -> None:
    """Issue 38.5: a dotted-key [mcp_servers] got `voyager` declared twice; a multi-line string holding
    [mcp_servers.voyager] lost its closing quotes and the keys after them."""
    dotted = '[mcp_servers]\nvoyager.command = "old"\nvoyager.args = ["mcp"]\nother.command = "o"\n'
    out = configs.toml_set(dotted, KEYS, ENTRY, toml_block(KEYS, ENTRY))
    assert configs.load_toml(out)["mcp_servers"] == {"voyager": ENTRY, "other": {"command": "o"}}
    held = 'notes = """\n[mcp_servers.voyager]\ncommand = "x"\n"""\nmodel = "o3"\nkeep = 1\n'
    out = configs.toml_set(held, KEYS, ENTRY, toml_block(KEYS, ENTRY))
    assert out.startswith(held)
    doc = configs.load_toml(out)
    assert doc["notes"] == '[mcp_servers.voyager]\ncommand = "x"\n' and doc["keep"] == 1 and doc["model"] == "o3"


@pytest.mark.parametrize("comments", [False, True], ids=["json", "jsonc"])
def test_a_json_config_reads_back_as_meant_or_is_refused(comments: bool) -> None:
    keys = ["mcpServers", "voyager"]
    value = {"command": "/v", "args": ["mcp"], "env": {"VOYAGER_HOME": "/d"}}
    edited = refused = 0
    for name, text in json_configs(comments=comments):
        shape = name.split("/")[1]
        parsed = configs.parse_json(text, comments=comments)
        try:
            new = configs.json_set(text, keys, value, comments=comments)
        except configs.Unsafe as exc:
            refused += 1
            reason = str(exc)
            if shape in ("ours-twice", "list-twice"):
                assert "twice" in reason and "reads only the last" in reason, (name, reason)
            elif shape in ("not-object", "null"):
                assert "not an object" in reason, (name, reason)
            else:
                raise AssertionError(f"{name}: refused {reason}") from None
            continue
        edited += 1
        assert shape not in ("ours-twice", "list-twice", "not-object", "null"), name
        want = copy.deepcopy(parsed.value)
        want.setdefault("mcpServers", {})["voyager"] = value
        got = configs.parse_json(new, comments=comments)
        assert got.value == want and not got.repeated, (name, new)
        if not comments:
            assert json.loads(new) == want  # what any JSON reader (and the agent) sees
        for comment in re.findall(r"//[^\n]*|/\*.*?\*/", text, re.S):
            if "not a comment" not in comment:
                assert new.count(comment) >= text.count(comment), (name, comment, new)
        back = configs.json_remove(new, keys, comments=comments)
        gone = copy.deepcopy(want)
        del gone["mcpServers"]["voyager"]
        assert configs.parse_json(back, comments=comments).value == gone, (name, back)
        assert configs.json_set(new, keys, value, comments=comments) == new
    assert edited and refused  # both kinds were generated (each refusal above named its reason)


def test_comments_where_the_agent_does_not_read_them_are_refused() -> None:
    with pytest.raises(configs.Unsafe, match="a comment, which this agent's config does not allow at line 2"):
        configs.json_set('{\n  // mine\n  "a": 1\n}\n', ["mcpServers", "voyager"], {}, comments=False)
    with pytest.raises(configs.Unsafe, match="a trailing comma"):
        configs.json_set('{"a": 1,}', ["mcpServers", "voyager"], {}, comments=True)
