"""MiMo Code and iCodeMate (documented): OpenCode's reader on each fork's own store, as agentsview reads them.

No real store of either was captured. Both keep OpenCode's layouts in a data dir of their own:
the SQLite database (``mimocode.db``, ``icodemate.db``; OpenCode's v1 tables here) or the JSON
tree whose session descriptions sit in ``storage/session_diff/`` instead of ``storage/session/``.
The conversations are written by ``synth.opencode`` from a conversation carrying the markers;
checked per fork: the contract (kinds, one prompt, paired tool calls, files untouched, an
unchanged rescan), the JSON tree under ``session_diff``, a changed session read again, the
homes, and no resume command (none is known).
"""

from __future__ import annotations
import json
import shutil
import sqlite3
from pathlib import Path
import pytest
from synth import opencode as so
from tests.support.scanning import hits, one, scan, sessions
from tests.support.documented import check_sample
from voyager_sessions.ingest import adapters
from tests.support.samples.opencode_forks import FORKS, CWD, MARKERS, conversation, data_dir


@pytest.mark.parametrize("fork", FORKS)
def test_the_database_holds_to_the_contract(fork: str, home: Path, run) -> None:
    data_dir(home, fork).mkdir(parents=True)
    so.write_v1(data_dir(home, fork) / f"{fork}.db", [conversation()])
    assert check_sample(run, home, fork, MARKERS)["new"] == 1
    (row,) = sessions(run).values()
    assert (row["session_id"], row["provider"], row["cwd"], row["resume"]) == (f"{fork}:ses_fork1", fork, CWD, None)


@pytest.mark.parametrize("fork", FORKS)
def test_the_json_tree_under_session_diff(fork: str, home: Path, run) -> None:
    storage = data_dir(home, fork) / "storage"
    so.write_json_tree(storage, [conversation()])
    shutil.move(storage / "session", storage / "session_diff")
    assert check_sample(run, home, fork, MARKERS)["new"] == 1
    assert adapters.get(fork).roots({"HOME": str(home)})[1] == storage


@pytest.mark.parametrize("fork", FORKS)
def test_a_new_session_is_read_and_the_others_stay(fork: str, home: Path, run) -> None:
    data_dir(home, fork).mkdir(parents=True)
    db = data_dir(home, fork) / f"{fork}.db"
    so.write_v1(db, [conversation()])
    scan(run)
    w = so.V1Writer(sqlite3.connect(db))
    so.add_v1(w, conversation("ses_fork2", "第二个会话 PROMPT2_FORK"))
    w.conn.commit()
    w.conn.close()
    assert scan(run)["changed"] == 1
    assert one(run, "PROMPT2_FORK", "user", "human") and one(run, "PROMPT_FORK", "user", "human")


@pytest.mark.parametrize("fork", FORKS)
def test_homes_and_overrides(fork: str, tmp_path: Path) -> None:
    adapter = adapters.get(fork)
    var = fork.upper()
    assert adapter.roots({"HOME": "/h"}) == [
        Path(f"/h/.local/share/{fork}/{fork}.db"),
        Path(f"/h/.local/share/{fork}/storage"),
    ]
    assert adapter.roots({"HOME": "/h", "XDG_DATA_HOME": "/x"})[0] == Path(f"/x/{fork}/{fork}.db")
    assert adapter.roots({"HOME": "/h", f"VOYAGER_{var}_HOME": "/v"})[0] == Path(f"/v/{fork}.db")
    assert adapter.roots({"HOME": "/h", f"VOYAGER_{var}_DB": "/d.db"}) == [Path("/d.db")]
    # OpenCode's own store is OpenCode's.
    so.write_v1(tmp_path / "opencode.db", [conversation()])
    assert list(adapter.discover({"HOME": str(tmp_path), f"VOYAGER_{var}_HOME": str(tmp_path)})) == []


def test_an_id_that_is_no_plain_name_names_no_folder(home: Path, run) -> None:
    """The tree's folders are named after ids its files hold: ``..`` or a NUL in one is looked up nowhere."""
    storage = data_dir(home, "mimocode") / "storage"
    so.write_json_tree(storage, [conversation()])
    shutil.move(storage / "session", storage / "session_diff")
    outside = home / ".local/share/mimocode/message/escaped"  # storage/message/../../message/escaped
    shutil.copytree(storage / "message" / "ses_fork1", outside)
    info = storage / "session_diff" / "global" / "ses_fork1.json"
    doc = json.loads(info.read_text())
    (info.parent / "evil.json").write_text(json.dumps({**doc, "id": "../../message/escaped"}))
    (info.parent / "nul.json").write_text(json.dumps({**doc, "id": "nul\x00id"}))
    out = scan(run)
    assert out["failed"] == 0 and "adapter error" not in out["stderr"]
    assert len([h for h in hits(run, "PROMPT_FORK") if h["kind"] == "user"]) == 1, (
        "only the session whose id names its folder"
    )
