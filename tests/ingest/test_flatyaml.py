"""The flat YAML reader: the scalars Copilot's workspace.yaml holds, and every bad input named, never a crash."""

from __future__ import annotations

from pathlib import Path

import pytest

from voyager_sessions.ingest.adapters.base import Notice
from voyager_sessions.ingest.flatyaml import FlatYamlError, parse_flat_yaml, read_flat_yaml

WORKSPACE = """\
id: f84365d9-1ecc-499c-a61d-21afe6408455
cwd: /home/dev/proj
client_name: github/cli
name: '请运行这个命令: `echo ok` — it''s PROMPT_X (please run it once).'
user_named: false
summary_count: 0
created_at: 2026-12-01T08:04:08.987Z
updated_at: 2026-12-01T08:04:09.085Z
"""


def test_the_workspace_file_as_copilot_writes_it() -> None:
    doc = parse_flat_yaml(WORKSPACE)
    assert doc["id"] == "f84365d9-1ecc-499c-a61d-21afe6408455"
    assert doc["cwd"] == "/home/dev/proj"
    assert doc["name"] == "请运行这个命令: `echo ok` — it's PROMPT_X (please run it once)."
    assert doc["user_named"] == "false" and doc["created_at"] == "2026-12-01T08:04:08.987Z"


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("name: plain text # a comment\n", "plain text"),
        ("name: a#b\n", "a#b"),
        ("name: ~\n", None),
        ("name:\n", None),
        ("name: 'single ''quoted'' # not a comment'\n", "single 'quoted' # not a comment"),
        ('name: "tab\\tnewline\\nquote\\" \\u00e9 \\x41 \\U0001F600"\n', 'tab\tnewline\nquote" é A 😀'),
        ("name: 'folded\n  over\n\n  lines'\n", "folded over\nlines"),
        ('name: "escaped \\\n  break"\n', "escaped break"),
        ("name: plain\n  continued\n", "plain continued"),
        ("name: |-\n  line one\n    indented\n  line three\n", "line one\n  indented\nline three"),
        ("name: |\n  keep one newline\n\n", "keep one newline\n"),
        ("name: |+\n  keep all\n\n", "keep all\n\n"),
        ("name: |2-\n    leading spaces\n", "  leading spaces"),
        ("name: >-\n  folded\n  block\n\n  para\n", "folded block\npara"),
        ("name: >\n\n  after a blank\n", "\nafter a blank\n"),
        ("name: [a, b]\n", None),
        ("name:\n  nested: map\n  other: 1\nnext: x\n", None),
        ("name:\n- a\n- b\nnext: x\n", None),
        ("\ufeff# comment\n---\nname: x\n...\nignored: after the end\n", "x"),
        ("name: 'crlf'\r\nnext: y\r\n", "crlf"),
    ],
)
def test_scalars(text: str, value: str | None) -> None:
    assert parse_flat_yaml(text)["name"] == value


def test_a_nested_value_does_not_hide_the_keys_after_it() -> None:
    assert parse_flat_yaml("a:\n  b: 1\n  c:\n    - d\nname: after\n")["name"] == "after"


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("just text\n", "not a 'key: value' line"),
        ("name: 'never closed\nnext: x\n", "unterminated"),
        ('name: "bad \\q escape"\n', "bad escape"),
        ('name: "\\U00110000"\n', "beyond Unicode"),
        ("name: 'x' trailing\n", "after the closing quote"),
        ("name: a\nname: b\n", "given twice"),
        ("name: |x\n  y\n", "bad block scalar header"),
        ("name: |2\n   ok\n one\n", "less indented"),
    ],
)
def test_what_it_does_not_understand_is_an_error_naming_the_line(text: str, why: str) -> None:
    with pytest.raises(FlatYamlError, match=why):
        parse_flat_yaml(text)


def test_a_surrogate_escape_becomes_a_replacement_character() -> None:
    assert parse_flat_yaml('name: "\\ud800"\n')["name"] == "\ufffd"


def test_garbage_never_raises_anything_but_the_reader_error() -> None:
    import random

    rng = random.Random(5)
    pieces = [
        "a",
        ":",
        " ",
        "\n",
        "'",
        '"',
        "\\",
        "|",
        ">",
        "-",
        "#",
        "x",
        "\t",
        "{",
        "é",
        "\\u",
        "k: ",
        "\n  ",
        "2",
        "+",
    ]
    for _ in range(3000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 30)))
        try:
            parse_flat_yaml(text)
        except FlatYamlError:
            pass


def test_read_flat_yaml_answers_a_notice_for_a_bad_file(tmp_path: Path) -> None:
    bad = tmp_path / "workspace.yaml"
    bad.write_bytes(b"name: 'unterminated\n")
    notice = read_flat_yaml(bad)
    assert isinstance(notice, Notice) and not notice.fatal and "unterminated" in notice.reason
    assert isinstance(read_flat_yaml(tmp_path / "missing.yaml"), Notice)
    big = tmp_path / "big.yaml"
    big.write_bytes(b"name: " + b"x" * (1 << 20) + b"\n")
    too_big = read_flat_yaml(big)
    assert isinstance(too_big, Notice) and "larger than" in too_big.reason
    good = tmp_path / "good.yaml"
    good.write_bytes(b"name: \xff\xfe ok\n")  # invalid UTF-8 is replaced, not fatal
    assert read_flat_yaml(good) == {"name": "\ufffd\ufffd ok"}
