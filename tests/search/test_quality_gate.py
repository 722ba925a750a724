"""The quality gate: planted needles in every kind of event, found exactly where planted and nowhere else.

A generated corpus (Claude Code and Codex sessions in their real formats) gets rare
English words, identifiers and two-character CJK pairs planted in user prompts,
assistant text, reasoning, tool-call arguments and tool output. Every needle must be
found in its own event and session (recall 100%), no needle query may return another
session (precision 100%), and a CJK pair planted only apart must return nothing.
"""

from __future__ import annotations

import pytest

import synth
from voyager_sessions.api import Reader
from voyager_sessions.core.paths import DataDir
from voyager_sessions.scan import scan
from voyager_sessions.search.engine import SearchOptions


def _cjk_pair(m: int) -> str:
    """A two-character needle, unique per ``m``, from blocks the generator's word pools never use."""
    j = m // 3
    if m % 3 == 0:
        return chr(0x3400 + 2 * j) + chr(0x3401 + 2 * j)  # CJK Extension A
    if m % 3 == 1:
        return chr(0x30A1 + 2 * j) + chr(0x30A2 + 2 * j)  # katakana ァア, ィイ, …
    return chr(0xC000 + 2 * j) + chr(0xC001 + 2 * j)  # Hangul syllables


PLACES = ("user", "assistant", "reasoning", "tool_call", "tool_result")


def _plant(conv: synth.Conversation, place: str, needle: str) -> None:
    users = [t for t in conv.turns if t.role == "user"]
    assistants = [t for t in conv.turns if t.role == "assistant"]
    if place == "user":
        users[len(users) // 2].text += f" {needle} please"
    elif place == "assistant":
        assistants[0].text += f" so {needle} it is"
    elif place == "reasoning":
        t = next(t for t in assistants if t.reasoning)
        t.reasoning += f" considering {needle}"
    else:
        t = next(t for t in assistants if t.tool_calls)
        call = t.tool_calls[0]
        if place == "tool_call":
            call.input = {**call.input, "command": call.input["command"] + f" --tag {needle}"}
        else:
            call.output = (call.output or "") + f"\nresult line with {needle} inside"


@pytest.fixture(scope="module")
def planted(tmp_path_factory):

    home = tmp_path_factory.mktemp("gate")
    env = {
        "HOME": str(home),
        "VOYAGER_CLAUDE_HOME": str(home / "claude"),
        "VOYAGER_CODEX_HOME": str(home / "codex"),
        "VOYAGER_OPENCODE_DB": str(home / "none.db"),
    }
    needles: list[tuple[str, str, str]] = []  # (query, session id, kind)
    apart: list[str] = []
    n_sessions = 10
    for i in range(n_sessions):
        conv = synth.generate(seed=900 + i, messages=40, output_bytes=300)
        provider = "claude" if i % 2 == 0 else "codex"
        sid = f"{provider}:{conv.id}"
        for j, place in enumerate(PLACES):
            word = f"zq{i}x{j}wombat"
            ident = f"ERR_NEEDLE_{i:03d}{j:02d}"
            k = i * len(PLACES) + j
            cjk = _cjk_pair(k // 2) if k % 2 == 0 else None
            _plant(conv, place, f"{word} {ident}" + (f" 在{cjk}里" if cjk else ""))
            needles.append((word, sid, place))
            needles.append((ident, sid, place))
            if cjk:
                needles.append((cjk, sid, place))
        # A pair planted only apart in this session: first char, other text, second char.
        a, b = chr(0xB000 + 2 * i), chr(0xB001 + 2 * i)
        conv.turns[0].text += f" {a} 然后 {b}"
        apart.append(a + b)
        if provider == "claude":
            synth.write_claude(conv, home / "claude" / "projects")
        else:
            synth.write_codex(conv, home / "codex")
    ddir = home / "data"
    summary = scan(ddir, env, providers=["claude", "codex"])
    assert summary.new == n_sessions and not summary.skipped
    s = Reader(DataDir(ddir))
    yield s, needles, apart
    s.close()


def test_recall_and_precision(planted):
    s, needles, _ = planted
    misses, wrong = [], []
    for query, sid, kind in needles:
        res = s.search(query, SearchOptions(limit=50))
        hits = res.hits
        if not any(h.session_id == sid and h.kind == kind for h in hits):
            misses.append((query, sid, kind, [(h.session_id, h.kind) for h in hits]))
        if any(h.session_id != sid for h in hits):
            wrong.append((query, sid, [h.session_id for h in hits]))
    assert not misses, f"recall < 100%: {misses[:5]}"
    assert not wrong, f"precision < 100%: {wrong[:5]}"


def test_neighbouring_identifiers_do_not_match(planted):
    s, _, _ = planted
    assert s.search("ERR_NEEDLE_00000").total >= 1
    assert s.search("ERR_NEEDLE_0000").total == 0
    assert s.search("ERR_NEEDLE_99999").total == 0


def test_cjk_pairs_planted_apart_return_nothing(planted):
    s, _, apart = planted
    for pair in apart:
        res = s.search(pair)
        assert res.total == 0, (pair, [h.snippet for h in res.hits])
        # ...while each character alone is found.
        assert s.search(pair[0]).total >= 1 and s.search(pair[1]).total >= 1


def test_snippet_highlights_the_needle(planted):
    s, needles, _ = planted
    for query, sid, _kind in needles[:30]:
        hit = next(h for h in s.search(query).hits if h.session_id == sid)
        assert any(hit.snippet[a:b].lower() == query.lower() for a, b in hit.highlights), (query, hit.snippet)
