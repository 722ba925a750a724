"""The judged corpus: ``topics`` made into deterministic sessions, written in real agents' formats.

Owns the shape of a judged session (the remembered turns spread over a prompt, a tool
output and a closing reply, with ordinary filler turns around them), its id (derived
from its key, so a query names its target by key), and where each is written: Claude
Code JSONL, Codex JSONL and an OpenCode v1 database, laid out under one fake HOME exactly
where the agents (and so Voyager and fast-resume, with no overrides) look for them. The
bytes come from ``synth``'s writers; nothing here knows a format.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from pathlib import Path

import synth
from bench.corpus import write_opencode_v1
from bench.judged import topics as T

#: The formats sessions are written in, in rotation (near-duplicates of one topic land in different ones).
PROVIDERS: tuple[str, ...] = ("claude", "codex", "opencode")
#: 2026-06-01 UTC: sessions spread over about five months after it.
EPOCH = 1_780_272_000.0
PROJECTS = ("shop-backend", "billing", "platform", "web-app", "data-pipeline", "infra", "mobile-api", "tools")


@dataclass(frozen=True)
class JudgedSession:
    key: str  # "<topic>/<variant>" ("webhook-retries/0"), or "distractor/<n>"
    lang: str  # "en", "zh", "ja"
    provider: str
    conv: synth.Conversation

    def text(self) -> str:
        """Everything the session says, for the invariants the tests check (prompts, outputs, replies, commands)."""
        parts: list[str] = []
        for t in self.conv.turns:
            parts += [t.text, t.reasoning or ""]
            for c in t.tool_calls:
                parts += [str(c.input.get("command", "")), c.output or ""]
        return "\n".join(parts)


def _fill(template: str, a: str, b: str = "", c: str = "") -> str:
    # replace(), not format(): the templates hold braces of their own (JSON, shell).
    return template.replace("{a}", a).replace("{b}", b).replace("{c}", c)


class _Builder:
    """Turns for one session: deterministic from the session's key."""

    def __init__(self, key: str, lang: str, start: float) -> None:
        self.rng = random.Random(f"judged:{key}")
        self.lang = lang
        self.key = key
        self.ts = start
        self.turns: list[synth.Turn] = []
        self.calls = 0

    def _tick(self) -> float:
        self.ts += self.rng.uniform(4.0, 90.0)
        return self.ts

    def user(self, text: str) -> None:
        self.turns.append(synth.Turn(role="user", text=text, ts=self._tick()))

    def assistant(self, text: str, tool: tuple[str, str] | None = None, *, exit_code: int = 0) -> None:
        calls = []
        if tool is not None:
            self.calls += 1
            calls.append(
                synth.ToolCall(
                    call_id=f"call_{synth.det_uuid(self.key, self.calls)[:8]}",
                    name="Bash",
                    input={"command": tool[0]},
                    output=tool[1],
                    exit_code=exit_code,
                )
            )
        reasoning = self.rng.choice(T.REASONING_EN) if self.lang == "en" and self.rng.random() < 0.3 else None
        self.turns.append(
            synth.Turn(role="assistant", text=text, ts=self._tick(), reasoning=reasoning, tool_calls=calls)
        )

    def filler(self, pairs: int) -> None:
        users = {"zh": T.USER_FILLER_ZH, "ja": T.USER_FILLER_JA}.get(self.lang, T.USER_FILLER_EN)
        says = {"zh": T.ASSISTANT_FILLER_ZH, "ja": T.ASSISTANT_FILLER_JA}.get(self.lang, T.ASSISTANT_FILLER_EN)
        for _ in range(pairs):
            self.user(self.rng.choice(users))
            self.assistant(self.rng.choice(says), self.rng.choice(T.TOOL_FILLER))


def _session(
    key: str, lang: str, provider: str, start: float, prompt: str, tool: tuple[str, str] | None, reply: str | None
) -> JudgedSession:
    b = _Builder(key, lang, start)
    b.user(prompt)
    opener = {"zh": "我先复现一下问题。", "ja": "まず問題を再現します。"}.get(lang, "Let me reproduce it first.")
    if tool is not None:
        b.assistant(opener, tool, exit_code=1)
    b.filler(b.rng.randint(1, 4))
    if reply is not None:
        b.user(b.rng.choice({"zh": T.USER_FILLER_ZH, "ja": T.USER_FILLER_JA}.get(lang, T.USER_FILLER_EN)))
        b.assistant(reply)
    b.filler(b.rng.randint(0, 2))
    cwd = f"/home/dev/{b.rng.choice(PROJECTS)}"
    conv = synth.Conversation(
        id=synth.det_uuid("judged", key),
        cwd=cwd,
        title=None,
        model="synthetic-model-1",
        started=start,
        turns=b.turns,
        git_branch="main",
    )
    return JudgedSession(key=key, lang=lang, provider=provider, conv=conv)


def sessions() -> list[JudgedSession]:
    """The whole judged corpus (150 sessions), in a deterministic order with deterministic times."""
    specs: list[tuple[str, str, int, str, tuple[str, str] | None, str | None]] = []
    for t_i, t in enumerate(T.TOPICS):
        for v_i, (a, b, c) in enumerate(t.variants):
            specs.append(
                (
                    f"{t.key}/{v_i}",
                    "en",
                    t_i + v_i,
                    _fill(t.prompt, a),
                    (_fill(t.command, a), _fill(t.output, a, b)),
                    _fill(t.reply, a, b, c),
                )
            )
    for t_i, ct in enumerate(T.CJK_TOPICS):
        for v_i, (a, b, c) in enumerate(ct.variants):
            specs.append(
                (
                    f"{ct.key}/{v_i}",
                    ct.lang,
                    t_i + v_i,
                    _fill(ct.prompt, a),
                    (_fill(ct.command, a), _fill(ct.output, a, b)),
                    _fill(ct.reply, a, b, c),
                )
            )
    for d_i, prompt in enumerate(T.DISTRACTORS):
        specs.append((f"distractor/{d_i}", "en", d_i, prompt, None, "Done; the tests pass."))
    # When a session happened has nothing to do with its topic or variant: a seeded shuffle decides.
    order = list(range(len(specs)))
    random.Random("judged:time").shuffle(order)
    out = []
    for slot, i in enumerate(order):
        key, lang, rot, prompt, tool, reply = specs[i]
        out.append(
            _session(
                key,
                lang,
                PROVIDERS[rot % len(PROVIDERS)],
                EPOCH + slot * 86_400.0 + (i % 7) * 611.0,
                prompt,
                tool,
                reply,
            )
        )
    out.sort(key=lambda s: s.key)
    return out


@dataclass(frozen=True)
class Written:
    home: Path
    sessions: list[JudgedSession]

    def env(self) -> dict[str, str]:
        """HOME and the XDG dirs under the fake home: agents' default locations, nothing overridden."""
        return {
            "HOME": str(self.home),
            "XDG_DATA_HOME": str(self.home / ".local" / "share"),
            "XDG_CONFIG_HOME": str(self.home / ".config"),
            "XDG_CACHE_HOME": str(self.home / ".cache"),
        }


def write(home: Path, corpus: list[JudgedSession] | None = None) -> Written:
    """Write every session where its agent keeps it under ``home`` (a fake HOME)."""
    corpus = sessions() if corpus is None else corpus
    opencode: list[synth.Conversation] = []
    for s in corpus:
        if s.provider == "claude":
            synth.write_claude(s.conv, home / ".claude" / "projects")
        elif s.provider == "codex":
            synth.write_codex(s.conv, home / ".codex")
        else:
            opencode.append(s.conv)
    # One transaction (bench.corpus's helper): synth's write_v1 commits every row, seconds for this corpus.
    write_opencode_v1(home / ".local" / "share" / "opencode" / "opencode.db", opencode)
    return Written(home=home, sessions=corpus)


_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")


def is_cjk(text: str) -> bool:
    return bool(_CJK.search(text))


def words_of(text: str) -> set[str]:
    """Lower-cased word tokens (letters, digits, underscore), the unit a remembered word is checked in."""
    return set(re.findall(r"\w+", text.lower()))
