"""While a first index is built, the web page's API says how far it is (the page's status line shows it)."""

from __future__ import annotations

import os
from pathlib import Path

from tests.support.paused import marked_history, paused_scan
from voyager_sessions.core.paths import DataDir
from voyager_sessions.web.data import Library, SearchRequest


def test_the_search_api_says_how_far_the_index_is(home, monkeypatch):
    marked_history(home, 5)
    data = Path(os.environ["VOYAGER_HOME"])
    with paused_scan(monkeypatch, data, 2):
        lib = Library(DataDir(data))
        try:
            found = lib.search(SearchRequest(query="marker4"))
            missing = lib.search(SearchRequest(query="marker0"))
            recent = lib.search(SearchRequest(query=""))
        finally:
            lib.close()
    for doc in (found, missing, recent):
        ix = doc["indexing"]
        assert ix is not None and ix.sessions_done == 2 and ix.sessions_total == 5 and ix.running
    assert found["result"].total == 1 and missing["result"].total == 0
    assert found["result"].indexing == found["indexing"]
    lib = Library(DataDir(data))
    try:
        assert lib.search(SearchRequest(query="marker0"))["indexing"] is None
    finally:
        lib.close()
