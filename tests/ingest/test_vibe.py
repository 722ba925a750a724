"""The Mistral Vibe adapter against stores built here in both of Vibe's layouts, from invented content.

The captures in ``shared/fixtures/agents/vibe-*`` are checked by ``test_captures.py``; these
tests cover what they do not show: generations a glob would read twice, entries rewritten
by a later chunk, subagents, unknown entries, broken chunks, incremental legacy reads,
renames, hostile ids, the variables that move Vibe's home, and that nothing is written.
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.support.hostile import EVIL, _stub
from tests.support.items import append, cursor_of, events, last_session, notices, write
from tests.support.run import sha256_tree
from tests.support.samples.vibe import CWD, LEGACY_SID, legacy_lines, legacy_meta
from voyager_sessions.ingest.adapters.base import Notice, Source
from voyager_sessions.ingest.adapters.vibe import ADAPTER, probe

SID = "0b41f328-917a-a1d1-d081-e73dbc470da1"
T0 = 1_796_112_540_000  # epoch ms


# -- unified store builders --------------------------------------------------------------------


def _doc(path: Path, value: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value, ensure_ascii=False), encoding="utf-8")


def _chunk(folder: Path, entries: list[dict[str, Any]]) -> str:
    body = json.dumps(entries, ensure_ascii=False).encode()
    digest = hashlib.sha256(body).hexdigest()
    (folder / "chunks").mkdir(parents=True, exist_ok=True)
    (folder / "chunks" / f"{digest}.json").write_bytes(body)
    return digest


def message(eid: str, role: str, text: str, n: int, **extra: Any) -> dict[str, Any]:
    return {
        "type": "message",
        "id": eid,
        "role": role,
        "content": [{"type": "text", "text": text}],
        "createdAt": T0 + n,
        "updatedAt": T0 + n,
        "source": "turn_start" if role == "user" else "harness",
        **extra,
    }


def effect(
    eid: str,
    command: str,
    n: int,
    *,
    status: str = "completed",
    returncode: int | None = 0,
    stdout: str = "",
    stderr: str = "",
) -> dict[str, Any]:
    state: dict[str, Any] = {"status": status}
    if status not in ("running", "pending"):
        structured: dict[str, Any] = {"command": command, "stdout": stdout, "stderr": stderr}
        if returncode is not None:
            structured["returncode"] = returncode
        state["output"] = {
            "type": "success" if status == "completed" else "error",
            "content": [],
            "structured_content": structured,
        }
    return {
        "type": "effect",
        "id": eid,
        "createdAt": T0 + n,
        "updatedAt": T0 + n + 5,
        "detail": {
            "kind": "tool",
            "toolName": "file_system.bash",
            "input": {"command": command, "timeout_seconds": 120},
        },
        "state": state,
    }


def turn_one() -> list[dict[str, Any]]:
    return [
        message("user-1", "user", "迁移失败了 PROMPT_ONE_q1 — 请看看 ERR_MIGRATE_77", 1),
        {
            "type": "reasoning",
            "id": "reasoning-1",
            "text": "THINK_ONE_q1 look at the migration log",
            "summary": [],
            "createdAt": T0 + 2,
        },
        message("assistant-1", "assistant", "我来运行测试。", 3),
        effect("effect-1", "pytest -q tests/test_migrate.py", 4, returncode=1, stdout="TOOLOUT_ONE_q1 1 failed"),
        message("assistant-2", "assistant", "REPLY_ONE_q1 データベース移行を修正しました", 6),
    ]


class Unified:
    """A unified session folder written the way Vibe lays it out: generations, chunks, pointers."""

    def __init__(self, root: Path, sid: str = SID, folder_name: str | None = None) -> None:
        self.folder = root / "unified" / (folder_name or sid)
        self.sid = sid
        self.gen = 0

    def publish(
        self,
        entries: list[dict[str, Any]] | None,
        *,
        chunked: bool = True,
        split: int = 0,
        meta: dict[str, Any] | None = None,
        identity: dict[str, Any] | None = None,
        title: str | None = None,
        point: bool = True,
        fmt: str = "mistral.vibe.unified-session-store/v1",
        inline: list[dict[str, Any]] | None = None,
    ) -> str:
        """Write a new generation holding ``entries`` (in two chunks when ``split``), and point CURRENT at it."""
        self.gen += 8
        gen = f"{self.gen:016d}"
        gdir = self.folder / "generations" / gen
        chunks = None
        if chunked and entries is not None:
            parts = [entries[:split], entries[split:]] if split else [entries]
            chunks = [_chunk(self.folder, p) for p in parts]
        snapshot = {
            "format": "harness.public-session-state/v1",
            "session": {
                "id": self.sid,
                "createdAt": T0,
                "updatedAt": T0 + 99_000,
                "title": title,
                "titleSource": "auto",
                "tokenUsage": {"inputTokens": 300, "outputTokens": 60},
            },
            "history": {"entries": inline or [], "range": "latest"},
        }
        _doc(
            gdir / "projection-state.json",
            {"projection_state_version": 1, "session_id": self.sid, "snapshot": snapshot},
        )
        _doc(
            gdir / "runtime-state.json",
            {
                "identity": identity or {"kind": "root", "session_id": self.sid},
                "session_metadata": {"active_model": "mock", "cwd": CWD},
            },
        )
        # The model-context copy of the same conversation: never to be read.
        ck = _chunk(
            self.folder,
            [
                {
                    "message": {"role": "user", "content": [{"type": "text", "text": "STALE_CHECKPOINT"}]},
                    "source": "history",
                }
            ],
        )
        _doc(gdir / "checkpoint.json", {"checkpoint_version": 1, "context": {"messages": []}})
        _doc(
            gdir / "manifest.json",
            {
                "generation": gen,
                "manifest_version": 1,
                "session_id": self.sid,
                "checkpoint": {"chunks": [ck], "path": "checkpoint.json"},
                "projection_state": {"chunks": chunks, "path": "projection-state.json"},
                "runtime_state": {"chunks": None, "path": "runtime-state.json"},
            },
        )
        journal = self.folder / "journal" / f"{self.gen + 1:016d}.jsonl"
        journal.parent.mkdir(parents=True, exist_ok=True)
        journal.write_text(
            json.dumps(
                {
                    "type": "projection_delta",
                    "payload": {"delta": [{"op": "append_entry", "entry": message("j", "user", "STALE_JOURNAL", 0)}]},
                }
            )
            + "\n"
        )
        if meta is not None:
            _doc(self.folder / "meta.json", meta)
        if point:
            _doc(
                self.folder / "CURRENT",
                {
                    "generation": gen,
                    "session_id": self.sid,
                    "snapshot_sequence": self.gen,
                    "store_format": fmt,
                    "store_format_minor": 10,
                },
            )
        return gen


def meta_json(sid: str = SID, **extra: Any) -> dict[str, Any]:
    return {
        "session_id": sid,
        "parent_session_id": None,
        "start_time": "2026-12-01T08:09:00.351000+00:00",
        "end_time": "2026-12-01T08:09:05.865000+00:00",
        "git_branch": None,
        "environment": {"working_directory": CWD},
        "title": None,
        "title_source": "auto",
        "config": {"active_model": "mock", "model_name": "mistral-medium-3.5"},
        **extra,
    }


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return tmp_path / "vibe" / "logs" / "session"


def read_all(root: Path) -> list[Any]:
    out: list[Any] = []
    for src in ADAPTER.discover({"VOYAGER_VIBE_HOME": str(root.parent.parent)}):
        out.append(src)
        if isinstance(src, Source):
            out.extend(ADAPTER.read(src))
    return out


def sources(root: Path) -> list[Source]:
    return [s for s in ADAPTER.discover({"VOYAGER_VIBE_HOME": str(root.parent.parent)}) if isinstance(s, Source)]


# -- unified store -------------------------------------------------------------------------------


def test_unified_session_maps_every_kind_once(root: Path) -> None:
    u = Unified(root)
    u.publish(turn_one()[:2], meta=meta_json())  # an older generation: turn one, half
    u.publish(
        turn_one()
        + [
            message("user-6", "user", "第二轮 PROMPT_TWO_q1", 20),
            message("assistant-7", "assistant", "NOTE_TWO_q1 완료", 21),
        ],
        split=3,
        meta=meta_json(),
    )
    items = read_all(root)
    evs = events(items)
    texts = " ".join(e.text for e in evs)
    assert "STALE" not in texts  # neither the checkpoint copy nor the journal
    assert [(e.kind, e.origin) for e in evs] == [
        ("user", "human"),
        ("reasoning", "agent"),
        ("assistant", "agent"),
        ("tool_call", "agent"),
        ("tool_result", "tool"),
        ("assistant", "agent"),
        ("user", "human"),
        ("assistant", "agent"),
    ]
    assert [e.seq for e in evs] == list(range(8))
    call, result = evs[3], evs[4]
    assert call.text == "pytest -q tests/test_migrate.py" and call.tool == "file_system.bash"
    assert result.exit_code == 1 and result.call_id == call.call_id and "TOOLOUT_ONE_q1" in result.text
    assert evs[0].ts == pytest.approx((T0 + 1) / 1000)
    s = last_session(items)
    assert s.id == f"vibe:{SID}" and s.cwd == CWD and s.model == "mistral-medium-3.5"
    assert s.tokens_in == 300 and s.tokens_out == 60 and s.parent is None
    assert s.resume == f"cd {shlex.quote(CWD)} && vibe --resume {SID}"
    assert s.started == pytest.approx(T0 / 1000) and s.updated == pytest.approx((T0 + 99_000) / 1000)
    assert not notices(items)


def test_a_later_copy_of_an_entry_replaces_it_in_place(root: Path) -> None:
    u = Unified(root)
    running = effect("effect-9", "make build", 1, status="running")
    done = effect("effect-9", "make build", 1, returncode=0, stdout="BUILD_OK_77")
    u.publish(
        [message("u", "user", "build it", 0), running, message("a", "assistant", "started", 2), done],
        split=2,
        meta=meta_json(),
    )
    evs = events(read_all(root))
    assert [e.kind for e in evs] == ["user", "tool_call", "tool_result", "assistant"]
    assert evs[2].text == "BUILD_OK_77" and evs[2].exit_code == 0


def test_a_running_effect_has_no_result_and_a_failed_one_is_an_error(root: Path) -> None:
    u = Unified(root)
    u.publish(
        [
            effect("e1", "sleep 100", 1, status="running"),
            effect("e2", "false", 2, status="failed", returncode=None, stderr="boom"),
        ],
        meta=meta_json(),
    )
    evs = events(read_all(root))
    assert [e.kind for e in evs] == ["tool_call", "tool_call", "tool_result"]
    assert evs[2].is_error and evs[2].exit_code is None and evs[2].text == "boom"


def test_inline_history_when_the_manifest_lists_no_chunks(root: Path) -> None:
    u = Unified(root)
    u.publish(None, chunked=False, inline=turn_one(), meta=meta_json())
    assert [e.kind for e in events(read_all(root))][:2] == ["user", "reasoning"]


def test_a_subagent_session_links_its_parent_and_its_prompt_is_not_a_person(root: Path) -> None:
    parent = "11111111-2222-3333-4444-555555555555"
    u = Unified(root, sid="66666666-7777-8888-9999-000000000000")
    u.publish(
        [message("u", "user", "SUBTASK_q1 list the files", 0), message("a", "assistant", "done", 1)],
        identity={"kind": "subagent", "parent_session_id": parent},
    )  # no meta.json: Vibe writes none for one
    items = read_all(root)
    s = last_session(items)
    assert s.parent == f"vibe:{parent}" and s.cwd == CWD and s.model == "mock"
    assert s.resume.endswith(f"vibe --resume {parent}")
    assert events(items)[0].kind == "user" and events(items)[0].origin == "provider"


def test_unknown_entries_and_sources_are_named_and_kept_out_of_prompts(root: Path) -> None:
    u = Unified(root)
    u.publish(
        [
            message("u", "user", "real prompt", 0),
            message("q", "user", "queued by a loop", 1, source="scheduled_loop"),
            {"type": "hologram", "id": "h"},
            {"type": "notice", "id": "n", "text": "Context compacted", "createdAt": T0},
        ],
        meta=meta_json(),
    )
    items = read_all(root)
    evs = events(items)
    assert [(e.kind, e.origin) for e in evs] == [("user", "human"), ("meta", "provider"), ("meta", "provider")]
    [notice] = notices(items)
    assert "hologram" in notice.reason and "scheduled_loop" in notice.reason and "minor 10" in notice.reason


def test_a_broken_chunk_costs_that_chunk_only(root: Path) -> None:
    u = Unified(root)
    u.publish(turn_one(), split=2, meta=meta_json())
    manifest = json.loads(next(u.folder.glob("generations/*/manifest.json")).read_text())
    first = manifest["projection_state"]["chunks"][0]
    (u.folder / "chunks" / f"{first}.json").write_text('[{"type": "message", "id": "x", "ro')
    items = read_all(root)
    assert [e.kind for e in events(items)] == ["assistant", "tool_call", "tool_result", "assistant"]
    [notice] = notices(items)
    assert first in notice.source and not notice.fatal


def test_a_pointer_to_nowhere_or_an_unknown_format_fails_the_session_with_a_reason(root: Path) -> None:
    u = Unified(root)
    u.publish(turn_one(), meta=meta_json())
    _doc(u.folder / "CURRENT", {"generation": "../../../etc", "session_id": SID})
    [n] = [i for i in read_all(root) if isinstance(i, Notice)]
    assert n.fatal and "generation" in n.reason
    _doc(
        u.folder / "CURRENT",
        {"generation": "0000000000000099", "session_id": SID, "store_format": "mistral.vibe.unified-session-store/v1"},
    )
    [n] = [i for i in read_all(root) if isinstance(i, Notice)]
    assert n.fatal and n.transient
    u.publish(turn_one(), meta=meta_json(), fmt="mistral.vibe.unified-session-store/v2")
    [n] = [i for i in read_all(root) if isinstance(i, Notice)]
    assert n.fatal and "unified-session-store/v2" in n.reason


def test_a_folder_without_current_is_named_not_read(root: Path) -> None:
    (root / "unified" / SID / "chunks").mkdir(parents=True)
    items = read_all(root)
    assert not events(items) and len(notices(items)) == 1 and "CURRENT" in notices(items)[0].reason


@pytest.mark.parametrize("source, expected", [("manual", "user"), ("auto", "agent")])
def test_titles_and_who_gave_them(root: Path, source: str, expected: str) -> None:
    Unified(root).publish(turn_one(), meta=meta_json(title="数据库迁移排查", title_source=source))
    s = last_session(read_all(root))
    assert (s.title, s.title_source) == ("数据库迁移排查", expected)


def test_a_title_cut_from_the_first_prompt_is_the_prompts(root: Path) -> None:
    Unified(root).publish(turn_one(), meta=meta_json(title="迁移失败了 PROMPT_ONE_q1…", title_source="auto"))
    assert last_session(read_all(root)).title_source == "prompt"


def test_a_new_generation_is_read_once_current_points_at_it_and_costs_what_it_adds(home: Path, run) -> None:
    root = home / ".vibe" / "logs" / "session"
    u = Unified(root)
    u.publish(turn_one(), meta=meta_json())
    first = json.loads(run("scan", "--json").stdout)
    assert first["new"] == 1 and first["events_added"] == 6
    # A generation Vibe is still writing (CURRENT not moved yet) is invisible.
    u.publish(turn_one() + [message("user-6", "user", "PROMPT_TWO_q2", 20)], meta=None, point=False)
    assert json.loads(run("scan", "--json").stdout)["unchanged"] == 1
    u.gen -= 8
    u.publish(turn_one() + [message("user-6", "user", "PROMPT_TWO_q2", 20)], meta=meta_json())
    second = json.loads(run("scan", "--json").stdout)
    assert second["changed"] == 1 and second["events_added"] == 1 and second["events_removed"] == 0
    hits = run.json("search", "PROMPT_TWO_q2", "--json", "--no-refresh")["hits"]
    assert [(h["kind"], h["origin"], h["seq"]) for h in hits] == [("user", "human", 6)]
    assert len(run.json("search", "PROMPT_ONE_q1", "--json", "--no-refresh", "--kind", "user")["hits"]) == 1
    # A generation that rewrote an earlier entry: the session is replaced, not appended to.
    rewritten = turn_one()
    rewritten[4] = message("assistant-2", "assistant", "REPLY_REWRITTEN_q2", 6)
    u.publish(rewritten + [message("user-6", "user", "PROMPT_TWO_q2", 20)], meta=meta_json())
    third = json.loads(run("scan", "--json").stdout)
    assert third["events_added"] == 7 and third["events_removed"] == 7
    assert not run.json("search", "REPLY_ONE_q1", "--json", "--no-refresh")["hits"]
    assert run.json("list", "--json")["sessions"][0]["events"] == 7


def test_an_agent_title_is_searchable(home: Path, run) -> None:
    root = home / ".vibe" / "logs" / "session"
    Unified(root).publish(turn_one(), meta=meta_json(title="Zebrafish migration triage", title_source="auto"))
    run("scan")
    hits = run.json("search", "zebrafish", "--json", "--no-refresh")["hits"]
    assert [h["kind"] for h in hits] == ["title"]


# -- legacy logs -------------------------------------------------------------------------------------


def legacy_folder(root: Path, sid: str = LEGACY_SID) -> Path:
    return root / f"session_20261201_080914_{sid[:8]}"


def write_legacy(
    root: Path, lines: list[Any], *, sid: str = LEGACY_SID, meta: dict[str, Any] | None = None, raw_tail: bytes = b""
) -> Path:
    folder = legacy_folder(root, sid)
    write(folder / "messages.jsonl", lines, raw_tail=raw_tail)
    _doc(folder / "meta.json", meta or legacy_meta(sid))
    return folder / "messages.jsonl"


def test_legacy_session_maps_every_kind(root: Path) -> None:
    write_legacy(
        root,
        legacy_lines() + [{"role": "system", "content": "STALE_SYSTEM_PROMPT"}, {"role": "critic", "content": "?"}],
    )
    items = read_all(root)
    evs = events(items)
    assert [(e.kind, e.origin) for e in evs] == [
        ("user", "human"),
        ("reasoning", "agent"),
        ("assistant", "agent"),
        ("tool_call", "agent"),
        ("tool_result", "tool"),
        ("meta", "provider"),
        ("assistant", "agent"),
        ("tool_call", "agent"),
    ]
    assert evs[3].text == "echo TOOLOUT_L1 完成" and evs[3].call_id == "call_1" == evs[4].call_id
    assert evs[4].exit_code == 0 and evs[7].text == '{"pattern":"数据"}' and evs[7].tool == "grep"
    assert all(e.ts is None for e in evs)  # Vibe's legacy log has no per-message times: none are invented
    assert "STALE" not in " ".join(e.text for e in evs)
    s = last_session(items)
    assert s.id == f"vibe:{LEGACY_SID}" and s.cwd == CWD and s.git_branch == "main" and s.model == "mock-model"
    assert s.started == pytest.approx(1796112554.03429) and s.updated == pytest.approx(1796112558.03739)
    assert (s.tokens_in, s.tokens_out) == (300, 60)
    [notice] = notices(items)
    assert "critic" in notice.reason


def test_legacy_incremental_read_and_rename_through_the_cli(home: Path, run) -> None:
    root = home / ".vibe" / "logs" / "session"
    path = write_legacy(root, legacy_lines()[:3])
    assert json.loads(run("scan", "--json").stdout)["events_added"] == 5
    append(path, [{"role": "user", "content": "PROMPT2_L1 第二轮"}, {"role": "assistant", "content": "NOTE_L1"}])
    _doc(path.parent / "meta.json", legacy_meta(end_time="2026-12-01T09:00:00+00:00"))
    grown = json.loads(run("scan", "--json").stdout)
    assert grown["grown"] == 1 and grown["events_added"] == 2 and grown["events_removed"] == 0
    assert run.json("search", "PROMPT2_L1", "--json", "--no-refresh")["hits"][0]["origin"] == "human"
    # A rename rewrites meta.json only: the scan sees it and the title becomes searchable.
    _doc(path.parent / "meta.json", legacy_meta(title="Quokka rollout", title_source="manual"))
    renamed = json.loads(run("scan", "--json").stdout)
    assert renamed["grown"] == 1 and renamed["events_added"] == 0
    hits = run.json("search", "quokka", "--json", "--no-refresh")["hits"]
    assert [(h["kind"], h["origin"]) for h in hits] == [("title", "human")]
    assert run.json("list", "--json")["sessions"][0]["title"] == "Quokka rollout"


def test_legacy_half_written_last_line_is_read_again(root: Path) -> None:
    path = write_legacy(root, legacy_lines()[:1], raw_tail=b'{"role": "assistant", "content": "REPLY_HALF')
    src = sources(root)[0]
    items = list(ADAPTER.read(src))
    cur = cursor_of(items)
    assert cur.offset < path.stat().st_size and [e.kind for e in events(items)] == ["user"]
    with open(path, "ab") as fh:
        fh.write(b' done"}\n')
    more = list(ADAPTER.read(sources(root)[0], cur))
    assert [e.text for e in events(more)] == ["REPLY_HALF done"] and events(more)[0].seq == 1


def test_legacy_title_cut_from_the_prompt_is_the_prompts_even_after_a_resumed_read(root: Path) -> None:
    path = write_legacy(root, legacy_lines()[:1], meta=legacy_meta(title="PROMPT_L1 迁移…", title_source="auto"))
    cur = cursor_of(list(ADAPTER.read(sources(root)[0])))
    append(path, [{"role": "assistant", "content": "ok"}])
    assert last_session(list(ADAPTER.read(sources(root)[0], cur))).title_source == "prompt"


def test_single_file_sessions_of_vibe_1(root: Path) -> None:
    _doc(
        root / "session_20250101_101010_abcd1234.json",
        {"metadata": legacy_meta("abcd1234-0000-0000-0000-000000000000"), "messages": legacy_lines()[:3]},
    )
    items = read_all(root)
    assert last_session(items).id == "vibe:abcd1234-0000-0000-0000-000000000000"
    assert [e.kind for e in events(items)] == ["user", "reasoning", "assistant", "tool_call", "tool_result"]
    assert probe(sources(root)[0].path) == "single-file-1.x"


def test_a_session_in_both_layouts_is_read_once_from_the_unified_store(root: Path) -> None:
    Unified(root).publish(turn_one(), meta=meta_json())
    write_legacy(root, legacy_lines(), sid=SID)
    write_legacy(root, legacy_lines())  # another session, only in the legacy layout
    found = sources(root)
    assert {probe(s.path) for s in found} == {"unified-v1.10", "legacy-2.x"} and len(found) == 2
    assert [e.text for e in events(read_all(root))].count("REPLY_L1 完成") == 1


# -- where Vibe lives, hostile input, read-only --------------------------------------------------------


def test_voyager_vibe_home_is_authoritative_then_vibe_home_then_home(tmp_path: Path) -> None:
    for name in ("ours", "theirs", "home/.vibe"):
        Unified(tmp_path / name / "logs" / "session").publish(turn_one(), meta=meta_json())
    env = {
        "HOME": str(tmp_path / "home"),
        "VIBE_HOME": str(tmp_path / "theirs"),
        "VOYAGER_VIBE_HOME": str(tmp_path / "ours"),
    }
    assert [Path(s.path).parents[3].name for s in ADAPTER.discover(env)] == ["ours"]
    del env["VOYAGER_VIBE_HOME"]
    assert [Path(s.path).parents[3].name for s in ADAPTER.discover(env)] == ["theirs"]
    del env["VIBE_HOME"]
    assert [str(p) for p in ADAPTER.roots(env)] == [str(tmp_path / "home" / ".vibe" / "logs" / "session")]
    assert len(list(ADAPTER.discover(env))) == 1


HOSTILE_ID = 'x\'; rm -rf ~ $(touch /tmp/pwned) `id` "q" \nnext'
HOSTILE_CWD = "/tmp/a b/$(reboot)/`id`/'quote'/\nline;&|"


def test_resume_commands_quote_hostile_ids_and_paths(root: Path) -> None:
    Unified(root, sid=HOSTILE_ID, folder_name="f00d").publish(
        turn_one(), meta=meta_json(HOSTILE_ID, environment={"working_directory": HOSTILE_CWD})
    )
    write_legacy(
        root, legacy_lines(), meta=legacy_meta(HOSTILE_ID[::-1], environment={"working_directory": HOSTILE_CWD})
    )
    resumes = [i.resume for i in read_all(root) if hasattr(i, "resume")]
    assert len(resumes) >= 2
    for cmd in resumes:
        assert subprocess.run(["sh", "-n", "-c", cmd], capture_output=True).returncode == 0
        argv = shlex.split(cmd)
        assert argv[:2] == ["cd", HOSTILE_CWD] and argv[2] == "&&" and argv[3:5] == ["vibe", "--resume"]
        assert argv[5] in (HOSTILE_ID, HOSTILE_ID[::-1])


def test_scanning_changes_nothing_beside_the_stores(home: Path, run) -> None:
    root = home / ".vibe" / "logs" / "session"
    u = Unified(root)
    u.publish(turn_one()[:2], meta=meta_json())
    u.publish(turn_one(), meta=meta_json())
    write_legacy(root, legacy_lines())
    _doc(root / ".session_index.json", {legacy_folder(root).name: {"session_id": LEGACY_SID}})
    before = sha256_tree(home / ".vibe")
    listing = sorted(str(p) for p in (home / ".vibe").rglob("*"))
    assert run("scan").exit_code == 0
    assert sha256_tree(home / ".vibe") == before
    assert sorted(str(p) for p in (home / ".vibe").rglob("*")) == listing
    doc = run.json("doctor", "--json")
    report = next(p for p in doc["providers"] if p["provider"] == "vibe")
    assert report["indexed_sessions"] == 2 and report["shapes"] == {"unified-v1.10": 1, "legacy-2.x": 1}


def test_an_empty_store_is_quiet_and_a_fifo_never_blocks(home: Path, run) -> None:
    root = home / ".vibe" / "logs" / "session"
    (root / "unified").mkdir(parents=True)
    summary = json.loads(run("scan", "--json").stdout)
    assert summary["sessions"] == 0 and summary["failed"] == 0 and summary["skipped"] == []
    folder = legacy_folder(root)
    folder.mkdir()
    os.mkfifo(folder / "messages.jsonl")
    summary = json.loads(run("scan", "--json").stdout)
    assert any("FIFO" in s["reason"] for s in summary["skipped"])


def test_a_legacy_session_caught_before_its_meta_json_is_retried_not_guessed(home: Path, run) -> None:
    root = home / ".vibe" / "logs" / "session"
    path = write_legacy(root, legacy_lines())
    (path.parent / "meta.json").unlink()
    first = json.loads(run("scan", "--json").stdout)
    assert first["failed"] == 1 and first["sessions"] == 0
    _doc(path.parent / "meta.json", legacy_meta())
    second = json.loads(run("scan", "--json").stdout)
    assert second["failed"] == 0 and second["events_added"] == 8
    assert [s["session_id"] for s in run.json("list", "--json")["sessions"]] == [f"vibe:{LEGACY_SID}"]
    # The side index is enough to name it.
    (path.parent / "meta.json").unlink()
    _doc(root / ".session_index.json", {path.parent.name: {"session_id": LEGACY_SID, "cwd": CWD}})
    items = read_all(root)
    assert last_session(items).id == f"vibe:{LEGACY_SID}" and last_session(items).cwd == CWD


@pytest.mark.parametrize("evil", EVIL)
def test_resume_commands_run_the_agent_with_the_exact_id_in_the_exact_directory(tmp_path: Path, evil: str) -> None:
    pwned = tmp_path / "pwned"
    ident = evil.format(pwned=pwned)
    cwd = tmp_path / f"dir {ident}".replace("/", "_")
    cwd.mkdir()
    root = tmp_path / "vibe" / "logs" / "session"
    Unified(root, sid=ident, folder_name="f00d").publish(
        turn_one(), meta=meta_json(ident, environment={"working_directory": str(cwd)})
    )
    write_legacy(root, legacy_lines(), meta=legacy_meta(ident + " 2", environment={"working_directory": str(cwd)}))
    bin_dir, log = tmp_path / "bin", tmp_path / "argv.log"
    bin_dir.mkdir()
    _stub(bin_dir, "vibe", log)
    env = dict(os.environ, PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    for s in [i for i in read_all(root) if hasattr(i, "resume")]:
        proc = subprocess.run(["sh", "-c", s.resume], capture_output=True, text=True, env=env, timeout=30)
        assert proc.returncode == 0, (s.resume, proc.stderr)
    assert not pwned.exists()
    calls = [json.loads(line) for line in log.read_text().splitlines()]
    assert sorted(calls) == sorted([[str(cwd), "--resume", ident], [str(cwd), "--resume", ident + " 2"]])


def test_legacy_session_index_nested_too_deeply_costs_no_session(root: Path) -> None:
    # .session_index.json is shared by every legacy session: nesting 1,000 deep in it raised RecursionError
    # out of each of their reads.
    write_legacy(root, legacy_lines())
    (root / ".session_index.json").write_text('{"other": {"x": ' + "[" * 1000 + "]" * 1000 + "}}")
    items = read_all(root)
    assert len(events(items)) == 8 and last_session(items).cwd == CWD


def test_legacy_arguments_nested_too_deeply_are_kept_as_written(root: Path) -> None:
    # A tool call's arguments are a JSON string; one nested 1,000 deep raised RecursionError out of the read.
    lines = legacy_lines()
    deep = '{"pattern": ' + "[" * 1000 + "]" * 1000 + "}"
    lines[4]["tool_calls"][0]["function"]["arguments"] = deep
    write_legacy(root, lines)
    evs = events(read_all(root))
    assert evs[-1].text == deep and evs[-1].tool == "grep" and len(evs) == 8


def test_a_source_or_status_that_is_a_list_or_an_object_costs_only_its_entry(root: Path) -> None:
    # Both were tested against frozensets: a list or an object raised TypeError (unhashable) out of the read.
    odd_status = effect("e9", "ls", 7)
    odd_status["state"]["status"] = ["completed"]
    Unified(root).publish(
        turn_one() + [message("u9", "user", "ODD_SOURCE", 8, source={"s": 1}), odd_status], meta=meta_json()
    )
    texts = [e.text for e in events(read_all(root))]
    assert texts[0].startswith("迁移失败了 PROMPT_ONE_q1") and "ODD_SOURCE" in texts and "ls" in texts


def test_an_exit_code_beyond_64_bits_is_no_exit_code(root: Path) -> None:
    # int_or_none passed 2**80 on: encoding the read's events for its digest raised OverflowError (adapter error).
    from voyager_sessions.ingest.adapters._common import int_or_none

    assert int_or_none(2**80) is None and int_or_none(-(2**63)) == -(2**63) and int_or_none(True) is None
    Unified(root).publish([effect("e1", "make", 1, returncode=2**80, stdout="HUGE_CODE")], meta=meta_json())
    result = [e for e in events(read_all(root)) if e.kind == "tool_result"]
    assert [(r.text, r.exit_code) for r in result] == [("HUGE_CODE", None)]
