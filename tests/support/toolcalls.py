"""A Claude Code session whose agent edits, writes, runs and searches: the tool calls every front end must show
readably (tests/ingest/test_toolview.py, the CLI's ``show``, the picker, the web page).

Its calls: an ``Edit`` of a Python file, a ``Write`` of a SQL migration, a ``Bash`` command with its reason,
a ``Grep``, an MCP tool Voyager does not know (nested arguments, a multi-line string), and two hostile ones:
an ``Edit`` whose new text holds terminal escapes (clear screen, retitle) and a ``Write`` of HTML with a
script. Each marker below is in exactly one call.
"""

from __future__ import annotations

from tests.support.sessions import json_line as _line

SID = "3c3c3c3c-0000-4000-8000-0000000ed170"
CWD = "/home/dev/ledger"
PROJECT = "-home-dev-ledger"

EDIT = {
    "file_path": "/home/dev/ledger/ledger/db.py",
    "old_string": "def connect(url):\n    conn = open_pool(url)\n    return conn",
    "new_string": "def connect(url, retries=3):\n    conn = open_pool(url, retries=retries)  # EDITMARK\n    return conn",
}
WRITE = {
    "file_path": "/home/dev/ledger/migrations/0007_ledger.sql",
    "content": "CREATE TABLE ledger_entries (\n  id INTEGER PRIMARY KEY,\n  amount_cents INTEGER NOT NULL -- WRITEMARK\n);\n",
}
BASH = {"command": "pytest -q tests/test_db.py -k BASHMARK", "description": "run the pool tests"}
GREP = {"pattern": "open_pool GREPMARK", "path": "/home/dev/ledger", "output_mode": "content"}
UNKNOWN = {"tables": ["ledger_entries"], "options": {"dry_run": True}, "note": "first line MCPMARK\nsecond line"}
HOSTILE_EDIT = {
    "file_path": "/home/dev/ledger/evil.txt",
    "old_string": "calm",
    "new_string": "ESCMARK \x1b[2J\x1b]0;pwned\x07 done",
}
HOSTILE_WRITE = {
    "file_path": "/home/dev/ledger/page.html",
    "content": '<h1>HTMLMARK</h1>\n<script>window.__pwned=1</script>\n<img src=x onerror="window.__pwned=1">',
}
CALLS = [
    ("Edit", EDIT),
    ("Write", WRITE),
    ("Bash", BASH),
    ("Grep", GREP),
    ("mcp__ledger__inspect", UNKNOWN),
    ("Edit", HOSTILE_EDIT),
    ("Write", HOSTILE_WRITE),
]


def lines(sid: str = SID, cwd: str = CWD) -> list[str]:
    """The session as Claude Code writes it: a prompt, then each call and its result, then an answer."""
    base = {"sessionId": sid, "cwd": cwd, "gitBranch": "main", "version": "2.0.14", "isSidechain": False}
    out = [
        _line(
            {
                **base,
                "type": "user",
                "uuid": "u0",
                "parentUuid": None,
                "timestamp": "2026-11-22T09:00:00.000Z",
                "message": {"role": "user", "content": "make the ledger pool retry TOOLPROMPT 连接池"},
            }
        )
    ]
    parent = "u0"
    for n, (tool, args) in enumerate(CALLS):
        ts = f"2026-11-22T09:0{n + 1}:00.000Z"
        out.append(
            _line(
                {
                    **base,
                    "type": "assistant",
                    "uuid": f"a{n}",
                    "parentUuid": parent,
                    "timestamp": ts,
                    "message": {
                        "id": f"msg_{n}",
                        "model": "claude-sonnet-4",
                        "role": "assistant",
                        "type": "message",
                        "content": [{"type": "tool_use", "id": f"toolu_{n}", "name": tool, "input": args}],
                        "stop_reason": "tool_use",
                    },
                }
            )
        )
        out.append(
            _line(
                {
                    **base,
                    "type": "user",
                    "uuid": f"r{n}",
                    "parentUuid": f"a{n}",
                    "timestamp": ts,
                    "message": {
                        "role": "user",
                        "content": [{"type": "tool_result", "tool_use_id": f"toolu_{n}", "content": f"ok {n}"}],
                    },
                }
            )
        )
        parent = f"r{n}"
    out.append(
        _line(
            {
                **base,
                "type": "assistant",
                "uuid": "a-end",
                "parentUuid": parent,
                "timestamp": "2026-11-22T09:09:00.000Z",
                "message": {
                    "id": "msg_end",
                    "model": "claude-sonnet-4",
                    "role": "assistant",
                    "type": "message",
                    "content": [{"type": "text", "text": "The pool retries three times now."}],
                    "stop_reason": "end_turn",
                },
            }
        )
    )
    return out
