"""Deterministic corpora: sessions in real agent formats, and large event streams with planted needles.

Two kinds of input, both fully determined by a seed:

* **Provider files** for the scenarios that measure parsing and scanning. The text comes
  from ``voyager_sessions.ingest.synth.generate`` and the bytes from the shared writers
  (``synth.write_claude``/``claude_lines``, ``synth.codex_lines``,
  ``synth_opencode.V1Writer``/``add_v1``): the formats are described once, for the tests
  and the bench alike. Nothing here knows a provider's format.
* **Event streams** (``EventCorpus``) for the search scenarios, which measure search
  rather than parsing: ``voyager_sessions.core.model.Event`` Structs go straight into
  ``SearchIndex.add_events`` (and into the FTS5 baseline), spooled once to a msgpack file
  so both builds read identical input and generation is not counted as build time.
  Needles (rare words, identifiers with look-alike neighbours, a phrase, CJK pairs and
  longer CJK runs, CJK pairs planted only apart, text past the baseline's 600-byte cap)
  are planted at known events, so every query's right answer is known.
"""

from __future__ import annotations

import bisect
import random
import sqlite3
import struct
from collections.abc import Iterable, Iterator
from itertools import accumulate
from pathlib import Path

import msgspec
import synth

from voyager_sessions.core.model import Event, Session

# ---------------------------------------------------------------------------
# One long session in every format (ingest_5000, append_one)
# ---------------------------------------------------------------------------

#: Tokens planted into the long ingest session: (token, turn role, where) -> the kind it must be found as.
INGEST_NEEDLES: tuple[tuple[str, str], ...] = (
    ("vgrneedleprompt", "user"),
    ("vgrneedlereply", "assistant"),
    ("vgrneedlethought", "reasoning"),
    ("vgrneedledeepout", "tool_result"),
    ("鲸鳍", "assistant"),
)

#: The text of the message append_one adds; round ``n`` gets ``vgrappended{n}``.
APPEND_TOKEN = "vgrappended"


def ingest_conversation(
    messages: int,
    *,
    seed: int = 5000,
    output_bytes: int = 4000,
    extra: int = 0,
    pools: tuple[list[str], ...] = synth.MIXED_POOLS,
) -> synth.Conversation:
    """A ``messages``-message session (plus ``extra`` more for appends) with ``INGEST_NEEDLES`` planted.

    ``output_bytes`` makes every tool output long (the generator's default is 400 bytes);
    ``pools`` picks the language mix (``synth.MIXED_POOLS``: half CJK; ``LATIN_POOLS``).
    The needles go in the middle of the session, the deep one at the end of a tool output,
    so a parser that drops or duplicates anything shows up as a wrong hit count.
    """
    conv = synth.generate(seed, messages + extra, output_bytes=output_bytes, cwd="/home/dev/bench-project", pools=pools)
    turns = conv.turns[:messages]
    mid = len(turns) // 2
    user = next(t for t in turns[mid:] if t.role == "user")
    user.text += " vgrneedleprompt"
    reply = next(t for t in turns[mid:] if t.role == "assistant" and t.text and not t.tool_calls)
    reply.text += " 这是鲸鳍 vgrneedlereply"
    thought = next(t for t in turns[mid:] if t.role == "assistant" and t.reasoning)
    thought.reasoning = (thought.reasoning or "") + " vgrneedlethought"
    call = next(c for t in turns[mid:] for c in t.tool_calls if c.output)
    call.output = (call.output or "") + "\nvgrneedledeepout"
    for n, t in enumerate(conv.turns[messages:], start=1):
        t.text = f"{t.text} {APPEND_TOKEN}{n}"
    return conv


class SplitWrite(msgspec.Struct, kw_only=True):
    """A source written with its first turns; ``appends[i]`` is what turn ``messages + i`` adds."""

    path: str
    appends: list[bytes]


def _split_lines(lines_fn, conv: synth.Conversation, messages: int) -> tuple[bytes, list[bytes]]:
    # The writers pull turns lazily and emit a turn's lines before pulling the next, so
    # recording the output length whenever a turn is pulled splits the bytes per turn.
    chunks: list[bytes] = []
    size = 0
    bounds: list[int] = []

    def turns() -> Iterator[synth.Turn]:
        for t in conv.turns:
            bounds.append(size)
            yield t

    for chunk in lines_fn(conv, turns()):
        chunks.append(chunk)
        size += len(chunk)
    data = b"".join(chunks)
    bounds.append(len(data))
    head = data[: bounds[messages]]
    appends = [data[bounds[i] : bounds[i + 1]] for i in range(messages, len(conv.turns))]
    return head, appends


def write_claude_split(conv: synth.Conversation, projects_dir: Path, messages: int) -> SplitWrite:
    """Write ``conv``'s first ``messages`` turns as a Claude Code transcript; keep the rest as appendable bytes."""
    head, appends = _split_lines(synth.claude_lines, conv, messages)
    path = synth.write_claude(conv, projects_dir, turns=conv.turns[:messages])
    if path.read_bytes() != head:  # the writer and the line generator must agree byte for byte
        raise AssertionError("synth.write_claude and synth.claude_lines disagree")
    return SplitWrite(path=str(path), appends=appends)


def write_codex_split(conv: synth.Conversation, codex_home: Path, messages: int) -> SplitWrite:
    """Write ``conv``'s first ``messages`` turns as a Codex rollout; keep the rest as appendable bytes."""
    head, appends = _split_lines(synth.codex_lines, conv, messages)
    path = synth.write_codex(conv, codex_home, turns=conv.turns[:messages])
    if path.read_bytes() != head:
        raise AssertionError("synth.write_codex and synth.codex_lines disagree")
    return SplitWrite(path=str(path), appends=appends)


def write_opencode_v1(path: Path, convs: Iterable[synth.Conversation]) -> Path:
    """An OpenCode 1.x (v1 tables) database holding ``convs``, written in one transaction.

    Uses the shared ``synth_opencode`` row writers; ``write_v1`` itself commits every row
    (about 2 s per 1,000 messages), which is too slow for a 5,000-message session.
    """
    from synth import opencode as synth_opencode

    path.parent.mkdir(parents=True, exist_ok=True)
    w = synth_opencode.V1Writer.create(path)
    w.conn.execute("BEGIN")
    for conv in convs:
        synth_opencode.add_v1(w, conv)
    w.conn.execute("COMMIT")
    w.conn.close()
    return path


class OpenCodeAppender:
    """Appends whole messages to an OpenCode v1 database the way OpenCode does: new rows, one transaction.

    The rows come from a second database written by the shared writer with the full
    conversation; appending turn ``i`` copies that message's ``message`` and ``part`` rows
    and moves ``session.time_updated``, so no OpenCode row shape is spelled out here.
    """

    def __init__(self, db: Path, conv: synth.Conversation, messages: int, scratch: Path) -> None:
        from synth.opencode import (
            _msg_id,  # the id scheme the writer used
        )

        self.db = db
        self.full = write_opencode_v1(scratch, [conv])
        self.conv = conv
        self.ids = [_msg_id(conv, i) for i in range(messages, len(conv.turns))]

    def append(self, n: int) -> None:
        """Append the ``n``-th extra message (1-based)."""
        mid = self.ids[n - 1]
        conn = sqlite3.connect(self.db, isolation_level=None)
        try:
            conn.execute("ATTACH DATABASE ? AS full", (str(self.full),))
            conn.execute("BEGIN IMMEDIATE")
            conn.execute("INSERT INTO main.message SELECT * FROM full.message WHERE id = ?", (mid,))
            conn.execute("INSERT INTO main.part SELECT * FROM full.part WHERE message_id = ?", (mid,))
            conn.execute(
                "UPDATE main.session SET time_updated = (SELECT max(time_created) FROM main.message "
                "WHERE session_id = main.session.id) WHERE id = ?",
                (self.conv.id,),
            )
            conn.execute("COMMIT")
            conn.execute("DETACH DATABASE full")
        finally:
            conn.close()


# ---------------------------------------------------------------------------
# A whole history of many sessions (ingest_history)
# ---------------------------------------------------------------------------


class History(msgspec.Struct, kw_only=True):
    """What ``write_history`` wrote: how many sessions and files, and their bytes."""

    sessions: int
    sources: int
    bytes: int


def write_history(
    claude_projects: Path, codex_home: Path, opencode_db: Path, *, sessions: int, seed: int = 20_000
) -> History:
    """A first-index corpus: ``sessions`` sessions of 20–600 messages over Claude Code, Codex and OpenCode.

    Shaped like a person's history rather than a stress case: most sessions English and
    code (``synth.LATIN_POOLS``), one in five half CJK; message counts spread from short
    chats to long agentic runs; tool outputs from a few lines to several KB. Two in five
    sessions are Claude Code transcripts, two Codex rollouts, one an OpenCode session (all
    OpenCode sessions share one SQLite database, as OpenCode keeps them).
    """
    import random

    rng = random.Random(seed)
    written = 0
    sources = 0
    opencode: list[synth.Conversation] = []
    for i in range(sessions):
        messages = int(20 * (30 ** rng.random()))  # 20..600, log-uniform: many short, some long
        pools = synth.MIXED_POOLS if i % 5 == 4 else synth.LATIN_POOLS
        conv = synth.generate(
            seed + i,
            messages,
            output_bytes=rng.choice((200, 400, 800, 1600, 4000)),
            cwd=f"/home/dev/project-{i % 7}",
            pools=pools,
        )
        kind = i % 5
        if kind in (0, 2):
            path = synth.write_claude(conv, claude_projects)
        elif kind in (1, 3):
            path = synth.write_codex(conv, codex_home)
        else:
            opencode.append(conv)
            continue
        written += path.stat().st_size
        sources += 1
    if opencode:
        write_opencode_v1(opencode_db, opencode)
        written += opencode_db.stat().st_size
        sources += 1
    return History(sessions=sessions, sources=sources, bytes=written)


def write_scaled_history(
    count: int, claude_projects: Path, codex_home: Path, *, templates: int = 400, seed: int = 30_000
) -> tuple[int, int]:
    """``count`` sessions, half Claude Code transcripts, half Codex rollouts, for the 100,000-session bench.

    Sizes as a heavy user's history: message counts log-uniform from 4 to 200 (~85 events
    a session on average: ~8.5M for 100,000), tool outputs from 200 bytes to 1.6 KB, one session in five half
    CJK, spread over 50 projects. Generating 100,000 conversations would take longer than
    indexing them, so ``templates`` are generated and each session is one of them with its
    own id (a byte replace, exact in both formats) and its own planted token (``hist<i>``,
    so a search can tell the sessions apart). Returns (bytes written, sessions written).
    """
    import random

    rng = random.Random(seed)
    placeholder_id = "00000000-0000-4000-b000-000000000000"
    made: set[Path] = set()
    forms: list[tuple[bytes, bytes, synth.Conversation]] = []
    for t in range(templates):
        messages = int(4 * (50 ** rng.random()))  # 4..200, log-uniform: ~85 events a session on average
        pools = synth.MIXED_POOLS if t % 5 == 4 else synth.LATIN_POOLS
        conv = synth.generate(
            seed + t,
            messages,
            session_id=placeholder_id,
            output_bytes=rng.choice((200, 400, 800, 1600)),
            cwd=f"/home/dev/project-{t % 50}",
            pools=pools,
        )
        forms.append((b"".join(synth.claude_lines(conv)), b"".join(synth.codex_lines(conv)), conv))
    written = 0
    for i in range(count):
        claude, codex, conv = forms[i % templates]
        sid = f"00000000-0000-4000-b000-{i:012d}"
        # The placeholder id appears in every line; the token goes where the title text does.
        marker = f"hist{i} ".encode()
        if i % 2 == 0:
            path = synth.claude_project_dir(claude_projects, conv.cwd) / f"{sid}.jsonl"
            data = claude.replace(placeholder_id.encode(), sid.encode())
        else:
            path = synth.codex_rollout_path(
                codex_home, msgspec.structs.replace(conv, id=sid, started=conv.started + i * 60)
            )
            data = codex.replace(placeholder_id.encode(), sid.encode())
        first_text = conv.turns[0].text.encode()[:40] if conv.turns and conv.turns[0].text else b""
        if first_text and first_text in data:
            data = data.replace(first_text, marker + first_text, 1)
        if path.parent not in made:
            path.parent.mkdir(parents=True, exist_ok=True)
            made.add(path.parent)
        with open(path, "wb") as fh:
            fh.write(data)
        written += len(data)
    return written, count


class Layout(msgspec.Struct, kw_only=True):
    """What ``write_layout_history`` wrote: sessions, files and folders, bytes, and the word the newest prompts say."""

    sessions: int
    files: int
    bytes: int
    #: A word only the first prompts of the ``fresh`` newest sessions say (a search a person makes right after a
    #: first install: for what they were just doing).
    fresh_word: str
    fresh: list[str]
    #: Seconds (epoch) the newest session was last written.
    newest: float


#: The word the newest sessions' first prompts say (no z, q or x in the generated text: it is unique).
FRESH_WORD = "quixoticzebra"


def write_layout_history(
    count: int, claude_projects: Path, codex_home: Path, *, fresh: int = 10, templates: int = 200, seed: int = 50_000
) -> Layout:
    """``count`` short sessions as Claude Code 2.1 and Codex keep them today, for the first-search bench.

    Half are Claude Code sessions in the 2.1 layout: ``<project>/<id>.jsonl`` beside a folder
    ``<project>/<id>/subagents/`` holding one subagent's transcript (``agent-<aid>.jsonl``, a session of
    its own for Voyager) and its ``agent-<aid>.meta.json``; the other half Codex rollouts in their
    date folders: 20,000 files for 10,000 sessions. Sessions are short (4–24 messages, tool outputs of
    200–800 bytes: many quick sessions, the shape that makes a first index cost per file), each with
    its own token (``lay<i>``) in its first prompt, over 40 projects, and written a minute apart in
    time (the file times too), so "newest" means something: the ``fresh`` newest sessions' first
    prompts also say :data:`FRESH_WORD`.
    """
    import os
    import random
    import time

    rng = random.Random(seed)
    placeholder_id = "00000000-0000-4000-c000-000000000000"
    forms: list[tuple[bytes, bytes, bytes, synth.Conversation]] = []
    for t in range(templates):
        messages = int(4 * (6 ** rng.random()))  # 4..24, log-uniform
        pools = synth.MIXED_POOLS if t % 5 == 4 else synth.LATIN_POOLS
        conv = synth.generate(
            seed + t,
            messages,
            session_id=placeholder_id,
            output_bytes=rng.choice((200, 400, 800)),
            cwd=f"/home/dev/project-{t % 40}",
            pools=pools,
        )
        sub = synth.generate(seed + 10_000 + t, 4, session_id=placeholder_id, output_bytes=400, cwd=conv.cwd)
        forms.append(
            (
                b"".join(synth.claude_lines(conv)),
                b"".join(synth.codex_lines(conv)),
                b"".join(synth.claude_lines(sub)),
                conv,
            )
        )
    # The newest session was written a minute ago; session i was written (count - i) minutes ago.
    now = time.time()
    newest = now - 60
    written = files = 0
    made: set[Path] = set()
    fresh_ids: list[str] = []

    def put(path: Path, data: bytes, when: float) -> None:
        nonlocal written, files
        if path.parent not in made:
            path.parent.mkdir(parents=True, exist_ok=True)
            made.add(path.parent)
        with open(path, "wb") as fh:
            fh.write(data)
        os.utime(path, (when, when))
        written += len(data)
        files += 1

    for i in range(count):
        claude, codex, sub, conv = forms[i % templates]
        when = newest - (count - 1 - i) * 60
        sid = f"00000000-0000-4000-c000-{i:012d}"
        marker = f"lay{i} " + (f"{FRESH_WORD} " if i >= count - fresh else "")
        first_text = conv.turns[0].text.encode()[:40] if conv.turns and conv.turns[0].text else b""
        if i % 2 == 0:
            project = synth.claude_project_dir(claude_projects, conv.cwd)
            data = claude.replace(placeholder_id.encode(), sid.encode())
            if first_text and first_text in data:
                data = data.replace(first_text, marker.encode() + first_text, 1)
            aid = f"a{i:016x}"
            agent = sub.replace(placeholder_id.encode(), sid.encode()).replace(
                b'"isSidechain":false', b'"isSidechain":true,"agentId":"' + aid.encode() + b'"'
            )
            meta = msgspec.json.encode(
                {"agentType": "general-purpose", "description": "subtask", "spawnDepth": 1, "finished": True}
            )
            put(project / sid / "subagents" / f"agent-{aid}.jsonl", agent, when - 30)
            put(project / sid / "subagents" / f"agent-{aid}.meta.json", meta, when - 30)
            put(project / f"{sid}.jsonl", data, when)
            os.utime(project / sid / "subagents", (when - 30, when - 30))
            os.utime(project / sid, (when - 30, when - 30))
            if i >= count - fresh:
                fresh_ids.append(f"claude:{sid}")
        else:
            rollout = synth.codex_rollout_path(codex_home, msgspec.structs.replace(conv, id=sid, started=when - 600))
            data = codex.replace(placeholder_id.encode(), sid.encode())
            if first_text and first_text in data:
                # Codex writes a prompt twice (a response item, an event): both say it.
                data = data.replace(first_text, marker.encode() + first_text)
            put(rollout, data, when)
            if i >= count - fresh:
                fresh_ids.append(f"codex:{sid}")
    return Layout(sessions=count, files=files, bytes=written, fresh_word=FRESH_WORD, fresh=fresh_ids, newest=newest)


# ---------------------------------------------------------------------------
# Many tiny sources (rescan_noop)
# ---------------------------------------------------------------------------


def write_tiny_sources(count: int, claude_projects: Path, codex_home: Path, *, seed: int = 10_000) -> int:
    """``count`` small sessions (4 messages each), alternately Claude Code transcripts and Codex rollouts.

    Fast enough for 10,000 files: one conversation is generated and serialized per
    format, then only its session id differs between files (ids are plain strings in
    both formats, so a byte replace is exact). Returns the bytes written.
    """
    template = synth.generate(
        seed, 4, session_id="00000000-0000-4000-a000-000000000000", output_bytes=200, cwd="/home/dev/tiny"
    )
    claude = b"".join(synth.claude_lines(template))
    codex = b"".join(synth.codex_lines(template))
    placeholder = template.id.encode()
    written = 0
    projects = synth.claude_project_dir(claude_projects, template.cwd)
    projects.mkdir(parents=True, exist_ok=True)
    made: set[Path] = set()
    for i in range(count):
        sid = f"00000000-0000-4000-a000-{i:012d}"
        if i % 2 == 0:
            path = projects / f"{sid}.jsonl"
            data = claude.replace(placeholder, sid.encode())
        else:
            conv = msgspec.structs.replace(template, id=sid, started=template.started + i)
            path = synth.codex_rollout_path(codex_home, conv)
            data = codex.replace(placeholder, sid.encode())
        if path.parent not in made:
            path.parent.mkdir(parents=True, exist_ok=True)
            made.add(path.parent)
        with open(path, "wb") as fh:
            fh.write(data)
        written += len(data)
    return written


# ---------------------------------------------------------------------------
# Event streams with planted needles (search, baseline)
# ---------------------------------------------------------------------------

#: Kinds of a session's events, cycled: what a coding session mostly looks like.
_KIND_CYCLE: tuple[tuple[str, str], ...] = (
    ("user", "human"),
    ("assistant", "agent"),
    ("reasoning", "agent"),
    ("tool_call", "agent"),
    ("tool_result", "tool"),
    ("assistant", "agent"),
    ("tool_call", "agent"),
    ("tool_result", "tool"),
    ("tool_call", "agent"),
    ("tool_result", "tool"),
    ("assistant", "agent"),
)
_TOOLS = ("Bash", "Read", "Edit", "Grep")
_PROVIDERS = ("claude", "codex", "opencode")

#: Syllables for a Zipf-distributed vocabulary of invented words. No z, q or x, so no
#: invented word can collide with a planted needle.
_SYLLABLES = (
    "ka",
    "lo",
    "mi",
    "ne",
    "ru",
    "ta",
    "po",
    "se",
    "di",
    "ga",
    "hu",
    "be",
    "fa",
    "ju",
    "wo",
    "vi",
    "ch",
    "str",
    "an",
    "el",
    "or",
    "um",
)


class Needle(msgspec.Struct, kw_only=True):
    """A query with a known answer: the events (``session#seq``) it must return, and nothing else."""

    name: str
    query: str
    category: str
    expected: list[str] = []
    #: Look-alike text planted elsewhere that must *not* match (documentation for the reader).
    decoys: str | None = None
    providers: list[str] = []


class _Plant(msgspec.Struct, frozen=True):
    text: str
    deep: bool  # put it past the baseline's 600-byte cap, at the end of a long tool output


# name, query, category, [(text, how many events, of which deep)], decoy texts [(text, count)]
_NEEDLE_SPECS: tuple[tuple[str, str, str, tuple[tuple[str, int, int], ...], tuple[tuple[str, int], ...]], ...] = (
    ("rare word", "zorblax", "rare", (("zorblax", 6, 3),), (("zorblet", 2),)),
    ("rare word, once", "quuxwivel", "rare", (("quuxwivel", 1, 0),), ()),
    ("rare word, deep only", "vexdeepneedle", "deep", (("vexdeepneedle", 3, 3),), ()),
    ("identifier", "E_VOY_4217", "identifier", (("E_VOY_4217", 3, 1),), (("E_VOY_42170", 2), ("E_VOY_4218", 2))),
    (
        "path identifier",
        "src/needle/handler_42.py",
        "identifier",
        (("src/needle/handler_42.py", 3, 1),),
        (("src/needle/handler_421.py", 2),),
    ),
    (
        "phrase",
        '"connection refused by upstream"',
        "phrase",
        (("connection refused by upstream", 4, 1),),
        (("upstream refused by connection", 2),),
    ),
    ("prefix", "zorbl*", "prefix", (), ()),  # expected: zorblax + zorblet events, filled in below
    ("CJK pair (2 chars)", "鲸鳍", "cjk2", (("鲸鳍", 4, 2),), ()),
    ("Hangul pair (2 chars)", "햇살", "cjk2", (("햇살이", 2, 0),), ()),
    ("CJK run (4 chars)", "蝴蝶结构", "cjk3", (("蝴蝶结构", 3, 1),), (("结构蝴蝶", 1),)),
    ("CJK pair planted only apart", "鹦鹉", "apart", (), (("鹦 the parser 鹉", 4), ("鹉鹦", 1))),
    ("rare word + provider filter", "zorblax provider:…", "filter", (), ()),  # provider chosen below
    # Issue #34 (appended: the needles above keep their events): a CJK pair is never found across whitespace, and
    # a word is found as part of an identifier (snake_case and CamelCase), never inside a longer word.
    ("CJK pair, decoys across whitespace", "鸵鸟", "cjk2", (("鸵鸟", 3, 1),), (("鸵 鸟", 2), ("鸵\n鸟", 2))),
    ("Hangul pair, decoys across a space", "달빛", "cjk2", (("달빛이", 2, 0),), (("달 빛", 2),)),
    (
        "identifier part",
        "quxpartwiz",
        "identifier",
        (("load_quxpartwiz_cache", 2, 1), ("QuxpartwizLoader", 1, 0)),
        (("quxpartwizard", 2), ("quxpartwizes", 1)),
    ),
)

#: Queries without a planted answer: latency only. (name, query, category, sessions mode)
COMMON_QUERIES: tuple[tuple[str, str, str, bool], ...] = (
    ("common word", "index", "common", False),
    ("two common words", "query planner", "common", False),
    ("common phrase", '"the index"', "phrase", False),
    ("common prefix", "migr*", "prefix", False),
    ("common identifier", "self.conn", "identifier", False),
    ("CJK pair, common", "索引", "cjk2", False),
    ("CJK run, common", "インデックス", "cjk3", False),
    ("filter only", "provider:codex kind:tool", "filter", False),
    ("sessions mode, common", "migration", "sessions", True),
    ("sessions mode, rare", "zorblax", "sessions", True),
)


def _vocabulary(rng: random.Random, size: int) -> list[str]:
    words: set[str] = set()
    while len(words) < size:
        words.add("".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(2, 4))))
    return sorted(words)


class EventCorpus:
    """``n_events`` events in sessions of 20–800, deterministic for ``seed``, with needles planted.

    Text is assembled from pools of pre-generated lines (``synth.prose`` words mixed with a
    Zipf-distributed invented vocabulary) so a million events take seconds, not minutes;
    a third of tool outputs carry a unique hex id, so the term dictionary grows with the
    corpus as it does with real logs. Tool outputs: six in ten are a few lines, three in ten
    0.6–2 KB, one in ten 2.5–7 KB.
    """

    def __init__(self, n_events: int, *, seed: int = 42) -> None:
        self.n_events = n_events
        self.seed = seed
        rng = random.Random(seed)
        vocab = _vocabulary(rng, 6000)
        weights = [1.0 / (r + 1) for r in range(len(vocab))]
        cum = list(accumulate(weights))

        def words(k: int) -> str:
            return " ".join(rng.choices(vocab, cum_weights=cum, k=k))

        def output_line() -> str:
            shape = rng.randrange(4)
            if shape == 0:
                path = f"src/{rng.choice(vocab)}/{rng.choice(vocab)}.py"
                return f'  File "{path}", line {rng.randint(1, 900)}, in {words(1)}'
            if shape == 1:
                return f"{rng.choice(('INFO', 'WARN', 'ERROR', 'DEBUG'))} {synth.prose(rng, rng.randint(4, 10))}"
            if shape == 2:
                return f"tests/test_{rng.choice(vocab)}.py::{words(1)} {rng.choice(('PASSED', 'FAILED', 'SKIPPED'))}"
            return words(rng.randint(4, 12))

        self.prose_lines = [synth.prose(rng, rng.randint(5, 12)) + " " + words(rng.randint(2, 6)) for _ in range(4096)]
        self.output_lines = [output_line() for _ in range(4096)]
        # Session boundaries.
        sizes: list[int] = []
        total = 0
        while total < n_events:
            s = min(rng.randint(20, 800), n_events - total)
            sizes.append(s)
            total += s
        self.starts = list(accumulate([0] + sizes[:-1]))
        self.sizes = sizes
        self.sessions = [self._session(i) for i in range(len(sizes))]
        # Needle placement: distinct events, spread over the whole stream.
        self.plants: dict[int, list[_Plant]] = {}
        self.needles: list[Needle] = []
        taken: set[int] = set()
        place_rng = random.Random(seed * 7919 + n_events)

        def pick() -> int:
            while True:
                i = place_rng.randrange(n_events)
                if i not in taken:
                    taken.add(i)
                    return i

        by_text: dict[str, list[int]] = {}
        for name, query, category, plants, decoys in _NEEDLE_SPECS:
            expected: list[int] = []
            for text, count, deep in plants:
                for k in range(count):
                    i = pick()
                    self.plants.setdefault(i, []).append(_Plant(text, deep=k < deep))
                    expected.append(i)
                by_text.setdefault(text, []).extend(expected[-count:])
            for text, count in decoys:
                for _ in range(count):
                    i = pick()
                    self.plants.setdefault(i, []).append(_Plant(text, deep=False))
                    by_text.setdefault(text, []).append(i)
            self.needles.append(
                Needle(
                    name=name,
                    query=query,
                    category=category,
                    expected=[self.key(i) for i in expected],
                    decoys=", ".join(t for t, _ in decoys) or None,
                )
            )
        for n in self.needles:
            if n.category == "prefix":
                n.expected = [self.key(i) for i in by_text["zorblax"] + by_text["zorblet"]]
            if n.category == "filter":
                # The provider of one planted event, so the filter always keeps some and drops the rest.
                provider = self.provider_of(by_text["zorblax"][0])
                n.query = f"zorblax provider:{provider}"
                n.expected = [self.key(i) for i in by_text["zorblax"] if self.provider_of(i) == provider]
                n.providers = [provider]

    # -- addressing --------------------------------------------------------------

    def _session(self, i: int) -> Session:
        provider = _PROVIDERS[i % len(_PROVIDERS)]
        native = f"bench-{self.seed}-{i:06d}"
        start = 1_780_000_000.0 + i * 3600.0
        return Session(
            id=f"{provider}:{native}",
            provider=provider,
            native_id=native,
            title=f"bench session {i}",
            cwd=f"/home/dev/project{i % 17}",
            model="synthetic-model-1",
            started=start,
            updated=start + 7.0 * self.sizes[i],
        )

    def locate(self, i: int) -> tuple[int, int]:
        """(session index, seq) of event ``i``."""
        s = bisect.bisect_right(self.starts, i) - 1
        return s, i - self.starts[s]

    def key(self, i: int) -> str:
        s, seq = self.locate(i)
        return f"{self.sessions[s].id}#{seq}"

    def provider_of(self, i: int) -> str:
        return self.sessions[self.locate(i)[0]].provider

    # -- the stream ------------------------------------------------------------------

    def events(self) -> Iterator[Event]:
        rng = random.Random(self.seed ^ 0x5EED)
        rand = rng.random
        prose, out = self.prose_lines, self.output_lines
        npl, nol = len(prose), len(out)
        plants = self.plants
        cycle = _KIND_CYCLE
        i = 0
        for s, size in enumerate(self.sizes):
            sid = self.sessions[s].id
            t0 = self.sessions[s].started
            tool = _TOOLS[0]
            for seq in range(size):
                kind, origin = cycle[seq % len(cycle)]
                planted = plants.get(i)
                if planted and any(p.deep for p in planted):
                    kind, origin = "tool_result", "tool"
                extra: dict = {}
                if kind == "user":
                    text = prose[int(rand() * npl)]
                    if rand() < 0.3:
                        text += " " + prose[int(rand() * npl)]
                elif kind in ("assistant", "reasoning"):
                    text = " ".join(prose[int(rand() * npl)] for _ in range(1 + int(rand() * 4)))
                elif kind == "tool_call":
                    tool = _TOOLS[int(rand() * 4)]
                    text = f"pytest -q tests/test_{seq}.py" if tool == "Bash" else f"src/{out[int(rand() * nol)][:40]}"
                    extra = {"tool": tool, "call_id": f"call_{s}_{seq}"}
                else:
                    r = rand()
                    if r < 0.60:
                        lines = 1 + int(rand() * 5)
                    elif r < 0.90:
                        lines = 10 + int(rand() * 20)
                    else:
                        lines = 40 + int(rand() * 80)
                    text = "\n".join(out[int(rand() * nol)] for _ in range(lines))
                    if rand() < 0.33:
                        text = f"id={int(rand() * 0xFFFFFFFF):08x} " + text
                    extra = {"tool": tool, "call_id": f"call_{s}_{seq - 1}", "exit_code": 0 if rand() < 0.8 else 1}
                if planted:
                    for p in planted:
                        if p.deep:
                            while len(text.encode()) < 1500:
                                text += "\n" + out[int(rand() * nol)]
                            text += "\n" + p.text + " " + out[int(rand() * nol)]
                        else:
                            text = p.text + " " + text
                yield Event(session=sid, seq=seq, kind=kind, origin=origin, text=text, ts=t0 + 7.0 * seq, **extra)
                i += 1

    def spool(self, path: Path, batch: int = 4096) -> int:
        """Write the stream to ``path`` as length-prefixed msgpack batches; returns bytes of event text."""
        enc = msgspec.msgpack.Encoder()
        text_bytes = 0
        buf: list[Event] = []
        with open(path, "wb") as fh:
            for ev in self.events():
                buf.append(ev)
                text_bytes += len(ev.text)
                if len(buf) >= batch:
                    _write_frame(fh, enc.encode(buf))
                    buf = []
            if buf:
                _write_frame(fh, enc.encode(buf))
        return text_bytes


def read_spool(path: Path) -> Iterator[list[Event]]:
    """The batches ``EventCorpus.spool`` wrote, in order."""
    dec = msgspec.msgpack.Decoder(list[Event])
    with open(path, "rb") as fh:
        while True:
            head = fh.read(4)
            if not head:
                return
            (n,) = struct.unpack("<I", head)
            yield dec.decode(fh.read(n))


def _write_frame(fh, data: bytes) -> None:
    fh.write(struct.pack("<I", len(data)))
    fh.write(data)
