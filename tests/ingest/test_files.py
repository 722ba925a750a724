"""Discovery of session files: regular files only, every skip named, symlinks followed once."""

from __future__ import annotations

import os
from pathlib import Path
from types import SimpleNamespace

from voyager_sessions.ingest.adapters.base import Fingerprint, Notice, Source
from voyager_sessions.ingest.files import folder_fingerprint, group_fingerprint, subdirs, walk_files


def _walk(root: Path) -> tuple[list[Source], list[Notice]]:
    items = list(walk_files(root, ".jsonl", "claude"))
    return [i for i in items if isinstance(i, Source)], [i for i in items if isinstance(i, Notice)]


def test_special_files_and_directories_named_like_sessions_are_named(tmp_path: Path) -> None:
    (tmp_path / "p").mkdir()
    (tmp_path / "p" / "a.jsonl").write_text("{}\n")
    os.mkfifo(tmp_path / "p" / "fifo.jsonl")
    (tmp_path / "p" / "dir.jsonl").mkdir()
    (tmp_path / "p" / "dir.jsonl" / "inner.jsonl").write_text("{}\n")
    sources, notices = _walk(tmp_path)
    assert [Path(s.path).name for s in sources] == ["a.jsonl", "inner.jsonl"]
    reasons = {Path(n.source).name: n.reason for n in notices}
    assert "FIFO" in reasons["fifo.jsonl"] and "directory named like a session file" in reasons["dir.jsonl"]


def test_a_symlinked_project_directory_is_walked_once(tmp_path: Path) -> None:
    real = tmp_path / "elsewhere" / "-home-dev-x"
    real.mkdir(parents=True)
    (real / "s.jsonl").write_text("{}\n")
    root = tmp_path / "projects"
    root.mkdir()
    (root / "-home-dev-x").symlink_to(real, target_is_directory=True)
    (root / "again").symlink_to(real, target_is_directory=True)  # a second path to the same directory
    (root / "loop").symlink_to(root, target_is_directory=True)  # a loop back to the root
    sources, notices = _walk(root)
    assert len(sources) == 1 and Path(sources[0].path).name == "s.jsonl"
    assert {Path(n.source).name for n in notices} == {"again", "loop"}
    assert all("already walked" in n.reason for n in notices)


def test_a_symlinked_file_is_one_source_with_its_real_path(tmp_path: Path) -> None:
    (tmp_path / "p").mkdir()
    real = tmp_path / "p" / "real.jsonl"
    real.write_text("{}\n")
    (tmp_path / "p" / "alias.jsonl").symlink_to(real)
    (tmp_path / "p" / "broken.jsonl").symlink_to(tmp_path / "nowhere.jsonl")
    sources, notices = _walk(tmp_path)
    assert [s.path for s in sources] == [os.path.realpath(real)]
    assert [Path(n.source).name for n in notices] == ["broken.jsonl"]


def test_folder_fingerprint_changes_with_any_file(tmp_path: Path) -> None:
    d = tmp_path / "conv"
    d.mkdir()
    a, b = d / "a.json", d / "b.json"
    a.write_text("1")
    fp1 = folder_fingerprint(d, [a])
    b.write_text("22")
    fp2 = folder_fingerprint(d, [a, b])
    assert fp1 != fp2 and fp2.size == 3 and fp2.wal_size == 2
    os.utime(a, ns=(0, fp2.mtime_ns + 10**9))
    assert folder_fingerprint(d, [a, b]) != fp2


def test_group_fingerprint_sums_the_members_without_the_folder() -> None:
    a = Fingerprint(size=10, mtime_ns=5, inode=7)
    b = Fingerprint(size=3, mtime_ns=9, inode=8)
    assert group_fingerprint([a, b]) == Fingerprint(size=13, mtime_ns=9, inode=7, wal_size=2)
    assert group_fingerprint([a]) != group_fingerprint([a, b]), "a file added is a change"


def test_subdirs_lists_folders_in_order_and_names_an_unreadable_root(tmp_path: Path) -> None:
    (tmp_path / "b").mkdir()
    (tmp_path / "a").mkdir()
    (tmp_path / "file.jsonl").write_text("{}\n")
    (tmp_path / "link").symlink_to(tmp_path / "a", target_is_directory=True)
    assert list(subdirs(tmp_path)) == [tmp_path / "a", tmp_path / "b", tmp_path / "link"]
    assert list(subdirs(tmp_path / "absent")) == []
    [notice] = list(subdirs(tmp_path / "file.jsonl"))
    assert isinstance(notice, Notice) and notice.fatal


def test_a_file_name_that_is_not_utf8_is_named_and_skipped_not_fatal(tmp_path: Path) -> None:
    d = tmp_path / "p"
    d.mkdir()
    (d / "good.jsonl").write_text("{}\n")
    bad = os.path.join(os.fsencode(d), b"caf\xe9.jsonl")
    with open(bad, "wb") as fh:
        fh.write(b"{}\n")
    sources, notices = _walk(tmp_path)
    assert [Path(s.path).name for s in sources] == ["good.jsonl"]
    assert len(notices) == 1 and "not valid UTF-8" in notices[0].reason
    notices[0].source.encode("utf-8")  # the notice itself is printable text


def test_a_settled_folder_whose_name_or_entries_are_not_utf8_is_walked_every_time(tmp_path: Path) -> None:
    """Remembering a listing stores it as text: a folder named, or holding a name, in bytes that are not UTF-8
    is not remembered (it is listed again each time) and costs nothing else. Remembering it ended the whole
    agent's discovery with UnicodeEncodeError at the scan after it settled: no new session of that agent was
    indexed again."""
    from voyager_sessions.ingest.files import FolderMemory

    root = os.fsencode(tmp_path)
    os.makedirs(os.path.join(root, b"-home-dev-caf\xe9"))
    for folder, name in (
        (b"-home-dev-caf\xe9", b"s1.jsonl"),
        (b"-home-dev-ok", b"s2.jsonl"),
        (b"-home-dev-ok", b"\xff.jsonl"),
        (b"-home-dev-clean", b"s3.jsonl"),
    ):
        os.makedirs(os.path.join(root, folder), exist_ok=True)
        with open(os.path.join(root, folder, name), "wb") as fh:
            fh.write(b"{}\n")
    newest = max(
        os.stat(os.path.join(root, f)).st_ctime_ns
        for f in (b"", b"-home-dev-caf\xe9", b"-home-dev-ok", b"-home-dev-clean")
    )
    rows: dict = {}
    for _ in range(2):  # the second walk from what the first remembered
        memory = FolderMemory(dict(rows), now_ns=newest + FolderMemory.SETTLED_NS + 1)
        found = list(walk_files(tmp_path, ".jsonl", "claude", memory=memory))
        sources = [f for f in found if isinstance(f, Source)]
        notices = [f for f in found if not isinstance(f, Source)]
        assert sorted(Path(s.path).name for s in sources) == ["s2.jsonl", "s3.jsonl"]
        assert len(notices) == 2 and all("not valid UTF-8" in n.reason for n in notices)
        rows.update(memory.learned)
        # The root holds a name that is not text, so does -home-dev-ok, and -home-dev-caf\xe9 is one: only the
        # clean folder is remembered.
        assert set(rows) == {str(tmp_path / "-home-dev-clean")}


def test_a_folder_listing_is_remembered_only_once_settled_and_only_while_it_holds(tmp_path: Path) -> None:
    from voyager_sessions.ingest.files import FolderMemory

    d = tmp_path / "p"
    d.mkdir()
    (d / "a.jsonl").write_text("{}\n")
    st = os.stat(d)
    settled = st.st_ctime_ns + FolderMemory.SETTLED_NS + 1
    recent = FolderMemory({}, now_ns=st.st_ctime_ns + FolderMemory.SETTLED_NS // 2)
    recent.learn(str(d), st, ["a.jsonl"])
    assert not recent.learned  # changed moments before the walk: a change could still race the listing

    memory = FolderMemory({}, now_ns=settled)
    memory.learn(str(d), st, ["a.jsonl"])
    assert memory.names(str(d), st) == ["a.jsonl"]
    (d / "b.jsonl").write_text("{}\n")
    assert memory.names(str(d), os.stat(d)) is None  # the folder changed: listed again

    coarse = SimpleNamespace(st_ctime_ns=5_000_000_000, st_ino=st.st_ino)  # what learn reads of a stat
    memory.learn("/coarse", coarse, ["a.jsonl"])  # type: ignore[arg-type]  # a stand-in stat_result
    assert "/coarse" not in memory.learned  # a whole second: a file system that may stamp two changes alike


def test_a_remembered_folder_is_walked_from_its_listing(tmp_path: Path) -> None:
    from voyager_sessions.ingest.files import FolderMemory

    (tmp_path / "p").mkdir()
    (tmp_path / "p" / "a.jsonl").write_text("{}\n")
    (tmp_path / "p" / "note.txt").write_text("x")
    (tmp_path / "p" / "sub").mkdir()
    (tmp_path / "p" / "sub" / "b.jsonl").write_text("{}\n")
    memory = FolderMemory({}, now_ns=os.stat(tmp_path / "p" / "sub").st_ctime_ns + FolderMemory.SETTLED_NS + 1)
    first = list(walk_files(tmp_path, ".jsonl", "claude", memory=memory))
    assert memory.learned[str(tmp_path / "p")][3] == '["a.jsonl","note.txt","/sub"]'
    again = list(walk_files(tmp_path, ".jsonl", "claude", memory=FolderMemory(memory.learned)))
    assert again == first and [Path(s.path).name for s in again if isinstance(s, Source)] == ["a.jsonl", "b.jsonl"]


def test_a_walk_given_side_asks_the_scan_whether_a_file_is_unchanged(tmp_path: Path) -> None:
    """With ``side`` (the stamp a folder's side file gives its sources), a file the scan says is unchanged
    (``FolderMemory.known``, asked with the fingerprint the adapter would hand on) is not yielded; every other is,
    as without; and without ``side`` nothing is asked."""
    from voyager_sessions.ingest.files import FolderMemory, side_stamp, with_side_file

    for folder in ("p", "q"):
        (tmp_path / folder).mkdir()
        for name in ("a.jsonl", "b.jsonl"):
            (tmp_path / folder / name).write_text("{}\n")
    (tmp_path / "p" / "index.json").write_text('{"titles": 1}')
    stamps: dict[str, tuple[int, int]] = {}

    def side(folder: str) -> tuple[int, int]:
        return side_stamp(folder + os.sep + "index.json", stamps)

    def handed_on(found: list) -> list:  # what the adapter makes of the walk's sources (Claude Code's, Codex's)
        sides: dict = {}
        return [with_side_file(s, Path(s.path).parent / "index.json", sides) for s in found if isinstance(s, Source)]

    everything = handed_on(list(walk_files(tmp_path, ".jsonl", "claude")))
    assert len(everything) == 4 and everything[0].fingerprint.wal_size == len('{"titles": 1}')
    asked: list[tuple] = []
    keep = {str(tmp_path / "p" / "a.jsonl"), str(tmp_path / "q" / "b.jsonl")}
    memory = FolderMemory({})
    memory.known = lambda path, *fp: asked.append((path, *fp)) or path in keep
    rest = handed_on(list(walk_files(tmp_path, ".jsonl", "claude", memory=memory, side=side)))
    assert rest == [s for s in everything if s.path not in keep]
    # Each file was asked with the fingerprint the adapter hands on for it (the side file's stamp included).
    by_path = {s.path: s.fingerprint for s in everything}
    assert sorted(asked) == sorted(
        (p, f.size, f.mtime_ns, f.inode, f.wal_size, f.wal_mtime_ns) for p, f in by_path.items()
    )
    asked.clear()
    assert handed_on(list(walk_files(tmp_path, ".jsonl", "claude", memory=memory))) == everything and not asked


def test_a_folder_memory_reads_rows_as_asked_then_all_at_once(tmp_path: Path, monkeypatch) -> None:
    """With ``load``, a listing is read when the walk asks for it; past ``LAZY_MAX`` asks the rest are read at once
    (``load_all``), and a listing learned meanwhile is not replaced by the stored one."""
    from voyager_sessions.ingest.files import FolderMemory

    folders = []
    for name in ("a", "b", "c", "d"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "s.jsonl").write_text("{}\n")
        folders.append(str(tmp_path / name))
    stats = {f: os.stat(f) for f in folders}
    stored = {f: (f, stats[f].st_ctime_ns, stats[f].st_ino, '["s.jsonl"]') for f in folders}
    asked: list[str] = []
    bulk: list[int] = []

    def load(folder: str):
        asked.append(folder)
        return stored.get(folder)

    def load_all():
        bulk.append(1)
        return dict(stored)

    monkeypatch.setattr(FolderMemory, "LAZY_MAX", 2)
    settled = max(s.st_ctime_ns for s in stats.values()) + FolderMemory.SETTLED_NS + 1
    memory = FolderMemory({}, load=load, load_all=load_all, now_ns=settled)
    memory.learn(folders[3], stats[folders[3]], ["s.jsonl", "t.jsonl"])  # listed again: its old row asked for
    assert memory.names(folders[0], stats[folders[0]]) == ["s.jsonl"]
    assert asked == [folders[3], folders[0]] and not bulk
    assert memory.names(str(tmp_path / "none"), stats[folders[0]]) is None  # the third ask: all at once
    assert bulk == [1] and len(asked) == 2
    assert memory.names(folders[1], stats[folders[1]]) == ["s.jsonl"] and len(asked) == 2
    assert memory.names(folders[3], stats[folders[3]]) == ["s.jsonl", "t.jsonl"]  # the learned listing stays
    assert memory.learned[folders[3]][3] == '["s.jsonl","t.jsonl"]'


def test_a_folder_named_with_bytes_that_are_not_utf8_is_never_asked_for_its_row(tmp_path):
    """Its name (undecodable bytes as surrogates) cannot be a row of text: asking the state store for it would raise
    UnicodeEncodeError from SQLite and cost the agent its whole discovery. It counts as one with no row."""
    from voyager_sessions.ingest.files import FolderMemory

    bad = os.fsdecode(os.fsencode(str(tmp_path)) + b"/caf\xe9")
    asked: list[str] = []

    def load(folder: str):
        asked.append(folder)
        folder.encode("utf-8")  # as SQLite's binding does
        return None

    memory = FolderMemory({}, load=load, load_all=dict)
    st = os.stat(tmp_path)
    assert memory.names(bad, st) is None and memory.names(bad, st) is None
    assert asked == []
    assert memory.names(str(tmp_path), st) is None and asked == [str(tmp_path)]
