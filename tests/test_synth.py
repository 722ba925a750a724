"""The synthetic writers (byte-realistic, deterministic, read back by the adapters) and the demo corpus."""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

import synth
from synth import cline as synth_cline
from tests.support.captures import CAPTURES
from voyager_sessions.core.model import Event, Session
from voyager_sessions.demo import CORPUS
from voyager_sessions.ingest.adapters import claude, cline, codex
from voyager_sessions.ingest.adapters.base import Adapter, Cursor, Notice, Source, fingerprint


def read(adapter: Adapter, path: Path) -> list[Any]:
    src = Source(provider=adapter.name, path=str(path), fingerprint=fingerprint(path), append_only=True)
    return list(adapter.read(src))


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def expected_counts(conv: synth.Conversation) -> Counter[str]:
    """What an adapter must find in a written Conversation, by event kind."""
    counts: Counter[str] = Counter()
    for turn in conv.turns:
        if turn.role == "user":
            counts["user"] += 1
            continue
        counts["assistant"] += bool(turn.text)
        counts["reasoning"] += bool(turn.reasoning)
        counts["tool_call"] += len(turn.tool_calls)
        counts["tool_result"] += sum(c.output is not None for c in turn.tool_calls)
    return +counts


def sample(title: str | None = "Sample session") -> synth.Conversation:
    conv = synth.generate(11, 30, cwd="/home/dev/sample.project", session_id="6d1f0a2b-3c4d-4e5f-8a6b-7c8d9e0f1a2b")
    conv.title = title
    conv.git_branch = "main"
    conv.git_repo = "git@example.com:dev/sample.git"
    # A tool still running (no output yet) and a non-shell tool, beside the generated Bash calls.
    conv.turns[3].tool_calls.append(synth.ToolCall(call_id="call_running", name="Bash", input={"command": "sleep 600"}))
    conv.turns[5].tool_calls.append(
        synth.ToolCall(call_id="call_read", name="Read", input={"file_path": "a.py"}, output="print('hi')")
    )
    return conv


# -- determinism -----------------------------------------------------------------------------------


def test_generate_is_deterministic() -> None:
    assert synth.generate(3, 20) == synth.generate(3, 20)
    assert synth.generate(3, 20) != synth.generate(4, 20)


@pytest.mark.parametrize("writer", ["claude", "codex"])
def test_writers_are_deterministic(tmp_path: Path, writer: str) -> None:
    write = synth.write_claude if writer == "claude" else synth.write_codex
    a = write(sample(), tmp_path / "a")
    b = write(sample(), tmp_path / "b")
    assert a.relative_to(tmp_path / "a") == b.relative_to(tmp_path / "b")
    assert sha(a) == sha(b)
    # Streaming the turns from an iterator writes the same bytes.
    conv = sample()
    c = write(conv, tmp_path / "c", turns=iter(list(conv.turns)))
    assert sha(c) == sha(a)


def test_iso_z() -> None:
    assert synth.iso_z(1793610001.5) == "2026-11-02T09:00:01.500Z"
    assert synth.iso_z(1793610001.9996) == "2026-11-02T09:00:02.000Z"


# -- Claude Code format ------------------------------------------------------------------------------


def test_claude_file_layout_and_fields(tmp_path: Path) -> None:
    conv = sample()
    path = synth.write_claude(conv, tmp_path / "projects")
    assert path == tmp_path / "projects" / "-home-dev-sample-project" / f"{conv.id}.jsonl"
    lines = [json.loads(line) for line in path.read_bytes().splitlines()]
    *records, summary = lines
    assert summary == {"type": "summary", "summary": "Sample session", "leafUuid": records[-1]["uuid"]}
    previous = None
    for rec in records:
        assert rec["parentUuid"] == previous, "uuid/parentUuid form one chain"
        previous = rec["uuid"]
        assert rec["sessionId"] == conv.id and rec["cwd"] == conv.cwd and rec["gitBranch"] == "main"
        assert rec["isSidechain"] is False and rec["userType"] == "external" and rec["version"]
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", rec["timestamp"])
        assert rec["type"] in ("user", "assistant")
        if rec["type"] == "assistant":
            assert len(rec["message"]["content"]) == 1, "one content block a line, as Claude Code splits them"
            assert rec["message"]["model"] == conv.model and rec["message"]["id"].startswith("msg_")
        elif isinstance(rec["message"]["content"], list):
            assert rec["message"]["content"][0]["type"] == "tool_result" and "toolUseResult" in rec
    assert len({r["uuid"] for r in records}) == len(records)
    blocks = Counter(r["message"]["content"][0]["type"] for r in records if r["type"] == "assistant")
    assert blocks["thinking"] == sum(bool(t.reasoning) for t in conv.turns)


def test_claude_round_trip(tmp_path: Path) -> None:
    conv = sample()
    items = read(claude.ADAPTER, synth.write_claude(conv, tmp_path / "projects"))
    events = [i for i in items if isinstance(i, Event)]
    assert +Counter(e.kind for e in events) == expected_counts(conv)
    assert {e.origin for e in events if e.kind == "user"} == {"human"}
    assert [e.text for e in events if e.kind == "user"] == [t.text for t in conv.turns if t.role == "user"]
    calls = {c.call_id: c for t in conv.turns for c in t.tool_calls}
    for e in events:
        if e.kind == "tool_result":
            assert e.exit_code is None, "Claude records no exit code"
            assert e.is_error == (calls[e.call_id].exit_code not in (None, 0))
    assert "call_running" not in {e.call_id for e in events if e.kind == "tool_result"}
    session = [i for i in items if isinstance(i, Session)][-1]
    assert (session.title, session.cwd, session.model, session.git_branch) == (
        "Sample session",
        conv.cwd,
        conv.model,
        "main",
    )
    assert not [i for i in items if isinstance(i, Notice)]


# -- Codex format ----------------------------------------------------------------------------------


def test_codex_file_layout_and_fields(tmp_path: Path) -> None:
    conv = sample()
    path = synth.write_codex(conv, tmp_path / "codex")
    assert path.parent == tmp_path / "codex" / "sessions" / "2026" / "09" / "21"
    assert re.fullmatch(rf"rollout-\d{{4}}-\d\d-\d\dT\d\d-\d\d-\d\d-{conv.id}\.jsonl", path.name)
    lines = [json.loads(line) for line in path.read_bytes().splitlines()]
    assert all(set(line) == {"timestamp", "type", "payload"} for line in lines)
    assert lines[0]["type"] == "session_meta" and lines[0]["payload"]["id"] == conv.id
    assert lines[0]["payload"]["git"]["repository_url"] == conv.git_repo
    assert lines[1]["payload"]["content"][0]["text"].startswith("<environment_context>")
    kinds = Counter((ln["type"], ln["payload"].get("type")) for ln in lines)
    prompts = sum(t.role == "user" for t in conv.turns)
    assert kinds[("event_msg", "user_message")] == prompts
    assert kinds[("turn_context", None)] == prompts
    assert kinds[("event_msg", "agent_message")] == sum(bool(t.text) for t in conv.turns if t.role == "assistant")
    assert kinds[("event_msg", "token_count")] == sum(t.role == "assistant" for t in conv.turns)
    for line in lines:
        if line["payload"].get("type") == "function_call_output" and line["payload"]["call_id"] != "call_read":
            assert isinstance(json.loads(line["payload"]["output"])["metadata"]["exit_code"], int)
    index = (tmp_path / "codex" / "session_index.jsonl").read_text().splitlines()
    assert [json.loads(i)["thread_name"] for i in index] == ["Sample session"]


def test_codex_round_trip(tmp_path: Path) -> None:
    conv = sample()
    items = read(codex.ADAPTER, synth.write_codex(conv, tmp_path / "codex"))
    events = [i for i in items if isinstance(i, Event)]
    # Everything Codex says twice is found once; the environment context is the one meta event.
    assert +Counter(e.kind for e in events) == expected_counts(conv) + Counter(meta=1)
    assert [e.text for e in events if e.kind == "user"] == [t.text for t in conv.turns if t.role == "user"]
    calls = {c.call_id: c for t in conv.turns for c in t.tool_calls}
    results = {e.call_id: e for e in events if e.kind == "tool_result"}
    assert set(results) == {cid for cid, c in calls.items() if c.output is not None}
    for cid, event in results.items():
        assert event.exit_code == calls[cid].exit_code and event.text == calls[cid].output
    session = [i for i in items if isinstance(i, Session)][-1]
    assert (session.title, session.cwd, session.model, session.git_repo) == (
        "Sample session",
        conv.cwd,
        conv.model,
        conv.git_repo,
    )
    assert not [i for i in items if isinstance(i, Notice)]


def test_codex_without_title_writes_no_index(tmp_path: Path) -> None:
    synth.write_codex(sample(title=None), tmp_path / "codex")
    assert not (tmp_path / "codex" / "session_index.jsonl").exists()


def test_big_sessions_stream_through(tmp_path: Path) -> None:
    conv = synth.generate(5, 2000)
    for adapter, path in (
        (claude.ADAPTER, synth.write_claude(conv, tmp_path / "p")),
        (codex.ADAPTER, synth.write_codex(conv, tmp_path / "c")),
    ):
        items = read(adapter, path)
        events = [i for i in items if isinstance(i, Event)]
        assert [e.seq for e in events] == list(range(len(events)))
        assert +Counter(e.kind for e in events if e.kind != "meta") == expected_counts(conv)
        assert isinstance(items[-1], Cursor) and items[-1].offset == path.stat().st_size


# -- Cline CLI format (one JSON document rewritten whole) ---------------------------------------------


def cline_read(path: Path) -> list[Any]:
    src = Source(provider="cline", path=str(path), fingerprint=fingerprint(path), append_only=False)
    return list(cline.ADAPTER.read(src))


def shape(value: Any) -> Any:
    """Keys (in order) and value types, lists by their first item: what a document looks like without its text."""
    if isinstance(value, dict):
        return [(k, shape(v)) for k, v in value.items()]
    if isinstance(value, list):
        return [shape(value[0])] if value else []
    return type(value).__name__


def test_cline_file_layout_and_fields(tmp_path: Path) -> None:
    conv = sample()
    path = synth_cline.write_cline(conv, tmp_path / "data")
    sid = path.parent.name
    assert re.fullmatch(r"\d{13}_[a-z0-9]{5}", sid) and sid == synth_cline.session_id(conv)
    assert path == tmp_path / "data" / "sessions" / sid / f"{sid}.messages.json"
    assert sorted(p.name for p in path.parent.iterdir()) == [f"{sid}.json", f"{sid}.messages.json"]
    raw = path.read_bytes()
    doc = json.loads(raw)
    # JSON.stringify(doc, null, 2) and a newline, as the CLI writes it.
    assert raw == (json.dumps(doc, ensure_ascii=False, indent=2) + "\n").encode()
    assert doc["sessionId"] == sid and doc["origin"]["version"] == synth_cline.CLINE_VERSION
    msgs = doc["messages"]
    assert len({m["id"] for m in msgs}) == len(msgs)
    prompts = [m for m in msgs if m["role"] == "user" and m["content"][0]["type"] == "text"]
    assert [m["content"][0]["text"] for m in prompts] == [
        f'<user_input mode="act">{t.text}</user_input>' for t in conv.turns if t.role == "user"
    ]
    assert [m["ts"] for m in msgs] == sorted(m["ts"] for m in msgs)
    man = json.loads(path.with_name(f"{sid}.json").read_bytes())
    first = next(t.text for t in conv.turns if t.role == "user")
    assert (man["session_id"], man["cwd"], man["prompt"]) == (sid, conv.cwd, first)
    assert man["metadata"]["title"] == first[:120], "no title call: the first prompt, cut"
    assert man["messages_path"] == str(path)


def test_cline_shape_is_the_captures(tmp_path: Path) -> None:
    """Every record kind the capture holds has its shape here: keys in the CLI's order, values of its types."""
    real_dir = CAPTURES / "cline-3.0.65" / ".cline" / "data" / "sessions" / "1796113544695_44rte"
    real = json.loads((real_dir / "1796113544695_44rte.messages.json").read_bytes())
    real_manifest = json.loads((real_dir / "1796113544695_44rte.json").read_bytes())
    conv = synth.generate(11, 12)  # message 3 runs a shell command, as in the capture
    path = synth_cline.write_cline(conv, tmp_path / "data")
    doc = json.loads(path.read_bytes())
    assert shape({**doc, "messages": []}) == shape({**real, "messages": []})
    kinds = lambda d: {json.dumps(shape(m)) for m in d["messages"]}  # noqa: E731
    assert kinds(real) <= kinds(doc)
    ours = json.loads(path.with_name(f"{path.parent.name}.json").read_bytes())
    # The capture's manifest also carries the hub's stale-session marker (terminal_marker*): not every session has it.
    real_meta = {k: v for k, v in real_manifest["metadata"].items() if not k.startswith("terminal_marker")}
    assert shape({**ours, "metadata": {}}) == shape({**real_manifest, "metadata": {}})
    assert shape(ours["metadata"]) == shape(real_meta)


def test_cline_round_trip(tmp_path: Path) -> None:
    conv = sample()
    conv.turns[9].tool_calls[0].exit_code = 2  # one failing command beside the passing ones
    path = synth_cline.write_cline(conv, tmp_path / "data")
    items = cline_read(path)
    events = [i for i in items if isinstance(i, Event)]
    assert +Counter(e.kind for e in events) == expected_counts(conv)
    assert {e.origin for e in events if e.kind == "user"} == {"human"}
    assert [e.text for e in events if e.kind == "user"] == [t.text for t in conv.turns if t.role == "user"]
    calls = {c.call_id: c for t in conv.turns for c in t.tool_calls}
    results = {e.call_id: e for e in events if e.kind == "tool_result"}
    assert set(results) == {cid for cid, c in calls.items() if c.output is not None}
    for cid, event in results.items():
        call = calls[cid]
        failed = call.exit_code not in (None, 0)
        # The CLI records an exit code only in a failing command's text.
        assert event.exit_code == (call.exit_code if failed else None) and event.is_error == failed
        assert event.text.startswith(call.output or "")
    assert sorted(e.exit_code for e in results.values() if e.is_error) == [2]
    assert [e.seq for e in events] == list(range(len(events)))
    session = [i for i in items if isinstance(i, Session)][-1]
    first = next(t.text for t in conv.turns if t.role == "user")
    assert (session.native_id, session.title, session.cwd, session.model) == (
        path.parent.name,
        first[:120],
        conv.cwd,
        conv.model,
    )
    assert session.started == conv.started and session.resume == f"cline --id {path.parent.name}"
    assert not [i for i in items if isinstance(i, Notice)]


def test_cline_rewrite_keeps_the_earlier_messages(tmp_path: Path) -> None:
    """Writing n turns, then n + 1, rewrites the same n messages and adds the new one, as the CLI does."""
    conv = sample()
    path = synth_cline.write_cline(conv, tmp_path / "data", turns=conv.turns[:-1])
    before = json.loads(path.read_bytes())["messages"]
    assert synth_cline.write_cline(conv, tmp_path / "data") == path
    after = json.loads(path.read_bytes())["messages"]
    assert after[: len(before)] == before and len(after) > len(before)
    again = synth_cline.write_cline(conv, tmp_path / "again")
    assert sha(again) == sha(path), "deterministic"


def test_cline_scan_finds_every_kind(home: Path, run) -> None:
    """``voyager scan`` reads the written session from the CLI's default store, each kind where it belongs."""
    conv = sample()
    conv.turns[4].text += " vgrclineneedle"
    synth_cline.write_cline(conv, home / ".cline" / "data")
    summary = json.loads(run("scan", "--json").stdout)
    assert summary["providers"]["cline"] == 1 and summary["failed"] == 0 and summary["skipped"] == []
    assert summary["events_added"] == sum(expected_counts(conv).values())
    hits = run.json("search", "vgrclineneedle", "--json", "--no-refresh")["hits"]
    assert [(h["provider"], h["kind"], h["origin"]) for h in hits] == [("cline", "user", "human")]
    for kind in ("assistant", "reasoning", "tool_call", "tool_result"):
        found = run.json("search", f"kind:{kind}", "--json", "--no-refresh", "--limit", "100")
        assert found["total"] == expected_counts(conv)[kind], kind


# -- the bundled demo corpus ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def demo() -> dict[str, list[Any]]:
    """Every demo source read by its adapter, keyed by path."""
    env = {"CLAUDE_CONFIG_DIR": str(CORPUS / "claude"), "CODEX_HOME": str(CORPUS / "codex"), "HOME": "/nonexistent"}
    out: dict[str, list[Any]] = {}
    for adapter in (claude.ADAPTER, codex.ADAPTER):
        for src in adapter.discover(env):
            assert isinstance(src, Source)
            out[src.path] = list(adapter.read(src))
    return out


def demo_text(items: list[Any]) -> str:
    return "\n".join(i.text for i in items if isinstance(i, Event))


def test_demo_corpus_reads_without_notices(demo: dict[str, list[Any]]) -> None:
    assert Counter(Path(p).suffix for p in demo) == Counter({".jsonl": 7})
    assert sum("/claude/" in p for p in demo) == 5 and sum("/codex/" in p for p in demo) == 2
    for path, items in demo.items():
        assert [i for i in items if isinstance(i, Notice)] == [], path
        assert Path(path).stat().st_size < 30_000, path
        assert any(isinstance(i, Event) and i.kind == "user" and i.origin == "human" for i in items), path
    assert (CORPUS / "README.txt").is_file()


def test_demo_corpus_has_the_advertised_hits(demo: dict[str, list[Any]]) -> None:
    texts = {path: demo_text(items) for path, items in demo.items()}

    def holding(word: str) -> set[str]:
        return {
            Path(p).parent.name if "/claude/" in p else "codex:" + Path(p).name[-14:-6]
            for p, t in texts.items()
            if word in t
        }

    assert holding("数据库") == {"-home-dev-shop-backend"}
    apart = [t for p, t in texts.items() if "数" in t and "据" in t and "数据" not in t]
    assert len(apart) == 1, "one session has 数 and 据 only apart"
    assert holding("データベース") == {"-home-dev-blog-engine"} and "テスト" in "".join(texts.values())
    assert holding("데이터베이스 연결 오류") == {"-home-dev-chat-server"}
    assert len(holding("parse_config_v2")) == 2
    assert len(holding("'NoneType' object is not subscriptable")) == 1
    failing = [
        e
        for items in demo.values()
        for e in items
        if isinstance(e, Event) and e.kind == "tool_result" and "ERR_CONN_REFUSED_42" in e.text
    ]
    assert [e.exit_code for e in failing] == [1]
    titles = {s.title for items in demo.values() for s in items if isinstance(s, Session)}
    assert "Debug ERR_CONN_REFUSED_42 in webhook tests" in titles, "the Codex title comes from session_index.jsonl"
