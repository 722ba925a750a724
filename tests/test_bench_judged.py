"""The judged set's invariants: the corpus is what docs/bench.md says, and every query can be judged.

Fast (no index, no search): generates the corpus, writes it twice, and checks the
queries against the generated text. A remembered-words query whose words are not all in
its target, or all in one message, would measure the wrong thing, so that fails here.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from pathlib import Path

from bench.judged import corpus as judged_corpus
from bench.judged.queries import CLASSES, load


def _messages(s: judged_corpus.JudgedSession) -> list[str]:
    out: list[str] = []
    for t in s.conv.turns:
        out += [t.text, t.reasoning or ""]
        for c in t.tool_calls:
            out += [str(c.input.get("command", "")), c.output or ""]
    return [m for m in out if m]


def _holds(text: str, word: str) -> bool:
    if judged_corpus.is_cjk(word):
        return word in text
    return judged_corpus.words_of(word) <= judged_corpus.words_of(text)


def test_corpus_shape() -> None:
    sessions = judged_corpus.sessions()
    assert len(sessions) == 150
    assert len({s.key for s in sessions}) == len({s.conv.id for s in sessions}) == 150
    assert set(Counter(s.provider for s in sessions)) == set(judged_corpus.PROVIDERS)
    assert sum(s.lang != "en" for s in sessions) >= 15
    # Near-duplicates: every topic told three times, in more than one format.
    topics: dict[str, set[str]] = {}
    for s in sessions:
        if not s.key.startswith("distractor/"):
            topics.setdefault(s.key.split("/")[0], set()).add(s.provider)
    assert all(len(p) >= 2 for p in topics.values())


def test_queries_are_judgeable() -> None:
    by_key = {s.key: s for s in judged_corpus.sessions()}
    queries = load()
    assert len({q.id for q in queries}) == len(queries)
    counts = Counter(q.cls for q in queries)
    assert counts["remembered"] >= 40 and counts["paraphrase"] >= 40 and counts["cjk"] >= 15
    assert set(counts) <= set(CLASSES)
    for q in queries:
        target = by_key.get(q.target)
        assert target is not None, f"{q.id}: no session {q.target}"
        words = q.query.split()
        text = target.text()
        if q.cls in ("remembered", "cjk"):
            assert 3 <= len(words) <= 4, q.id
            missing = [w for w in words if not _holds(text, w)]
            assert not missing, f"{q.id}: {missing} not in {q.target}"
            assert not any(all(_holds(m, w) for w in words) for m in _messages(target)), (
                f"{q.id}: one message holds every word"
            )
        else:
            assert any(not _holds(text, w) for w in words), f"{q.id}: a paraphrase entirely literal"
        assert judged_corpus.is_cjk(q.query) == (q.cls in ("cjk", "cjk-paraphrase", "cross-lingual")), q.id
        assert (target.lang != "en") == (q.cls in ("cjk", "cjk-paraphrase")), q.id


def _tree_digest(root: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(root.rglob("*")):
        if p.is_file() and not p.name.endswith(("-wal", "-shm")):
            h.update(str(p.relative_to(root)).encode() + b"\0")
            if p.suffix != ".db":  # SQLite pages may differ byte-wise; its rows are compared below
                h.update(p.read_bytes())
    return h.hexdigest()


def _rows(db: Path) -> list[tuple]:
    import sqlite3

    with sqlite3.connect(db) as conn:
        return [conn.execute(f"SELECT * FROM {t} ORDER BY 1").fetchall() for t in ("session", "message", "part")]


def test_deterministic(tmp_path: Path) -> None:
    a = judged_corpus.write(tmp_path / "a")
    b = judged_corpus.write(tmp_path / "b")
    assert _tree_digest(a.home) == _tree_digest(b.home)
    db = Path(".local", "share", "opencode", "opencode.db")
    assert _rows(a.home / db) == _rows(b.home / db)
    assert sum(1 for _ in (a.home / ".claude").rglob("*.jsonl")) == 50


def test_metrics() -> None:
    from bench.judged.metrics import rank_of, score

    assert rank_of("b", ["a", "b", "b"]) == 2
    assert rank_of("z", ["a"] * 10 + ["z"]) is None  # below the first ten counts as not found
    s = score([1, 2, None, 10])
    assert (s.queries, s.s1, s.s5) == (4, 0.25, 0.5)
    assert s.mrr10 == round((1 + 0.5 + 0.1) / 4, 3)


def test_floors_cover_every_class() -> None:
    from bench.judged.metrics import NAMES
    from bench.scenarios.judged import load_floors

    floors = load_floors()
    assert set(floors.voyager) == set(CLASSES)
    # With meaning: the classes measured with the model so far (a class added later gets its floor once measured).
    assert {"remembered", "paraphrase", "cjk", "cjk-paraphrase"} <= set(floors.voyager_meaning) <= set(CLASSES)
    for table in (floors.voyager, floors.voyager_meaning):
        assert all(set(f) == set(NAMES) and all(0.0 <= v <= 1.0 for v in f.values()) for f in table.values())
