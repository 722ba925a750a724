"""Kilo Code's VS Code extension before 2026-04 (documented): its Cline-family task folders, read under ``kilo``.

No real task folder of the old extension was captured. As agentsview's ``kilo_legacy.go`` and
splitrail's ``kilo_code.rs`` read them: ``<User>/globalStorage/kilocode.kilo-code/tasks/<id>/`` with
``ui_messages.json`` (the panel's messages), ``api_conversation_history.json`` (what the model was
sent, whose ``environment_details`` name the working directory and the model) and a
``task_metadata.json`` holding only the files in context. Checked: the contract (kinds, one prompt
per message a person wrote, files untouched, an unchanged rescan), the cwd and model from the API
history's head, a task with only the API history, a changed task read again, a cut file costing
only its task, and the places.
"""

from __future__ import annotations
import json
from pathlib import Path
from tests.support.scanning import one, scan, sessions
from tests.support.documented import check_sample
from voyager_sessions.ingest.adapters.kilo import ADAPTER, EXTENSION, legacy_dirs, legacy_facts, probe
from tests.support.samples.kilo_legacy import ui, task


def test_a_task_holds_to_the_contract(home: Path, run) -> None:
    folder = task(home)
    markers = {
        "prompt": ["修复购物车 PROMPT_KLG"],
        "thinking": ["THINK_KLG"],
        "call": ["npm test 购物车_klg"],
        "result": ["TOOLOUT_KLG"],
        "reply": ["REPLY_KLG"],
    }
    check_sample(run, home, "kilo", markers, calls=0)  # the panel's messages name no call ids
    (row,) = sessions(run).values()
    assert (row["session_id"], row["cwd"], row["model"], row["resume"]) == (
        f"kilo:{folder.name}",
        "/home/dev/商店 app",
        "z-ai/glm-4.5-air:free",
        None,
    )
    assert probe(str(folder)) == "ui_messages"


def test_a_task_with_only_its_api_history(home: Path, run) -> None:
    task(home, with_ui=False)
    assert scan(run)["failed"] == 0
    assert one(run, "PROMPT_KLG", "user", "human") and one(run, "REPLY_KLG", "assistant", "agent")


def test_a_changed_task_is_read_again_and_a_cut_file_costs_only_its_task(home: Path, run) -> None:
    folder = task(home)
    other = task(home, "4f1c2d3e-0000-4000-8000-000000000002")
    scan(run)
    more = [*ui(), {"ts": 1767800000400, "type": "say", "say": "user_feedback", "text": "再跑一次 PROMPT2_KLG"}]
    (folder / "ui_messages.json").write_text(json.dumps(more, ensure_ascii=False))
    (other / "ui_messages.json").write_text(json.dumps(ui(), ensure_ascii=False)[:60])
    out = scan(run)
    assert out["changed"] == 1 and out["failed"] == 1, out  # the cut file: its task is read again next scan
    assert one(run, "PROMPT2_KLG", "user", "human")


def test_the_cwd_and_model_come_from_the_api_historys_head(tmp_path: Path) -> None:
    folder = task(tmp_path)
    assert (legacy_facts(folder).cwd, legacy_facts(folder).model) == ("/home/dev/商店 app", "z-ai/glm-4.5-air:free")
    (folder / "api_conversation_history.json").write_text('[{"role": "user", "content": "<model>not-in-mode</model>"}]')
    assert (legacy_facts(folder).cwd, legacy_facts(folder).model) == (None, None)
    (folder / "api_conversation_history.json").unlink()
    assert legacy_facts(folder).cwd is None


def test_places(tmp_path: Path) -> None:
    assert (
        legacy_dirs({"HOME": str(tmp_path), "XDG_CONFIG_HOME": "/x"})[0]
        == Path("/x/Code/User/globalStorage") / EXTENSION
    )
    assert legacy_dirs({"HOME": "/h", "VOYAGER_KILO_VSCODE_HOME": "/k"}) == [Path("/k")]
    assert ADAPTER.roots({"HOME": "/h", "VOYAGER_KILO_VSCODE_HOME": "/k"})[-1] == Path("/k/tasks")
