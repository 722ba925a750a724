"""A session held by two sources (issue #38, item 8): the index equals what the sources hold now, whatever was read
last and whatever went.

The probe: two ChatGPT exports, an older one and a newer cumulative one sharing a conversation the person
edited since. After the older was deleted its text stayed searchable and the newer's edited wording was not
found: the index held the copy read last (the older export sorts after the newer), and deleting it took
nothing, since the newer still held the session. Here every step (both present, either one deleted, the
newer one rewritten without the conversation, one added back) is compared with a scan of the same files
into a fresh data dir.
"""

from __future__ import annotations

import pytest

import json
import shutil
from pathlib import Path
from typing import Any

from tests.support.run import Run
from tests.support.samples.chatgpt import node, write_export

SHARED = "67a1b2c3-0000-4000-8000-0000000000aa"
WORDS = ("OLDWORDING", "EDITEDWORDING", "ONLYOLD", "ONLYNEW", "REPLYSHARED")


def _conv(cid: str, prompt: str, updated: float) -> dict[str, Any]:
    nodes = [
        node("root", None, None),
        node("u1", "root", "user", [prompt], t=updated - 5),
        node("a1", "u1", "assistant", ["好的 REPLYSHARED"], t=updated),
    ]
    return {
        "title": f"t {cid[-2:]}",
        "create_time": 1767225600.0,
        "update_time": updated,
        "mapping": {n["id"]: n for n in nodes},
        "current_node": "a1",
        "conversation_id": cid,
        "id": cid,
    }


OLD = [
    _conv(SHARED, "迁移 OLDWORDING", 1767225700.0),
    _conv("67a1b2c3-0000-4000-8000-0000000000bb", "ONLYOLD", 1767225650.0),
]
NEW = [
    _conv(SHARED, "迁移 EDITEDWORDING", 1767299999.0),
    _conv("67a1b2c3-0000-4000-8000-0000000000cc", "ONLYNEW", 1767299990.0),
]


def _state(run: Run) -> dict[str, Any]:
    """What a person finds: each marker word's hits, the sessions listed."""
    found = {}
    for word in WORDS:
        res = run("search", word, "--json", "--no-refresh", "--limit", "50")
        assert res.exit_code in (0, 1), res.stderr
        found[word] = sorted((h["session_id"], h["seq"], h["kind"]) for h in json.loads(res.stdout)["hits"])
    listed = run("list", "--json")
    assert listed.exit_code == 0, listed.stderr
    found["list"] = sorted((s["session_id"], s["title"]) for s in json.loads(listed.stdout)["sessions"])
    return found


def _fresh(run: Run, home: Path, monkeypatch, imports: Path) -> dict[str, Any]:
    """The same with the same exports scanned into a new data dir."""
    fresh = home / "fresh-data"
    shutil.rmtree(fresh, ignore_errors=True)
    monkeypatch.setenv("VOYAGER_HOME", str(fresh))
    try:
        assert run("scan", "-q").exit_code == 0
        return _state(run)
    finally:
        monkeypatch.setenv("VOYAGER_HOME", str(home / "voyager-data"))


@pytest.mark.slow  # ~2 s: in the slow run, so the default run keeps to its budget
def test_the_index_holds_the_newest_copy_and_follows_every_deletion(home: Path, run: Run, monkeypatch) -> None:
    imports = home / "exports"
    monkeypatch.setenv("VOYAGER_IMPORTS", str(imports))
    # The older export's name sorts after the newer's: read last, it used to win.
    old = write_export(imports / "z-old.zip", OLD, as_zip=True)
    new = write_export(imports / "a-new.zip", NEW, as_zip=True)

    def step() -> dict[str, Any]:
        assert run("scan", "-q").exit_code == 0
        now = _state(run)
        assert now == _fresh(run, home, monkeypatch, imports)
        return now

    both = step()
    assert both["EDITEDWORDING"] and not both["OLDWORDING"], "the newer copy of the shared conversation is indexed"
    assert both["ONLYOLD"] and both["ONLYNEW"]

    old.unlink()  # the probe: the older export deleted
    after = step()
    assert after["EDITEDWORDING"] and not after["OLDWORDING"] and not after["ONLYOLD"]

    write_export(old, OLD, as_zip=True)  # back, and now the newer one goes: the older copy is what is left
    step()
    new.unlink()
    only_old = step()
    assert only_old["OLDWORDING"] and not only_old["EDITEDWORDING"] and not only_old["ONLYNEW"]

    write_export(new, NEW, as_zip=True)  # the newer one back, then rewritten without the shared conversation
    assert step()["EDITEDWORDING"]
    write_export(new, NEW[1:], as_zip=True)
    dropped = step()
    assert dropped["OLDWORDING"] and not dropped["EDITEDWORDING"] and dropped["ONLYNEW"]
