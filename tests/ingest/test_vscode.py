"""What VS Code-family editors share: user dirs per platform, file URIs, key ranges over state.vscdb."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from voyager_sessions.core.paths import vscode_user_dirs
from voyager_sessions.ingest.adapters._vscode import has_prefix, items, key_range, uri_path


def test_user_dirs_per_platform():
    env = {"HOME": "/h"}
    assert vscode_user_dirs(env, "Cursor", platform="linux") == [Path("/h/.config/Cursor/User")]
    assert vscode_user_dirs({**env, "XDG_CONFIG_HOME": "/x"}, "Code", platform="linux") == [Path("/x/Code/User")]
    assert vscode_user_dirs({**env, "XDG_CONFIG_HOME": "/x"}, "Code", platform="darwin") == [
        Path("/h/Library/Application Support/Code/User")
    ]


@pytest.mark.parametrize(
    "uri, path",
    [
        ("file:///home/me/a%20b", "/home/me/a b"),
        ("file:///home/me/%E6%95%B0%E6%8D%AE", "/home/me/数据"),
        ("file://server/share/x", "/share/x"),
        ("file:///c%3A/Users/me", "c:/Users/me"),
        ("vscode-remote://ssh-remote%2Bbox/srv/app", "/srv/app"),
        ("https://example.com/x", None),
        ("", None),
        (None, None),
    ],
)
def test_uri_path(uri, path):
    assert uri_path(uri) == path


def test_key_ranges_use_the_index_and_match_prefixes_only(tmp_path):
    db = tmp_path / "s.db"
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE cursorDiskKV (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)")
    for key in ("bubbleId:a:1", "bubbleId:a:2", "bubbleId:ab:1", "bubbleId;", "composerData:a"):
        conn.execute("INSERT INTO cursorDiskKV VALUES (?, 'v')", (key,))
    conn.commit()
    assert key_range("bubbleId:a:") == ("bubbleId:a:", "bubbleId:a;")
    assert [k for k, _ in items(conn, "cursorDiskKV", "bubbleId:a:")] == ["bubbleId:a:1", "bubbleId:a:2"]
    assert has_prefix(conn, "cursorDiskKV", "composerData:") and not has_prefix(conn, "cursorDiskKV", "nope:")
    plan = " ".join(
        str(tuple(r))
        for r in conn.execute(
            "EXPLAIN QUERY PLAN SELECT key, value FROM cursorDiskKV WHERE key >= ? AND key < ?", key_range("bubbleId:")
        )
    )
    assert "USING INDEX" in plan, plan
    conn.close()
