"""cecli (observed 1.10.0), and where project histories are looked for (its rule and Aider's), kept in the sandbox.

The capture is read by tests/ingest/test_captures.py; here: a run the log tells and no JSON session does is a
session of its own, and discovery led by a recorded working folder never leaves ``$VOYAGER_LOOK_WITHIN``: a
project folder outside it holding an Aider history and a ``.cecli`` folder, named as the cwd of a session in
HOME, is found without the pin (so the test can fail) and not with it (what every test runs with).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tests.support.captures import CAPTURES
from tests.support.run import Run
from tests.support.sessions import claude_session_lines
from voyager_sessions.ingest.adapters.base import LOOK_WITHIN, Hints, Source, discover, pinned
from voyager_sessions.ingest.adapters.cecli import ADAPTER

HISTORY = "\n# cecli chat started at 2026-12-07 15:03:28\n\n> cecli --message hi  \n\n#### 只在日志里 LOGONLY_PROMPT  \n\n回答 LOGONLY_REPLY\n"


def _claude_session(home: Path, cwd: Path) -> None:
    d = home / ".claude" / "projects" / "-outside-proj"
    d.mkdir(parents=True)
    (d / "5f1c2a9e-7b3d-4c21-9e8f-0a1b2c3d4e5f.jsonl").write_text("".join(claude_session_lines(cwd=str(cwd))), "utf-8")


def _plant(project: Path) -> None:
    """An Aider history and a cecli folder in ``project``, as each agent leaves them."""
    project.mkdir(parents=True)
    (project / ".aider.chat.history.md").write_text(
        "\n# aider chat started at 2026-11-20 10:00:00\n\n> aider --model x  \n\n#### 外面 OUTSIDE_AIDER  \n\nok\n",
        "utf-8",
    )
    (project / ".cecli").mkdir()
    (project / ".cecli" / "chat.history").write_text(HISTORY.replace("LOGONLY", "OUTSIDE_CECLI"), "utf-8")


def test_a_run_no_json_session_tells_is_its_own_session(home: Path, run: Run) -> None:
    shutil.copytree(CAPTURES / "cecli-1.10.0", home, dirs_exist_ok=True, ignore=shutil.ignore_patterns("truth.json"))
    with (home / "proj" / ".cecli" / "chat.history").open("a", encoding="utf-8") as f:
        f.write(HISTORY)
    assert run("scan", "-q").exit_code == 0
    hits = run.json("search", "LOGONLY_PROMPT", "--json", "--no-refresh")["hits"]
    assert [(h["kind"], h["origin"]) for h in hits] == [("user", "human")]
    for marker in ("PROMPT_CECLb5b67a", "PROMPT_T2CECLb5b67a"):  # told by a JSON session: once, from there
        human = [h for h in run.json("search", marker, "--json", "--no-refresh")["hits"] if h["origin"] == "human"]
        assert len(human) == 1 and "/agents/" in human[0]["session_id"], human


def test_a_source_is_the_folder_and_a_new_json_session_changes_it(home: Path) -> None:
    shutil.copytree(CAPTURES / "cecli-1.10.0", home, dirs_exist_ok=True, ignore=shutil.ignore_patterns("truth.json"))
    (before,) = [s for s in discover(ADAPTER, {"HOME": str(home)}) if isinstance(s, Source)]
    assert before.path == str((home / "proj" / ".cecli").resolve())
    extra = home / "proj" / ".cecli" / "agents" / "2026-12-08" / "0000aaaa"
    extra.mkdir(parents=True)
    (extra / "auto-save.json").write_text('{"chat_history": {"done_messages": [], "cur_messages": []}}', "utf-8")
    (after,) = [s for s in discover(ADAPTER, {"HOME": str(home)}) if isinstance(s, Source)]
    assert after.fingerprint != before.fingerprint


@pytest.mark.parametrize("pin", [False, True], ids=["unpinned-finds-it", "pinned-stays-in-the-sandbox"])
def test_a_recorded_folder_outside_the_sandbox_is_not_looked_at(
    pin: bool, tmp_path: Path, run: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    sandbox, outside = tmp_path / "sandbox", tmp_path / "outside" / "proj"
    home = sandbox / "home"
    home.mkdir(parents=True)
    _plant(outside)
    _claude_session(home, outside / "src")  # a session that ran below the project's root
    for var in ("VOYAGER_AIDER_HOME", "VOYAGER_CECLI_HOME", "VOYAGER_AIDER_ROOTS", "AIDER_CHAT_HISTORY_FILE"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("VOYAGER_HOME", str(sandbox / "data"))
    if pin:
        monkeypatch.setenv(LOOK_WITHIN, str(sandbox))
    else:
        monkeypatch.delenv(LOOK_WITHIN)
    assert run("scan", "-q").exit_code == 0
    found = {
        provider: [h["provider"] for h in run.json("search", word, "--json", "--no-refresh")["hits"]] == [provider]
        for provider, word in (("aider", "OUTSIDE_AIDER"), ("cecli", "OUTSIDE_CECLI_PROMPT"))
    }
    assert found == {"aider": not pin, "cecli": not pin}, found


def test_every_test_runs_pinned_to_its_temporary_folders() -> None:
    """The captures record /home/dev/proj: with the tests' pin, no hint leads there (nor to its parents)."""
    env = dict(os.environ)
    assert env.get(LOOK_WITHIN)
    hints = pinned(Hints(cwds=frozenset({"/home/dev/proj", "/home/dev"}), imports=frozenset({"/home/dev/x.zip"})), env)
    assert hints.cwds == frozenset() and hints.imports == frozenset()
    assert not hints.allows("/home/dev/proj") and not hints.allows("/")
