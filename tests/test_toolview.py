"""A tool call as people read it (``ingest/toolview.py``): every agent's spelling of an edit as a diff, a written
file as code in its language, a shell call as its command, known tools as labelled fields, the rest as pretty
JSON — never an escaped newline — and a hit's one-line excerpt of a call with its highlights where they were.

The calls are given as the index stores them: ``toolcall.tool_call_text`` of the arguments agents write.
Then ``voyager show`` (the CLI, through the real command) on a session of such calls, hostile ones included.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.support import toolcalls
from tests.support.sessions import write_claude
from voyager_sessions.core import toolview
from voyager_sessions.ingest.toolcall import tool_call_text
from voyager_sessions.core.toolview import Code, Command, Diff, Field, Json, Note, parts, plain, readable_snippet


def shown(tool: str, arguments: object) -> list[toolview.Part]:
    """What a front end draws for the call, from what the index stores of it."""
    return parts(tool, tool_call_text(tool, arguments))


EDIT_DIFF = [("-", "a = 1"), ("+", "a = 2"), (" ", "b = 3")]


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("Edit", {"file_path": "/p/x.py", "old_string": "a = 1\nb = 3", "new_string": "a = 2\nb = 3"}),  # Claude
        ("replace", {"file_path": "/p/x.py", "old_string": "a = 1\nb = 3", "new_string": "a = 2\nb = 3"}),  # Gemini
        ("edit", {"filePath": "/p/x.py", "oldString": "a = 1\nb = 3", "newString": "a = 2\nb = 3"}),  # OpenCode
        ("edit", {"path": "/p/x.py", "old_str": "a = 1\nb = 3", "new_str": "a = 2\nb = 3"}),  # Copilot CLI
        (
            "str_replace_editor",
            {"command": "str_replace", "path": "/p/x.py", "old_str": "a = 1\nb = 3", "new_str": "a = 2\nb = 3"},
        ),
        ("edit", {"path": "/p/x.py", "oldText": "a = 1\nb = 3", "newText": "a = 2\nb = 3"}),  # Pi
        ("StrReplaceFile", {"path": "/p/x.py", "edit": {"old": "a = 1\nb = 3", "new": "a = 2\nb = 3"}}),  # Kimi
        ("search_replace", {"file_path": "/p/x.py", "old_string": "a = 1\nb = 3", "new_string": "a = 2\nb = 3"}),
    ],
)
def test_an_edit_in_any_agents_spelling_is_a_diff_of_its_file(tool: str, arguments: dict) -> None:
    got = shown(tool, arguments)
    assert isinstance(got[0], Diff) and got[0].label == "/p/x.py", got
    assert got[0].lines == EDIT_DIFF
    assert "\\n" not in plain(got)


def test_several_edits_and_patches_are_diffs() -> None:
    multi = shown("MultiEdit", {"file_path": "/p/a.py", "edits": [{"old_string": "x", "new_string": "y"}] * 2})
    assert multi == [Diff("/p/a.py", [("-", "x"), ("+", "y"), ("@", "⋯"), ("-", "x"), ("+", "y")])]
    # Codex's apply_patch keeps the patch as its input text.
    patch = "*** Begin Patch\n*** Update File: src/a.py\n@@ def f():\n-    return 1\n+    return 2\n*** End Patch"
    [d] = parts("apply_patch", tool_call_text("apply_patch", patch))
    assert d.lines == [
        ("=", "*** Begin Patch"),
        ("=", "*** Update File: src/a.py"),
        ("@", "@@ def f():"),
        ("-", "    return 1"),
        ("+", "    return 2"),
        ("=", "*** End Patch"),
    ]
    # OpenCode's patch tool, and Cline's SEARCH/REPLACE blocks.
    [d] = shown("patch", {"patchText": "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-old\n+new"})
    assert ("-", "old") in d.lines and ("+", "new") in d.lines
    cline = {"path": "src/a.ts", "diff": "<<<<<<< SEARCH\nconst a = 1;\n=======\nconst a = 2;\n>>>>>>> REPLACE"}
    assert shown("replace_in_file", cline) == [Diff("src/a.ts", [("-", "const a = 1;"), ("+", "const a = 2;")])]


@pytest.mark.parametrize(
    ("tool", "arguments", "language"),
    [
        ("Write", {"file_path": "/p/m.sql", "content": "CREATE TABLE t (\n  id int\n);\n"}, "sql"),
        ("write_file", {"file_path": "/p/app.ts", "content": "let a = 1;\n"}, "typescript"),
        ("write", {"filePath": "/p/Dockerfile", "content": "FROM python\n"}, "docker"),
        ("create", {"path": "/p/notes.txt", "file_text": "plain\n"}, ""),
    ],
)
def test_a_written_file_is_its_content_in_its_language(tool: str, arguments: dict, language: str) -> None:
    [code] = shown(tool, arguments)
    content = next(v for k, v in arguments.items() if k in ("content", "file_text"))
    assert code == Code(next(iter(arguments.values())), content, language)
    assert plain([code]).split("\n")[1:] == content.rstrip("\n").split("\n")


def test_a_shell_call_is_its_command() -> None:
    assert shown("Bash", {"command": "ls -la", "description": "list"}) == [Command("ls -la\n# list")]
    assert shown("exec_command", {"cmd": ["bash", "-lc", "make test"]}) == [Command("make test")]
    assert plain(shown("Bash", {"command": "ls -la"})) == "$ ls -la"


def test_known_tools_are_labelled_fields_and_a_todo_list_a_checklist() -> None:
    assert shown("Grep", {"pattern": "TODO", "path": "/src", "output_mode": "content"}) == [
        Field("pattern", "TODO"),
        Field("path", "/src"),
        Field("output", "content"),
    ]
    todos = {
        "todos": [{"content": "a", "status": "completed"}, {"content": "b", "status": "in_progress"}, {"content": "c"}]
    }
    assert shown("TodoWrite", todos) == [Field("todos", "☑ a\n◐ b\n☐ c")]
    task = shown("Task", {"description": "look", "prompt": "line one\nline two", "subagent_type": "explore"})
    assert task == [Field("description", "look"), Field("prompt", "line one\nline two"), Field("agent", "explore")]
    assert plain(task) == "description: look\nprompt:\n  line one\n  line two\nagent: explore"


def test_an_unknown_tool_is_pretty_json_with_its_line_breaks_as_lines() -> None:
    [j] = shown("mcp__db__query", {"sql": "SELECT 1\nFROM t", "opts": {"limit": 5}, "tags": ["a", "b"]})
    assert isinstance(j, Json)
    assert (
        j.text
        == '{\n  "sql": |\n      SELECT 1\n      FROM t\n  "opts": {\n    "limit": 5\n  },\n  "tags": ["a", "b"]\n}'
    )
    assert "\\n" not in j.text


def test_a_call_without_arguments_shows_nothing_more_than_its_name() -> None:
    assert shown("TodoRead", {}) == []


def test_a_call_cut_at_the_index_cap_is_read_as_far_as_it_goes() -> None:
    from voyager_sessions.search.prepare import capped_text

    stored = capped_text(tool_call_text("Write", {"file_path": "/p/big.py", "content": "x = 1\n" * 400}), 1024)
    got = parts("Write", stored)
    assert isinstance(got[0], Code) and got[0].label == "/p/big.py" and got[0].text.startswith("x = 1\nx = 1\n")
    assert isinstance(got[-1], Note) and "more characters" in got[-1].text
    # Cut inside a key, after a comma, inside an escape: still read.
    for cut in ('{"file_path": "/p", "con', '{"a": "b",', '{"a": "x\\', '{"a": "\\u00', '{"a": [1, 2'):
        assert not isinstance(parts("mystery", cut)[0], Field), cut


def test_hostile_calls_cost_nothing_and_stay_data() -> None:
    deep = "[" * 100_000 + "]" * 100_000
    assert parts("mystery", deep)  # no RecursionError: shown as its text
    # A huge edit is not worked out line by line (difflib is quadratic at worst): old removed, new added.
    old, new = "\n".join(f"a{i}" for i in range(9000)), "\n".join(f"b{i}" for i in range(9000))
    [d] = shown("Edit", {"file_path": "f", "old_string": old, "new_string": new})
    assert len(d.lines) == 18000
    # Terminal escapes come back as they were: every front end neutralises what it draws.
    [d] = shown("Edit", {"file_path": "f", "old_string": "a", "new_string": "\x1b[2J"})
    assert d.lines == [("-", "a"), ("+", "\x1b[2J")]


def test_a_hits_excerpt_of_a_call_reads_as_text_with_its_highlights_kept() -> None:
    excerpt = '…"file_path":"/x/db.py","old_string":"def a():\\n    return 1","new_string":"def parse_config_v2(): \\"ok\\"","opts":{"n":1}}'
    at = excerpt.index("parse_config_v2")
    text, spans = readable_snippet("tool_call", "Edit", excerpt, [(at, at + len("parse_config_v2"))])
    assert (
        text
        == '…file_path: /x/db.py · old_string: def a(): return 1 · new_string: def parse_config_v2(): "ok" · opts: {n: 1}'
    )
    assert [text[a:b] for a, b in spans] == ["parse_config_v2"]
    # A shell call's excerpt is its command, and any other excerpt is left as it is.
    assert readable_snippet("tool_call", "Bash", 'echo "a":"b"', [(0, 4)]) == ('echo "a":"b"', [(0, 4)])
    assert readable_snippet("user", None, '{"a":"b"}', []) == ('{"a":"b"}', [])
    # An excerpt cut inside an escape, or holding half of a surrogate pair, still reads (the cut escape is its
    # letter, the half one replacement mark): an excerpt is any slice of hostile text.
    text, _ = readable_snippet("tool_call", "Edit", '{"path":"a\\u","x":"\\ud83d"}', [])
    assert text == "path: au · x: \ufffd", text


def test_languages_by_file_name() -> None:
    assert [toolview.language_of(p) for p in ("a.py", "B.RS", "x/Makefile", ".bashrc", "noext", "a.tar.gz")] == [
        "python",
        "rust",
        "make",
        "",
        "",
        "",
    ]


def test_voyager_show_draws_each_call_readably_and_neutralises_hostile_text(home: Path, run) -> None:
    write_claude(home, toolcalls.lines(), sid=toolcalls.SID, project=toolcalls.PROJECT)
    assert run("scan", "-q").exit_code == 0
    res = run("show", toolcalls.SID[:8])
    out = res.stdout
    assert res.exit_code == 0
    assert "✎ /home/dev/ledger/ledger/db.py\n    - def connect(url):\n" in out
    assert "    +     conn = open_pool(url, retries=retries)  # EDITMARK\n" in out
    assert "✎ /home/dev/ledger/migrations/0007_ledger.sql (sql)\n    CREATE TABLE ledger_entries (\n" in out
    assert "$ pytest -q tests/test_db.py -k BASHMARK\n      # run the pool tests" in out
    assert "pattern: open_pool GREPMARK\n" in out
    assert '  "note": |\n          first line MCPMARK\n          second line' in out
    assert not re.search(r"\\n|\\u001b", out)  # never an escaped newline or escape
    assert "\x1b" not in out and "\x07" not in out and "␛[2J␛]0;pwned␇" in out
    # Search hits read the same way, on one line.
    hit = run("search", "EDITMARK", "--no-refresh", "--flat").stdout.split("\n")[1]
    assert "file_path: /home/dev/ledger/ledger/db.py · old_string: def connect(url):" in hit and "\\n" not in hit
    assert json.loads(run("show", toolcalls.SID[:8], "--json").stdout)["events"][1]["text"].startswith(
        '{"file_path":'
    )  # the JSON contract is the stored text, unchanged
