"""The Visual Studio Copilot adapter (documented) against OpenTelemetry trace files written here as agentsview reads them.

No real trace was captured (Visual Studio runs on Windows). Each line of a trace file is one OTLP
export; a conversation's spans (``gen_ai.conversation.id``) spread over several files and a file
holds several conversations. Checked: the contract (kinds, one prompt per turn although every call
of a turn resends it, paired tool call, files untouched, an unchanged rescan), two conversations in
one folder, a new span read with the others unchanged, a bad line costing only itself, the model
and tokens, and the places.
"""

from __future__ import annotations
import json
import sys
from pathlib import Path
from tests.support.scanning import hits, one, scan, sessions
from tests.support.documented import check_sample
from tests.support.items import write
from voyager_sessions.ingest.adapters.visualstudio_copilot import traces_dirs
from tests.support.samples.visualstudio_copilot import CONV, MARKERS, attr, span, export, chat, turn, folder


def test_a_conversation_across_files_holds_to_the_contract(home: Path, run) -> None:
    one_, two = turn()
    write(folder(home) / "20260901_VSGitHubCopilot_traces_1.jsonl", [one_])
    write(folder(home) / "20260901_VSGitHubCopilot_traces_2.jsonl", [two])
    write(folder(home) / "unrelated.jsonl", [export(span(9, "other", gen_ai__operation__name="chat"))])
    assert check_sample(run, home, "visualstudio-copilot", MARKERS)["new"] == 1
    (row,) = sessions(run).values()
    assert (row["session_id"], row["model"]) == (f"visualstudio-copilot:{CONV}", "gpt-5")


def test_a_new_span_is_read_and_the_other_conversation_stays(home: Path, run) -> None:
    one_, two = turn()
    other = "0a1b2c3d-0000-4000-8000-000000000009"
    path = write(folder(home) / "a_VSGitHubCopilot_traces.jsonl", [one_, b"{broken\n", two])
    with path.open("a") as f:
        f.write(
            json.dumps(
                export(
                    chat(
                        5,
                        [{"role": "user", "parts": [{"type": "text", "content": "别的 PROMPT_OTHER_VSC"}]}],
                        [],
                        other,
                    )
                ),
                ensure_ascii=False,
            )
            + "\n"
        )
    out = scan(run)
    assert out["failed"] == 0 and one(run, "REPLY_VSC", "assistant", "agent") and hits(run, "PROMPT_OTHER_VSC")
    later = chat(7, [{"role": "user", "parts": [{"type": "text", "content": "再跑测试 PROMPT2_VSC"}]}], [], CONV)
    later["attributes"].append(attr("copilot_chat.root_request_id", "req-2"))
    with path.open("a") as f:
        f.write(json.dumps(export(later), ensure_ascii=False) + "\n")
    out = scan(run)
    assert out["changed"] == 1 and out["failed"] == 0, out
    assert one(run, "PROMPT2_VSC", "user", "human") and one(run, "PROMPT_OTHER_VSC", "user", "human")


def test_places(tmp_path: Path) -> None:
    if sys.platform.startswith("linux"):
        assert traces_dirs({"HOME": str(tmp_path)}) == [tmp_path / ".cache/VSGitHubCopilotLogs/traces"]
    assert traces_dirs({"HOME": "/h", "VOYAGER_VISUALSTUDIO_COPILOT_HOME": "/v"}) == [Path("/v")]
