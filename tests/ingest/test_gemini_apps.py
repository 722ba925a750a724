"""The Gemini Apps adapter (documented) against Takeout "My Activity" pages written here as agentsview reads them.

No real Takeout was captured. A page is a list of ``outer-cell`` records; a ``Prompted`` record of
Gemini Apps is one exchange (the content cell's first block the prompt, the rest the answer).
Checked through ``voyager import`` and a scan: the contract (kinds, one prompt each, files untouched,
an unchanged rescan), other records and other products left out and counted, scripts never text,
the times and their zones, the unpacked Takeout folder and the Takeout zip, the imports folder, a
newer download re-reading only what changed, and a page that is no Gemini Apps export refused.
"""

from __future__ import annotations
import io
import json
import zipfile
from pathlib import Path
from tests.support.scanning import hits, one, scan, sessions
from tests.support.documented import check_sample
from voyager_sessions.ingest.adapters._takeout import ActivityParser, stamp
from tests.support.samples.gemini_apps import cell, activity


def test_an_imported_page_holds_to_the_contract(home: Path, tmp_path: Path, run) -> None:
    takeout = tmp_path / "Takeout" / "My Activity" / "Gemini Apps"
    takeout.mkdir(parents=True)
    (takeout / "MyActivity.html").write_text(activity(), encoding="utf-8")
    res = run("import", str(tmp_path / "Takeout"))
    assert res.exit_code == 0, res.stderr
    markers = {
        "prompt": ["解释一下量子纠缠 PROMPT_GEM", "写一首诗 PROMPT2_GEM"],
        "reply": ["REPLY_GEM", "REPLY2_GEM"],
        "absent": ["SCRIPT_GEM", "CANVAS_GEM", "OTHERPRODUCT_GEM"],
    }
    out = check_sample(run, tmp_path / "Takeout", "gemini-apps", markers, calls=0)
    assert "1 activity record(s) that are no prompt skipped (Canvas)" in out["stderr"]
    rows = sessions(run)
    assert len(rows) == 2 and all(r["provider"] == "gemini-apps" and r["resume"] is None for r in rows.values())
    started = sorted(r["started"] for r in rows.values())
    assert started[0] == "2026-01-02T20:04:05Z"  # 3:04:05 PM EST


def test_the_takeout_zip_and_a_newer_download(home: Path, tmp_path: Path, run) -> None:
    def takeout_zip(html: str) -> bytes:
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w") as z:
            z.writestr("Takeout/My Activity/Gemini Apps/MyActivity.html", html)
            z.writestr("Takeout/archive_browser.html", "<html>not activity</html>")
        return buf.getvalue()

    export = tmp_path / "takeout-20260105.zip"
    export.write_bytes(takeout_zip(activity()))
    assert run("import", str(export)).exit_code == 0
    scan(run)
    assert one(run, "PROMPT_GEM", "user", "human") and one(run, "REPLY2_GEM", "assistant", "agent")
    newer = activity().replace(
        "</body>", cell("Prompted", "Jan 6, 2026, 1:00:00 PM UTC", "<p>再来一首 PROMPT3_GEM</p>") + "</body>"
    )
    export.write_bytes(takeout_zip(newer))
    out = scan(run)
    assert out["changed"] == 1 and out["events_added"] == 1, out
    assert one(run, "PROMPT3_GEM", "user", "human")


def test_the_imports_folder_is_read_without_the_command(home: Path, run) -> None:
    folder = home / "voyager-data" / "imports"
    folder.mkdir(parents=True)
    (folder / "MyActivity.html").write_text(activity(), encoding="utf-8")
    scan(run)
    assert one(run, "PROMPT_GEM", "user", "human")["provider"] == "gemini-apps"


def test_a_page_that_is_no_export_is_refused(home: Path, tmp_path: Path, run) -> None:
    other = tmp_path / "page.html"
    other.write_text("<html><body><p>hello</p></body></html>")
    res = run("import", str(other))
    assert res.exit_code == 2 and "not a ChatGPT, Claude.ai or Gemini Apps export" in res.stderr


def test_times_and_hostile_markup() -> None:
    assert stamp("Jan 2, 2026, 3:04:05\u202fPM EST") == ("Jan 2, 2026, 3:04:05 PM EST", 1767384245.0)
    assert stamp("Jan 2, 2026, 12:00:00 AM GMT-03:30")[1] == 1767324600.0  # 03:30 UTC
    assert stamp("Jan 2, 2026, 3:04:05 PM Mars/Base") == ("Jan 2, 2026, 3:04:05 PM Mars/Base", None)
    parser = ActivityParser()
    parser.feed("<div class='outer-cell'>" + "<div>" * 5000 + "</div>" * 5000 + "</div></b></i>")
    parser.close()
    assert len(parser.done) == 1 and json.dumps(parser.done[0].blocks)


def test_a_page_cut_short_keeps_its_complete_records(home: Path, tmp_path: Path, run) -> None:
    page_ = activity()
    cut = page_[: page_.index("写一首诗") + 3]  # inside the third record
    folder = home / "voyager-data" / "imports"
    folder.mkdir(parents=True)
    (folder / "MyActivity.html").write_text(cut, encoding="utf-8")
    assert scan(run)["failed"] == 0
    assert one(run, "PROMPT_GEM", "user", "human") and not hits(run, "PROMPT2_GEM")
