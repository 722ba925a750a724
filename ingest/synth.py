"""Synthetic sessions in real provider formats, for tests, the bench and the demo.

One neutral description of a conversation (``Conversation`` of ``Turn``s with
``ToolCall``s) is generated deterministically from a seed, then written in each
agent's real on-disk format by a writer function (``write_claude``, ``write_codex``
here; OpenCode's SQLite shapes in ``voyager.ingest.synth_opencode``). Tests and the
bench share these builders so a format is described once. Everything written is
invented text: no real person's data.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Literal

import msgspec


class ToolCall(msgspec.Struct, kw_only=True):
    """A tool the assistant ran: its input, and its output when it finished."""

    call_id: str
    name: str
    input: dict
    output: str | None = None
    exit_code: int | None = None
    is_error: bool = False


class Turn(msgspec.Struct, kw_only=True):
    """One message: a person's prompt (``user``) or the assistant's reply with optional reasoning and tools."""

    role: Literal["user", "assistant"]
    text: str
    ts: float
    reasoning: str | None = None
    tool_calls: list[ToolCall] = []


class Conversation(msgspec.Struct, kw_only=True):
    """A whole session in provider-neutral form."""

    id: str
    cwd: str
    title: str | None
    model: str
    started: float
    turns: list[Turn]
    git_branch: str | None = None


# Word pools for generated prose: English, code, Chinese, Japanese, Korean.
_EN = (
    "the index stores every event and the query planner picks the cheapest path while tests keep the "
    "parser honest about quoting rules retries backoff cache schema migration latency throughput"
).split()
_CODE = ["def", "return", "self.conn", "import", "pytest", "src/store/db.py", "foo.bar()", "my_var", "--verbose", "None"]
_ZH = ["我们", "需要", "检查", "索引", "配置", "然后", "运行", "测试", "文件", "错误", "修复", "性能"]
_JA = ["インデックス", "を", "確認", "して", "ください", "テスト", "が", "失敗", "しました", "設定"]
_KO = ["인덱스를", "확인", "하고", "테스트를", "실행", "합니다", "설정", "오류", "수정"]


def prose(rng: random.Random, words: int) -> str:
    """A sentence-ish run of mixed-language words; deterministic for a given ``rng`` state."""
    pools = (_EN, _EN, _CODE, _ZH, _JA, _KO)
    out = []
    for _ in range(words):
        out.append(rng.choice(rng.choice(pools)))
    return " ".join(out)


def generate(seed: int, messages: int, *, session_id: str | None = None, start: float = 1_790_000_000.0,
             output_bytes: int = 400, cwd: str = "/home/dev/project") -> Conversation:
    """A deterministic conversation of ``messages`` messages (user and assistant alternate).

    Every third assistant message runs a tool whose output is about ``output_bytes`` long;
    every other one carries reasoning. Same seed, same conversation, on every machine.
    """
    rng = random.Random(seed)
    sid = session_id or f"{rng.getrandbits(32):08x}-{rng.getrandbits(16):04x}-4{rng.getrandbits(12):03x}-a{rng.getrandbits(12):03x}-{rng.getrandbits(48):012x}"
    turns: list[Turn] = []
    ts = start
    for i in range(messages):
        ts += rng.uniform(1.0, 30.0)
        if i % 2 == 0:
            turns.append(Turn(role="user", text=prose(rng, rng.randint(5, 30)), ts=ts))
            continue
        calls = []
        if i % 3 == 0:
            out = []
            size = 0
            while size < output_bytes:
                line = prose(rng, 12)
                out.append(line)
                size += len(line) + 1
            calls.append(
                ToolCall(
                    call_id=f"call_{seed}_{i}",
                    name="Bash",
                    input={"command": f"pytest -q tests/test_{i}.py"},
                    output="\n".join(out),
                    exit_code=rng.choice([0, 0, 0, 1]),
                )
            )
        turns.append(
            Turn(
                role="assistant",
                text=prose(rng, rng.randint(10, 60)),
                ts=ts,
                reasoning=prose(rng, 20) if i % 4 == 1 else None,
                tool_calls=calls,
            )
        )
    return Conversation(id=sid, cwd=cwd, title=None, model="synthetic-model-1", started=start, turns=turns)


def iter_turns(conv: Conversation) -> Iterator[Turn]:
    """The turns in order (a hook for writers that stream)."""
    yield from conv.turns
