"""ingest/zstd.py: frames to lines and blobs to documents, bounded, with either implementation or none."""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import pytest

from voyager_sessions.ingest import zstd
from voyager_sessions.ingest.adapters.base import Notice

zstandard = pytest.importorskip("zstandard")
_C = zstandard.ZstdCompressor(level=3, write_checksum=True)

LINES = ['{"n":1,"text":"数据库迁移"}', '{"n":2,"text":"データベース"}', '{"n":3,"text":"데이터베이스"}']


def frames(*chunks: str | bytes) -> bytes:
    """One zstd frame per chunk."""
    return b"".join(_C.compress(c.encode() if isinstance(c, str) else c) for c in chunks)


def lines_of(path: Path) -> tuple[list[zstd.Line], list[Notice]]:
    items = list(zstd.stream_lines(str(path)))
    return [i for i in items if isinstance(i, zstd.Line)], [i for i in items if isinstance(i, Notice)]


def _backends() -> list:
    """Every implementation installed here: zstandard, and the standard library's API (3.14+, or its backport)."""
    found = [pytest.param(("zstandard", zstandard), id="zstandard")]
    try:
        from compression import zstd as std  # type: ignore[import-not-found]  # Python 3.14's, absent before
    except ImportError:
        try:
            from backports import zstd as std
        except ImportError:
            std = None
    if std is not None:
        found.append(pytest.param(("compression.zstd", std), id="stdlib-api"))
    return found


@pytest.fixture(params=_backends())
def backend(request):
    before = (zstd.backend(), zstd._BACKEND[1] if zstd._BACKEND else None)
    zstd.use_backend(*request.param)
    yield request.param[0]
    zstd.use_backend(*before)


@pytest.mark.parametrize("layout", ["frame per line", "lines per frame", "one frame"])
def test_lines_whatever_the_framing(tmp_path, backend, layout):
    text = [line + "\n" for line in LINES]
    data = {
        "frame per line": frames(*text),
        "lines per frame": frames(text[0], "".join(text[1:])),
        "one frame": frames("".join(text)),
    }[layout]
    p = tmp_path / "session.jsonl.zstd"
    p.write_bytes(data)
    lines, notices = lines_of(p)
    assert [ln.data.decode() for ln in lines] == LINES
    assert [ln.lineno for ln in lines] == [1, 2, 3] and all(ln.complete for ln in lines)
    assert notices == []


def test_a_line_split_across_frames_is_one_line(tmp_path, backend):
    p = tmp_path / "s.zstd"
    p.write_bytes(frames('{"a":', '"中文"}\n{"b":2}'))
    lines, notices = lines_of(p)
    assert [(ln.data, ln.complete) for ln in lines] == [('{"a":"中文"}'.encode(), True), (b'{"b":2}', False)]
    assert notices == []


def test_a_torn_last_frame_is_named_and_what_came_before_kept(tmp_path, backend):
    p = tmp_path / "s.zstd"
    whole = frames(LINES[0] + "\n", LINES[1] + "\n")
    last = frames(LINES[2] + "\n")
    p.write_bytes(whole + last[: len(last) - 6])  # the agent is still writing the last frame
    lines, notices = lines_of(p)
    assert [ln.data.decode() for ln in lines][:2] == LINES[:2]
    assert len(notices) == 1 and "incomplete" in notices[0].reason and not notices[0].fatal


def test_damage_ends_the_read_there_and_keeps_what_came_before(tmp_path, backend):
    p = tmp_path / "s.zstd"
    p.write_bytes(frames(LINES[0] + "\n") + b"\x00garbage that is no zstd frame" + frames(LINES[1] + "\n"))
    lines, notices = lines_of(p)
    assert [ln.data.decode() for ln in lines] == LINES[:1]
    assert len(notices) == 1 and "damaged zstd data" in notices[0].reason and "after line 1" in notices[0].where


def test_not_zstd_at_all(tmp_path, backend):
    p = tmp_path / "s.zstd"
    p.write_text('{"plain": "json"}\n')
    lines, notices = lines_of(p)
    assert lines == [] and len(notices) == 1 and "damaged" in notices[0].reason


def test_a_fifo_is_refused_without_blocking(tmp_path, backend):
    import os

    p = tmp_path / "s.zstd"
    os.mkfifo(p)
    lines, notices = lines_of(p)
    assert lines == [] and notices[0].fatal and "FIFO" in notices[0].reason


@pytest.mark.parametrize("filler", [b"\n", b"\0"], ids=["newlines", "one endless line"])
def test_a_bomb_stops_at_the_cap_in_bounded_memory(tmp_path, monkeypatch, backend, filler):
    # 512 MiB compress to a few KiB; the read must stop at the cap, holding little.
    monkeypatch.setenv("VOYAGER_MAX_ZSTD_BYTES", str(64 << 20))
    monkeypatch.setenv("VOYAGER_MAX_LINE_BYTES", str(1 << 20))  # a longer line is counted, never held
    cctx = zstandard.ZstdCompressor(level=1)
    p = tmp_path / "bomb.zstd"
    with open(p, "wb") as fh, cctx.stream_writer(fh) as w:
        for _ in range(512):
            w.write(filler * (1 << 20))
    assert p.stat().st_size < (1 << 20)
    tracemalloc.start()
    try:
        notices = [i for i in zstd.stream_lines(str(p)) if isinstance(i, Notice)]
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert any("VOYAGER_MAX_ZSTD_BYTES" in n.reason for n in notices)
    assert peak < 40 << 20, peak


def test_a_line_longer_than_the_cap_is_skipped_not_held(tmp_path, monkeypatch, backend):
    monkeypatch.setenv("VOYAGER_MAX_LINE_BYTES", str(1 << 16))
    p = tmp_path / "s.zstd"
    p.write_bytes(frames(LINES[0] + "\n", "x" * (1 << 18) + "\n", LINES[1] + "\n"))
    lines, notices = lines_of(p)
    assert [ln.data.decode() for ln in lines] == [LINES[0], LINES[1]] and [ln.lineno for ln in lines] == [1, 3]
    assert len(notices) == 1 and "line 2" == notices[0].where and "VOYAGER_MAX_LINE_BYTES" in notices[0].reason


def test_blob_roundtrip_and_caps(backend):
    doc = '{"title": "线程", "messages": []}'.encode()
    assert zstd.decompress_blob(frames(doc)) == doc
    assert zstd.decompress_blob(frames(doc[:10], doc[10:])) == doc  # several frames are one document
    with pytest.raises(zstd.ZstdError, match="more than"):
        zstd.decompress_blob(frames(b"[" + b" " * (1 << 20) + b"]"), limit=1 << 16)
    with pytest.raises(zstd.ZstdError, match="truncated"):
        zstd.decompress_blob(frames(doc)[:-5])
    with pytest.raises(zstd.ZstdError):
        zstd.decompress_blob(b"definitely not zstd")
    with pytest.raises(zstd.ZstdError):
        zstd.decompress_blob(b"")


def test_a_frame_asking_for_a_huge_window_is_refused(backend):
    # A frame header declaring a 2 GiB window (window descriptor exponent 21 -> 2**31), as a bomb would.
    header = b"\x28\xb5\x2f\xfd" + b"\x00" + bytes([(31 - 10) << 3])
    with pytest.raises(zstd.ZstdError):
        zstd.decompress_blob(header + b"\x01\x00\x00")


def test_without_an_implementation_the_notice_says_what_to_install(tmp_path):
    before = (zstd.backend(), zstd._BACKEND[1] if zstd._BACKEND else None)
    zstd.use_backend(None)
    try:
        assert not zstd.available() and zstd.backend() is None
        with pytest.raises(zstd.ZstdUnavailable):
            zstd.decompress_blob(frames(b"{}"))
        n = zstd.missing_notice("/x", "Zed", fatal=True)
        assert n.fatal and n.transient
        assert (
            n.reason
            == "no zstd implementation installed (an incomplete install): `pip install zstandard` to read Zed sessions"
        )
    finally:
        zstd.use_backend(*before)
