"""Deterministic mutations of agents' session files, for the fuzz tests (``test_fuzz.py``).

A session file is classified by its content (SQLite, zstd frames, one JSON document,
JSON lines, or text), decoded into *records* (a JSONL line, an element of a JSON
document's longest array, a SQLite row), and mutated the ways a crash, a bad disk, a
buggy agent or a hostile user break such files: cut at several offsets (one inside a
UTF-8 sequence), a record turned to garbage, NUL bytes, a byte-order mark, CRLF line
ends, a value of the wrong type, nesting 1,000 deep, lone surrogates, control
characters and terminal escapes, a 10 MB string; for SQLite a truncated file, a
corrupt page, a missing table or column, wrong-typed and invalid-UTF-8 cells.

Every mutant is named (``trunc@123``, ``type:message.content=null``, ``sql-type:part.data=blob``),
so a failure says exactly what broke; choices that need randomness take a seeded
``random.Random``, so a run is reproducible. Mutations that hit one record say which,
so the test can check that the records around it were still read.
"""

from __future__ import annotations

import json
import random
import re
import shutil
import sqlite3
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

try:
    import zstandard
except ImportError:  # pragma: no cover - the test extra installs it
    zstandard = None  # type: ignore[assignment]

#: Terminal escapes a hostile session may hold: clear screen, OSC 52 clipboard write, OSC 0 title,
#: a C1 CSI, a carriage return that overwrites the line, DEL, a bell and a NUL.
ESCAPES = "\x1b[2J\x1b]52;c;cHduZWQ=\x07\x1b]0;owned\x07\x9b31m\rOVERWRITE\x7f\x00"
#: What a wrong-typed value is replaced by, by name.
WRONG: dict[str, Any] = {
    "str": "wrong type",
    "list": ["wrong"],
    "dict": {"wrong": 1},
    "null": None,
    "int": 7,
    "huge": 2**80,
    "nan": float("nan"),
    "inf": float("-inf"),
    "bool": True,
    "empty": "",
}
DEPTH = 1000
HUGE_STRING = 10 << 20
_DEEP = "\x00DEEP\x00"  # placeholder: json.dumps cannot write 1,000 levels itself
#: JSON text nested 1,000 deep, as a string value (arguments an agent keeps as a JSON string).
_DEEP_TEXT = '{"a":' * (DEPTH // 2) + "[" * (DEPTH // 2) + "1" + "]" * (DEPTH // 2) + "}" * (DEPTH // 2)
_SQLITE = b"SQLite format 3\x00"
_ZSTD = b"\x28\xb5\x2f\xfd"
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_]{5,}")


@dataclass(frozen=True)
class Mutant:
    """One way to break one file. ``apply`` rewrites the (copied) file in place; ``record`` is the
    index of the one record it breaks, when it breaks one (the others must still be read);
    ``keeps`` the records it must leave readable when that is not "all but ``record``" (a
    truncation keeps the records before the cut)."""

    kind: str
    name: str
    apply: Callable[[Path], None]
    record: Any = None
    keeps: frozenset[int] | None = None


@dataclass
class Decoded:
    """A file's records: ``values`` (decoded JSON, or text for a text line), ``words`` each record's words."""

    kind: str
    values: list[Any] = field(default_factory=list)
    words: list[set[str]] = field(default_factory=list)
    #: For SQLite: (table, rowid) of each record.
    rows: list[tuple[str, int]] = field(default_factory=list)


# -- reading ------------------------------------------------------------------------


def classify(path: Path) -> str | None:
    """``sqlite``, ``zstd``, ``json``, ``jsonl`` or ``text``; None for files not worth mutating (SQLite's own side files)."""
    if path.name.endswith(("-wal", "-shm", "-journal")):
        return None
    data = path.read_bytes()
    if data.startswith(_SQLITE):
        return "sqlite"
    if data.startswith(_ZSTD):
        return "zstd" if zstandard is not None else None
    return _text_kind(data)


def _text_kind(data: bytes) -> str:
    try:
        json.loads(data)
        return "json"
    except ValueError:
        pass
    lines = [line for line in data.split(b"\n") if line.strip()]
    if lines:
        try:
            for line in lines:
                json.loads(line)
            return "jsonl"
        except ValueError:
            pass
    return "text"


def words_of(value: Any, out: set[str] | None = None, depth: int = 0) -> set[str]:
    """Every word (6+ characters, lower-cased) in the strings of ``value``, keys included; JSON inside strings too."""
    out = set() if out is None else out
    if depth > 50:
        return out
    if isinstance(value, str):
        out.update(w.lower() for w in _WORD.findall(value))
        if value[:1] in "{[":
            try:
                words_of(json.loads(value), out, depth + 1)
            except (ValueError, RecursionError):
                pass
    elif isinstance(value, (bytes, bytearray)):
        words_of(_blob_text(bytes(value)), out, depth + 1)
    elif isinstance(value, dict):
        for k, v in value.items():
            words_of(k, out, depth + 1)
            words_of(v, out, depth + 1)
    elif isinstance(value, (list, tuple)):
        for v in value:
            words_of(v, out, depth + 1)
    return out


def _blob_text(blob: bytes) -> str:
    if blob.startswith(_ZSTD) and zstandard is not None:
        try:
            blob = zstandard.ZstdDecompressor().decompressobj().decompress(blob)
        except zstandard.ZstdError:
            return ""
    return blob.decode("utf-8", "replace")


def decode(path: Path, kind: str) -> Decoded:
    """The records of the file at ``path`` (of ``kind``)."""
    if kind == "sqlite":
        return _decode_sqlite(path)
    data = path.read_bytes()
    if kind == "zstd":
        data = unzstd(data)
        kind = _text_kind(data)
    out = Decoded(kind)
    if kind == "json":
        doc = json.loads(data)
        items = _longest_list(doc)
        out.values = list(items) if items is not None else [doc]
    elif kind == "jsonl":
        out.values = [json.loads(line) for line in data.split(b"\n") if line.strip()]
    else:
        out.values = [line.decode("utf-8", "replace") for line in data.split(b"\n") if line.strip()]
    out.words = [words_of(v) for v in out.values]
    return out


def _decode_sqlite(path: Path) -> Decoded:
    out = Decoded("sqlite")
    with _sqlite_copy(path) as conn:
        for table in _tables(conn):
            try:
                key = _key(conn, table)
                rows = conn.execute(f"SELECT {', '.join(key)}, * FROM {_q(table)}").fetchall()
            except sqlite3.Error:
                continue
            for row in rows:
                out.rows.append((table, tuple(row[: len(key)])))
                out.values.append(list(row[len(key) :]))
                out.words.append(words_of(list(row[len(key) :])))
    return out


def _longest_list(doc: Any, depth: int = 0) -> list | None:
    """The longest list in ``doc`` (a JSON document's records: its messages)."""
    best: list | None = None
    if depth > 8:
        return None
    children = doc.values() if isinstance(doc, dict) else doc if isinstance(doc, list) else ()
    if isinstance(doc, list) and len(doc) >= 2:
        best = doc
    for child in children:
        found = _longest_list(child, depth + 1)
        if found is not None and (best is None or len(found) > len(best)):
            best = found
    return best


def unzstd(data: bytes) -> bytes:
    """Every frame of ``data`` decompressed and concatenated."""
    out = []
    while data:
        d = zstandard.ZstdDecompressor().decompressobj()
        out.append(d.decompress(data))
        data = d.unused_data
    return b"".join(out)


def zstd_lines(text: bytes) -> bytes:
    """``text`` compressed one frame a line (how DeepSeek Harness appends)."""
    c = zstandard.ZstdCompressor()
    return b"".join(c.compress(line + b"\n") for line in text.split(b"\n") if line)


# -- writing JSON -------------------------------------------------------------------


def dumps(value: Any, *, indent: int | None = None) -> bytes:
    """JSON bytes of ``value``: non-ASCII kept, lone surrogates and NaN written as JavaScript would,
    the ``_DEEP`` placeholder expanded to 1,000 levels of nesting."""
    try:
        text = json.dumps(value, ensure_ascii=False, indent=indent).encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: only an escape can carry it
        text = json.dumps(value, indent=indent).encode("utf-8")
    deep = json.dumps(_DEEP).encode()
    if deep in text:
        nest = b'{"a":' * (DEPTH // 2) + b"[" * (DEPTH // 2) + b'"deep"' + b"]" * (DEPTH // 2) + b"}" * (DEPTH // 2)
        text = text.replace(deep, nest)
    return text


def _schema_paths(value: Any, prefix: tuple = (), depth: int = 0) -> Iterator[tuple]:
    """The shape paths of ``value`` (dict keys, ``[]`` for any list element), every node but the root."""
    if depth > 12:
        return
    if isinstance(value, dict):
        for k, v in value.items():
            yield prefix + (k,)
            yield from _schema_paths(v, prefix + (k,), depth + 1)
    elif isinstance(value, list):
        for v in value:
            yield prefix + ("[]",)
            yield from _schema_paths(v, prefix + ("[]",), depth + 1)


def schema_paths(values: list[Any]) -> list[tuple]:
    seen: dict[tuple, None] = {}
    for v in values:
        for p in _schema_paths(v):
            seen.setdefault(p, None)
    return list(seen)


def replace_at(value: Any, path: tuple, new: Any) -> tuple[Any, int]:
    """``value`` with every node at shape ``path`` replaced by ``new``; and how many were."""
    if not path:
        return new, 1
    head, rest = path[0], path[1:]
    if head == "[]" and isinstance(value, list):
        out, n = [], 0
        for v in value:
            v2, k = replace_at(v, rest, new)
            out.append(v2)
            n += k
        return out, n
    if isinstance(value, dict) and head in value:
        v2, n = replace_at(value[head], rest, new)
        return {**value, head: v2}, n
    return value, 0


def map_strings(value: Any, fn: Callable[[str], str], depth: int = 0) -> Any:
    """``value`` with ``fn`` applied to every string value (keys stay); JSON kept inside a string
    (tool arguments, say) is mapped inside and written back as JSON."""
    if isinstance(value, str):
        inner = _json_in(value)
        return fn(value) if inner is None else json.dumps(map_strings(inner, fn, depth + 1))
    if depth > 200:
        return value
    if isinstance(value, dict):
        return {k: map_strings(v, fn, depth + 1) for k, v in value.items()}
    if isinstance(value, list):
        return [map_strings(v, fn, depth + 1) for v in value]
    return value


def _json_in(text: str) -> Any:
    """The JSON object or array ``text`` holds, or None."""
    if text[:1] not in ("{", "[") or len(text) > 1 << 20:
        return None
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, (dict, list)) else None


def _deep_json_strings(value: Any, depth: int = 0) -> tuple[Any, int]:
    """``value`` with every string that holds JSON replaced by JSON text nested 1,000 deep; and how many."""
    if isinstance(value, str):
        return (_DEEP_TEXT, 1) if _json_in(value) is not None else (value, 0)
    if depth > 200:
        return value, 0
    n = 0
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            out[k], k_n = _deep_json_strings(v, depth + 1)
            n += k_n
        return out, n
    if isinstance(value, list):
        items = [_deep_json_strings(v, depth + 1) for v in value]
        return [v for v, _ in items], sum(k for _, k in items)
    return value, 0


def _longest_path(value: Any, prefix: tuple = ()) -> tuple[tuple, int]:
    """The concrete path (keys and indexes) of the longest string in ``value``."""
    best: tuple[tuple, int] = ((), -1)
    if isinstance(value, str):
        return prefix, len(value)
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for k, v in items:
        found = _longest_path(v, prefix + (k,))
        if found[1] > best[1]:
            best = found
    return best


def set_path(value: Any, path: tuple, new: Any) -> Any:
    if not path:
        return new
    head = path[0]
    if isinstance(value, list):
        out = list(value)
        out[head] = set_path(value[head], path[1:], new)
        return out
    return {**value, head: set_path(value[head], path[1:], new)}


# -- the record-level edits shared by every JSON container --------------------------


def _hostile(text: str) -> str:
    """Escapes around prose (a string with a space in it): text, commands, titles, never a record's
    ``type`` or ``role`` (a record of an unknown kind is skipped, rightly)."""
    return f"{ESCAPES}{text}{ESCAPES}" if " " in text.strip() else text


#: Keys whose values are ids, paths and names: where escapes and shell metacharacters end up in
#: resume commands, file names and headers.
_ID_KEY = re.compile(
    r"(?i)(^|_)(id|cwd|path|dir|directory|root|title|name|workspace|project|model|branch)s?$|Id$|Path$|Dir$"
)


def _hostile_ids(value: Any, depth: int = 0) -> Any:
    """``value`` with escapes and shell metacharacters appended to every id-, path- and name-like string."""
    if depth > 200:
        return value
    if isinstance(value, dict):
        return {
            k: (
                v + "\x1b]0;owned\x07;$(touch pwned)`id`'\"\n\x9b\x00"
                if isinstance(v, str) and isinstance(k, str) and _ID_KEY.search(k)
                else _hostile_ids(v, depth + 1)
            )
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_hostile_ids(v, depth + 1) for v in value]
    return value


def _surrogate(text: str) -> str:
    return f"\ud83d{text}\udc00"


def record_edits(value: Any, marker: str) -> dict[str, Any]:
    """What one record becomes under each record-level mutation (``marker`` tags a 10 MB string)."""
    path, length = _longest_path(value)
    out: dict[str, Any] = {
        "deep": {**value, "deep": _DEEP} if isinstance(value, dict) else [value, _DEEP],
        "surrogate": map_strings(value, _surrogate),
        "escapes": map_strings(value, _hostile),
        "record-type": "wrong type" if isinstance(value, (dict, list)) else {"wrong": value},
    }
    deep_strings, found = _deep_json_strings(value)
    if found:
        out["deep-json-str"] = deep_strings
    if length >= 0:
        big = (marker + " ") * (HUGE_STRING // (len(marker) + 1))
        out["huge"] = set_path(value, path, big)
        # Nesting where the adapter looks: in place of its longest text.
        out["deep-text"] = set_path(value, path, _DEEP)
    return out


# -- mutants of a file --------------------------------------------------------------


def byte_mutants(data: bytes, rng: random.Random, *, lines: bool) -> Iterator[Mutant]:
    """Cuts, NULs, a BOM, CRLF and garbage: what a crash or a bad disk does to any file's bytes."""
    n = len(data)
    cuts = {0, 1, n // 2, max(0, n - 1)}
    multibyte = [i for i in range(n) if data[i] >= 0xC0]
    if multibyte:
        cuts.add(multibyte[len(multibyte) // 2] + 1)  # inside a UTF-8 sequence

    def before(cut: int) -> frozenset[int]:
        """The records on the complete lines before byte ``cut`` (what a cut there must keep)."""
        if not lines:
            return frozenset()
        complete = [line for line in data[:cut].split(b"\n")[:-1] if line.strip()]
        return frozenset(range(len(complete)))

    for cut in sorted(cuts):
        yield Mutant("trunc", f"trunc@{cut}", _write(data[:cut]), keeps=before(cut))
    third = n - n // 3
    yield Mutant("nul-tail", "nul-tail", _write(data[:third] + b"\x00" * (n - third)), keeps=before(third))
    yield Mutant("bom", "bom", _write(b"\xef\xbb\xbf" + data))
    if lines and b"\n" in data:
        yield Mutant("crlf", "crlf", _write(data.replace(b"\n", b"\r\n")))
    garbage = bytes(rng.randrange(256) for _ in range(64)) + b'{"unterminated": "\xff\xfe'
    if lines:
        raw = data.split(b"\n")
        idx = [i for i, line in enumerate(raw) if line.strip()]
        if idx:
            for name, junk in (("garbage", garbage), ("nul-line", None), ("bad-utf8", None)):
                i = rng.choice(idx)
                line = raw[i]
                if junk is None:
                    mid = len(line) // 2
                    junk = (
                        line[:mid] + (b"\x00" * 8 if name == "nul-line" else b"\xff\xfe\xed\xa0\xbd\xc3") + line[mid:]
                    )
                rec = idx.index(i)
                yield Mutant(
                    name, f"{name}:line{i + 1}", _write(b"\n".join(raw[:i] + [junk] + raw[i + 1 :])), record=rec
                )
    else:
        at = rng.randrange(max(1, n))
        yield Mutant("garbage", f"garbage@{at}", _write(data[:at] + garbage + data[at + 64 :]), keeps=frozenset())


def _write(data: bytes) -> Callable[[Path], None]:
    return lambda p: p.write_bytes(data)


def json_mutants(
    data: bytes,
    kind: str,
    rng: random.Random,
    *,
    full: bool,
    wrap: Callable[[bytes], bytes] = lambda b: b,
) -> Iterator[Mutant]:
    """Wrong types (one shape path at a time, every occurrence), and record-level edits."""
    pretty = kind == "json" and b"\n " in data
    if kind == "jsonl":
        raw = data.split(b"\n")
        idx = [i for i, line in enumerate(raw) if line.strip()]
        records = [json.loads(raw[i]) for i in idx]

        def build(new_records: dict[int, Any] | None = None, every: Callable[[Any], Any] | None = None) -> bytes:
            out = list(raw)
            for r, i in enumerate(idx):
                if every is not None:
                    out[i] = dumps(every(records[r]))
                elif new_records and r in new_records:
                    out[i] = dumps(new_records[r])
            return wrap(b"\n".join(out))
    else:
        doc = json.loads(data)
        items = _longest_list(doc)
        records = list(items) if items is not None else [doc]

        def build(new_records: dict[int, Any] | None = None, every: Callable[[Any], Any] | None = None) -> bytes:
            new = [every(r) if every else (new_records or {}).get(i, r) for i, r in enumerate(records)]
            out = _swap_list(doc, items, new) if items is not None else new[0]
            return wrap(dumps(out, indent=2 if pretty else None))

    paths = schema_paths(records)
    kinds = list(WRONG)
    chosen = paths if full else rng.sample(paths, min(len(paths), 14))
    for n, path in enumerate(chosen):
        names = kinds if full and len(paths) <= 60 else [kinds[(n + rng.randrange(len(kinds))) % len(kinds)]]
        for wrong in names:
            label = ".".join(str(p) for p in path)
            yield Mutant(
                "type",
                f"type:{label}={wrong}",
                _write_lazy(lambda path=path, wrong=wrong: build(every=lambda r: replace_at(r, path, WRONG[wrong])[0])),
                keeps=frozenset(),
            )
    yield Mutant("escapes", "escapes", _write_lazy(lambda: build(every=lambda r: map_strings(r, _hostile))))
    # Ids, cwds and names that no longer match what other files call them: nothing is promised
    # about what is found, only that nothing breaks and nothing reaches the terminal.
    yield Mutant("escapes-ids", "escapes-ids", _write_lazy(lambda: build(every=_hostile_ids)), keeps=frozenset())
    picks = range(len(records)) if full else sorted({rng.randrange(len(records)) for _ in range(2)})
    for r in picks:
        for name, new in record_edits(records[r], f"HUGEMARK{r}").items():
            if name == "escapes":
                continue
            yield Mutant(name, f"{name}:record{r}", _write_lazy(lambda r=r, new=new: build({r: new})), record=r)


def _swap_list(doc: Any, target: list, new: list) -> Any:
    """``doc`` with the list object ``target`` replaced by ``new``."""
    if doc is target:
        return new
    if isinstance(doc, dict):
        return {k: _swap_list(v, target, new) for k, v in doc.items()}
    if isinstance(doc, list):
        return [_swap_list(v, target, new) for v in doc]
    return doc


def _write_lazy(make: Callable[[], bytes]) -> Callable[[Path], None]:
    return lambda p: p.write_bytes(make())


def text_mutants(data: bytes, rng: random.Random) -> Iterator[Mutant]:
    """Text files (Markdown, YAML): escapes in every line, a 10 MB line, a line 1,000 brackets deep."""
    lines = data.split(b"\n")
    esc = ESCAPES.encode()
    # At the end of each line: a line's start may be its structure (a Markdown heading).
    yield Mutant(
        "escapes", "escapes", _write(b"\n".join(line + b" " + esc if line.strip() else line for line in lines))
    )
    idx = [i for i, line in enumerate(lines) if line.strip()]
    if idx:
        i = rng.choice(idx)
        big = b"HUGEMARK " * (HUGE_STRING // 9)
        rec = idx.index(i)
        yield Mutant(
            "huge", f"huge:line{i + 1}", _write(b"\n".join(lines[:i] + [lines[i] + big] + lines[i + 1 :])), record=rec
        )
        deep = b"[" * DEPTH + b"{" * DEPTH
        yield Mutant("deep", f"deep:line{i + 1}", _write(b"\n".join(lines[:i] + [deep] + lines[i + 1 :])), record=rec)


def file_mutants(path: Path, kind: str, rng: random.Random, *, full: bool) -> list[Mutant]:
    """Every mutant of the file at ``path`` (of ``kind``), in a stable order."""
    data = path.read_bytes()
    if kind == "sqlite":
        return list(sqlite_mutants(path, rng, full=full))
    out: list[Mutant] = []
    if kind == "zstd":
        inner = unzstd(data)
        inner_kind = _text_kind(inner)
        for m in byte_mutants(data, rng, lines=False):  # the compressed bytes: cut or garbled frames
            out.append(Mutant(m.kind, "zstd-" + m.name, m.apply, keeps=frozenset()))
        for m in byte_mutants(inner, rng, lines=inner_kind != "json"):
            out.append(Mutant(m.kind, m.name, _recompress(m.apply), m.record, m.keeps))
        if inner_kind in ("json", "jsonl"):
            out.extend(json_mutants(inner, inner_kind, rng, full=full, wrap=zstd_lines))
        return out
    out.extend(byte_mutants(data, rng, lines=kind != "json"))
    if kind in ("json", "jsonl"):
        out.extend(json_mutants(data, kind, rng, full=full))
    else:
        out.extend(text_mutants(data, rng))
    return out


def _recompress(apply: Callable[[Path], None]) -> Callable[[Path], None]:
    def run(p: Path) -> None:
        tmp = p.with_name(p.name + ".fuzz-plain")
        apply(tmp)
        p.write_bytes(zstd_lines(tmp.read_bytes()))
        tmp.unlink()

    return run


# -- SQLite ---------------------------------------------------------------------------


def _q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


class _sqlite_copy:
    """A read-write connection to ``path`` (a copy the test owns); its WAL is folded in on close."""

    def __init__(self, path: Path) -> None:
        self.conn = sqlite3.connect(path, isolation_level=None)
        self.conn.text_factory = bytes
        self.conn.execute("PRAGMA synchronous=OFF")  # a scratch copy: durability buys nothing

    def __enter__(self) -> sqlite3.Connection:
        return self.conn

    def __exit__(self, *exc: object) -> None:
        self.conn.close()


def _tables(conn: sqlite3.Connection) -> list[str]:
    rows = conn.execute(
        "SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
    ).fetchall()
    return [_s(name) for name, sql in rows if not (sql or b"").upper().startswith(b"CREATE VIRTUAL")]


def _s(v: Any) -> str:
    return v.decode("utf-8", "replace") if isinstance(v, bytes) else str(v)


def _key(conn: sqlite3.Connection, table: str) -> list[str]:
    """What names one row of ``table``: its rowid, or a WITHOUT ROWID table's primary key columns."""
    try:
        conn.execute(f"SELECT rowid FROM {_q(table)} LIMIT 1")
        return ["rowid"]
    except sqlite3.Error:
        info = sorted((r[5], _s(r[1])) for r in conn.execute(f"PRAGMA table_info({_q(table)})") if r[5])
        return [_q(name) for _, name in info]


def _where(key: list[str]) -> str:
    return " AND ".join(f"{k} IS ?" for k in key)


def _columns(conn: sqlite3.Connection, table: str) -> list[str]:
    return [_s(r[1]) for r in conn.execute(f"PRAGMA table_info({_q(table)})")]


def _sql(statements: Callable[[sqlite3.Connection], None]) -> Callable[[Path], None]:
    def run(p: Path) -> None:
        with _sqlite_copy(p) as conn:
            conn.execute("PRAGMA foreign_keys=OFF")
            conn.execute("PRAGMA ignore_check_constraints=ON")
            conn.execute("BEGIN")
            statements(conn)
            conn.execute("COMMIT")

    return run


def _checkpointed(p: Path) -> None:
    with _sqlite_copy(p) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        conn.execute("PRAGMA journal_mode=DELETE")


def _cut(fraction: float | int) -> Callable[[Path], None]:
    def run(p: Path) -> None:
        _checkpointed(p)
        data = p.read_bytes()
        p.write_bytes(data[: fraction if isinstance(fraction, int) else int(len(data) * fraction)])

    return run


def _corrupt_page(page: int, seed: int) -> Callable[[Path], None]:
    def run(p: Path) -> None:
        _checkpointed(p)
        data = bytearray(p.read_bytes())
        size = int.from_bytes(data[16:18], "big") or 65536
        start = (page - 1) * size + (100 if page == 1 else 0)
        junk = random.Random(seed).randbytes(min(size, len(data) - start) - (100 if page == 1 else 0))
        data[start : start + len(junk)] = junk
        p.write_bytes(bytes(data))

    return run


#: SQL values a column may hold that its agent never wrote there.
SQL_WRONG: dict[str, str] = {
    "text": "'wrong type'",
    "int": "7",
    "blob": "X'00FF10FE'",
    "null": "NULL",
    "real": "-1.5e308",
    "maxint": "9223372036854775807",
    "negative": "-1",
    "bad-utf8": "CAST(X'41FFFE42EDA0BD' AS TEXT)",
    "empty": "''",
    "json-list": "'[1,2]'",
}


def _drop_column(table: str, column: str, cols: list[str]) -> Callable[[sqlite3.Connection], None]:
    def run(conn: sqlite3.Connection) -> None:
        try:
            conn.execute(f"ALTER TABLE {_q(table)} DROP COLUMN {_q(column)}")
        except sqlite3.Error:
            keep = ", ".join(_q(c) for c in cols if c != column)
            conn.execute(f"CREATE TABLE fuzz_tmp AS SELECT {keep} FROM {_q(table)}")
            conn.execute(f"DROP TABLE {_q(table)}")
            conn.execute(f"ALTER TABLE fuzz_tmp RENAME TO {_q(table)}")

    return run


def _json_cell(v: Any) -> Any:
    if isinstance(v, bytes):
        if v.startswith(_ZSTD):
            return None  # handled by the blob codec below
        try:
            text = v.decode("utf-8")
        except UnicodeDecodeError:
            return None
        if text[:1] in "{[":
            try:
                return json.loads(text)
            except ValueError:
                return None
    return None


def _zstd_cell(v: Any) -> Any:
    if isinstance(v, bytes) and v.startswith(_ZSTD) and zstandard is not None:
        try:
            return json.loads(unzstd(v))
        except (ValueError, zstandard.ZstdError):
            return None
    return None


def sqlite_mutants(path: Path, rng: random.Random, *, full: bool) -> Iterator[Mutant]:
    """A cut or corrupt file, a table or column gone, wrong-typed cells, mutated JSON (or zstd JSON) cells."""
    with _sqlite_copy(path) as conn:
        schema = {t: _columns(conn, t) for t in _tables(conn)}
        keys = {t: _key(conn, t) for t in schema}
        counts = {t: conn.execute(f"SELECT count(*) FROM {_q(t)}").fetchone()[0] for t in schema}
        pages = conn.execute("PRAGMA page_count").fetchone()[0]
        cells: dict[tuple[str, str], list[tuple[int, Any, str]]] = {}
        for t, cols in schema.items():
            for c in cols:
                key = _key(conn, t)
                for *rowid, v in conn.execute(f"SELECT {', '.join(key)}, {_q(c)} FROM {_q(t)}"):
                    rowid = tuple(rowid)
                    if (doc := _json_cell(v)) is not None:
                        cells.setdefault((t, c), []).append((rowid, doc, "json"))
                    elif (doc := _zstd_cell(v)) is not None:
                        cells.setdefault((t, c), []).append((rowid, doc, "zstd"))
    yield Mutant("trunc", "sql-trunc@0", _cut(0), keeps=frozenset())
    yield Mutant("trunc", "sql-trunc@100", _cut(100), keeps=frozenset())
    yield Mutant("trunc", "sql-trunc@half", _cut(0.5), keeps=frozenset())
    for page in sorted({1, 2, pages, *(rng.randrange(1, pages + 1) for _ in range(2))} if pages else set()):
        if page <= pages:
            yield Mutant("page", f"sql-page{page}", _corrupt_page(page, rng.randrange(1 << 30)), keeps=frozenset())
    for t, cols in schema.items():
        yield Mutant(
            "drop-table", f"sql-drop:{t}", _sql(lambda c, t=t: c.execute(f"DROP TABLE {_q(t)}")), keeps=frozenset()
        )
        chosen = cols if full else rng.sample(cols, min(len(cols), 3))
        for col in chosen:
            yield Mutant("drop-column", f"sql-drop:{t}.{col}", _sql(_drop_column(t, col, cols)), keeps=frozenset())
        for n, col in enumerate(cols if full else rng.sample(cols, min(len(cols), 4))):
            wrongs = (
                list(SQL_WRONG) if full else [list(SQL_WRONG)[(n + rng.randrange(len(SQL_WRONG))) % len(SQL_WRONG)]]
            )
            for wrong in wrongs:
                yield Mutant(
                    "sql-type",
                    f"sql-type:{t}.{col}={wrong}",
                    _sql(lambda c, t=t, col=col, w=wrong: c.execute(f"UPDATE {_q(t)} SET {_q(col)} = {SQL_WRONG[w]}")),
                    keeps=frozenset(),
                )
        if counts[t] >= 2:
            # One row broken: every other row must still be read.
            with _sqlite_copy(path) as conn:
                rowids = [tuple(r) for r in conn.execute(f"SELECT {', '.join(keys[t])} FROM {_q(t)}")]
            rowid = rng.choice(rowids)
            for col in cols if full else rng.sample(cols, min(len(cols), 2)):
                wrong = "bad-utf8" if rng.random() < 0.5 else rng.choice(list(SQL_WRONG))
                yield Mutant(
                    "sql-row",
                    f"sql-row:{t}.{col}@{rowid}={wrong}",
                    _sql(
                        lambda c, t=t, col=col, w=wrong, r=rowid: c.execute(
                            f"UPDATE {_q(t)} SET {_q(col)} = {SQL_WRONG[w]} WHERE {_where(keys[t])}", r
                        )
                    ),
                    record=("row", t, rowid),
                )  # type: ignore[arg-type]
    for (t, col), found in cells.items():
        yield from _cell_mutants(t, col, keys[t], found, rng, full=full)


def _cell_mutants(
    t: str, col: str, key: list[str], found: list[tuple[int, Any, str]], rng: random.Random, *, full: bool
) -> Iterator[Mutant]:
    """JSON kept in a column: wrong types by shape path in every row, and one row's JSON broken."""
    codec = found[0][2]

    def encode(value: Any) -> bytes:
        text = dumps(value)
        return zstandard.ZstdCompressor().compress(text) if codec == "zstd" else text

    def write(rows: dict[int, Any]) -> Callable[[Path], None]:
        def run(p: Path) -> None:
            with _sqlite_copy(p) as conn:
                conn.execute("BEGIN")
                for rowid, value in rows.items():
                    data = encode(value) if not isinstance(value, bytes) else value
                    # Text where the agent wrote text, so the JSON is read as it was.
                    cell = data if codec == "zstd" else data.decode("utf-8", "surrogatepass")
                    try:
                        conn.execute(f"UPDATE {_q(t)} SET {_q(col)} = ? WHERE {_where(key)}", (cell, *rowid))
                    except sqlite3.Error:
                        pass
                conn.execute("COMMIT")

        return run

    docs = [d for _, d, _ in found]
    paths = schema_paths(docs)
    chosen = paths if full else rng.sample(paths, min(len(paths), 8))
    kinds = list(WRONG)
    for n, path in enumerate(chosen):
        wrong = kinds[(n + rng.randrange(len(kinds))) % len(kinds)]
        label = ".".join(str(p) for p in path)
        yield Mutant(
            "cell-type",
            f"cell-type:{t}.{col}:{label}={wrong}",
            _lazy_rows(
                lambda path=path, wrong=wrong: write({r: replace_at(d, path, WRONG[wrong])[0] for r, d, _ in found})
            ),
            keeps=frozenset(),
        )
    yield Mutant(
        "escapes",
        f"cell-escapes:{t}.{col}",
        _lazy_rows(lambda: write({r: map_strings(d, _hostile) for r, d, _ in found})),
    )
    yield Mutant(
        "escapes-ids",
        f"cell-escapes-ids:{t}.{col}",
        _lazy_rows(lambda: write({r: _hostile_ids(d) for r, d, _ in found})),
        keeps=frozenset(),
    )
    picks = found if full else [rng.choice(found)]
    for rowid, doc, _ in picks:
        edits = record_edits(doc, f"HUGEMARK{rowid}")
        edits.pop("escapes")
        edits["garbage"] = b'{"unterminated": [1, 2'
        for name, new in edits.items():
            if name == "huge" and not full and rng.random() < 0.5:
                continue
            yield Mutant(
                f"cell-{name}",
                f"cell-{name}:{t}.{col}@{rowid}",
                _lazy_rows(lambda new=new, r=rowid: write({r: new})),
                record=("row", t, rowid),
            )  # type: ignore[arg-type]


def _lazy_rows(make: Callable[[], Callable[[Path], None]]) -> Callable[[Path], None]:
    return lambda p: make()(p)


def copy_tree(src: Path, dst: Path) -> None:
    """``src`` copied to ``dst``, writable by us (the shared fixtures are read-only)."""
    shutil.copytree(src, dst, symlinks=True, ignore=shutil.ignore_patterns("truth.json"))
    for p in [dst, *dst.rglob("*")]:
        if not p.is_symlink():
            p.chmod(p.stat().st_mode | 0o700 if p.is_dir() else p.stat().st_mode | 0o600)
