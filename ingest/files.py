"""Finding and opening an agent's files: regular files only, nothing that can block, every skip named.

Adapters never ``open()`` a provider path themselves. :func:`open_regular` opens it
without blocking (a FIFO named ``*.jsonl`` would otherwise hang a scan forever) and
refuses anything but a regular file. :func:`walk_files` is the discovery walk every
file-based adapter shares: deterministic order, regular files only (a FIFO, socket or
device with a session's name is named and skipped), symlinks followed once (a symlinked
project directory is walked; a loop or a second path to the same directory is named and
not walked again; a symlinked file becomes the file it points to, so one file is one
source however many links lead to it), unreadable directories named. A folder that did not
change since a scan listed it is not listed again (:class:`FolderMemory`, which the scan lends
every walk of its discovery).
:func:`folder_fingerprint` is the stat pass for a session kept as several files in one
folder, :func:`group_fingerprint` the one for a session kept as several files a walk found.
Nothing here reads a byte of content.
"""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextvars import ContextVar
from pathlib import Path
from typing import BinaryIO

import msgspec

from voyager_sessions.ingest.adapters.base import Fingerprint, Notice, Source


class NotRegularFile(OSError):
    """The path is a FIFO, socket, device or directory: never read as a session file."""


def kind_of(mode: int) -> str:
    """A person's word for a file type (for notices)."""
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISDIR(mode):
        return "a directory"
    return "not a regular file"


def open_regular(path: str | os.PathLike[str]) -> BinaryIO:
    """Open ``path`` for reading, binary, only if it is a regular file; never blocks.

    ``O_NONBLOCK`` makes opening a FIFO return at once (instead of waiting for a writer);
    the ``fstat`` that follows then refuses it. Raises :class:`NotRegularFile` (an
    ``OSError``) for anything but a regular file, and the usual ``OSError`` otherwise.
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOCTTY", 0)
    fd = os.open(path, flags)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise NotRegularFile(f"{kind_of(st.st_mode)}, not a regular file")
        if flags & getattr(os, "O_NONBLOCK", 0):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_notice(path: str, exc: OSError, *, what: str = "read", fatal: bool = True) -> Notice:
    """The Notice for a file that could not be opened or read: vanished, not regular, or an OS error.

    ``fatal``: the file is the source (a session file); False for one piece of a larger
    source (an event file of a folder, a side file holding a title)."""
    if isinstance(exc, NotRegularFile):
        return Notice(source=path, reason=f"{exc}; skipped", fatal=fatal)
    if isinstance(exc, FileNotFoundError):
        return Notice(source=path, reason="vanished before it could be read", fatal=fatal, transient=True)
    return Notice(source=path, reason=f"cannot {what}: {exc.strerror or exc}", fatal=fatal, transient=True)


def walk_files(
    root: Path,
    suffix: str,
    provider: str,
    *,
    name_prefix: str = "",
    append_only: bool = True,
    empty_ok: bool = False,
    match: Callable[[str], bool] | None = None,
    skip_dir: Callable[[str], bool] | None = None,
    focus: Focus | None = None,
    memory: FolderMemory | None = None,
    canary: Callable[[str], str] | None = None,
    side: Callable[[str], tuple[int, int]] | None = None,
) -> Iterator[Source | Notice]:
    """Yield a Source for every regular file under ``root`` whose name ends with ``suffix`` (and starts
    with ``name_prefix``, or satisfies ``match`` when given), and a Notice for every place that could not
    be looked into or every file of that name that cannot be read as one.

    ``skip_dir(name)`` prunes directories the adapter knows hold no sessions. Sources are
    yielded in sorted order, so scans are deterministic.

    ``focus`` (the paths a file-system watcher saw change) limits the walk to them: only
    folders leading to a change are entered, only changed entries are statted, and a
    folder that itself changed, or in which something other than a session file changed
    (a side file holding titles), is walked whole.

    ``memory`` (default: the one a scan set in :data:`remembered_folders`; unused by a
    focused walk) lets a folder that did not change since it was listed go unlisted (see
    :class:`FolderMemory`): its entries are the remembered ones, every session file among
    them is still statted (an append changes no folder), and the other regular files are
    not looked at.

    ``canary(name)`` names, for a subfolder ``name``, the session file beside it that is
    written before anything under it can change (Claude Code's ``<id>.jsonl`` for its
    ``<id>/subagents/``: a subagent runs when its session's transcript says so). A subfolder
    whose canary is quiet (:attr:`FolderMemory.quiet`: unchanged since the last scan read
    it, and idle for long) is not walked, and its sources are not yielded: the scan counts
    the ones it read there last as seen, unchanged. When the folder holding it is remembered
    unchanged, such a subfolder is not even statted (the listing says it is no regular file;
    its canary is asked first): at 10,000 Claude Code sessions a third of a refresh's stats.

    ``side(folder)`` (an adapter whose sources are the files as found, each fingerprint with the
    ``wal_size``/``wal_mtime_ns`` its folder's side file gives it: :func:`with_side_file`) lets the walk
    ask the scan itself whether a file is unchanged (:attr:`FolderMemory.known`, with the fingerprint it
    would yield): one that is is counted there, not yielded. Nearly every file of a refresh is, and
    making, handing on and comparing a Source for each was most of the stat pass's Python.
    """
    wanted = match or (lambda name: name.endswith(suffix) and name.startswith(name_prefix))
    # The per-entry loop below is the stat pass of every refresh (10,000 files: most of a
    # no-op scan), so it keeps to locals and one system call per entry: a folder is listed
    # by name (``listdir``, no DirEntry objects) and its names sorted as plain strings, each
    # entry is ``lstat``ed (which says whether it is a symlink, as a DirEntry's type would)
    # and only a symlink is ``stat``ed again to see what it leads to.
    is_dir, is_reg, is_link, lstat_of, stat_of = stat.S_ISDIR, stat.S_ISREG, stat.S_ISLNK, os.lstat, os.stat
    plain = match is None  # the common test, inlined
    if focus is not None:
        memory = None
    elif memory is None:
        memory = remembered_folders.get()
    known = memory.known if memory is not None and side is not None else None
    try:
        root_st = os.stat(root)
    except OSError:
        return
    if not stat.S_ISDIR(root_st.st_mode):
        return
    top = os.fspath(root)
    walked: set[tuple[int, int]] = {(root_st.st_dev, root_st.st_ino)}
    # Quiet folders never statted (a remembered listing named them, their canary quieted them): statted into
    # ``walked`` only when a symlink to a folder shows up, which may lead to one of them.
    unstatted: list[str] = []
    yielded: set[tuple[int, int]] = set()
    stack: list[tuple[str, bool, os.stat_result]] = [
        (top, focus is None or os.path.normpath(top) in focus.changed, root_st)
    ]
    while stack:
        d, whole, d_st = stack.pop()
        prefix = d if d.endswith(os.sep) else d + os.sep
        names: list[str] | None = None
        # A listing to remember: each name, "/"-prefixed unless it is a regular file (a name holds no "/").
        listing: list[str] | None = None
        try:
            if whole:
                if memory is not None:
                    names = memory.names(d, d_st)
                if names is None:
                    names = os.listdir(d)
                    names.sort()
                    listing = [] if memory is not None else None
            else:
                assert focus is not None
                changed = focus.children.get(os.path.normpath(d))
                if not changed:
                    continue  # nothing changed down here
                names = list(changed)
                if any(not wanted(n) and not os.path.isdir(prefix + n) for n in names):
                    whole = True  # a side file changed: every session here may see it
                    names = os.listdir(d)
                names.sort()
        except OSError as exc:
            yield Notice(source=d, reason=f"cannot read directory: {exc.strerror or exc}", fatal=True)
            continue
        remembered = whole and listing is None and memory is not None
        subdirs: list[tuple[str, bool, os.stat_result]] = []
        # With a canary: this folder's session files' stats, and its subfolders, walked only if their canary says so.
        quiet = memory.quiet if canary is not None and memory is not None and whole else None
        here: dict[str, os.stat_result] = {}
        candidates: list[tuple[str, str, os.stat_result | None]] = []
        stamp: tuple[int, int] | None = None  # this folder's side file's (size, mtime_ns), once a file asks
        for name in names:
            named = False  # the name is known to be a session file's
            if remembered:
                if name[0] == "/":
                    name = name[1:]
                    if quiet is not None and not wanted(name):
                        # Still an entry that is not a regular file (the folder did not change): most likely a
                        # session's folder whose canary may say it is quiet, then never statted (see below).
                        candidates.append((name, prefix + name, None))
                        continue
                elif plain and not (name.endswith(suffix) and name.startswith(name_prefix)):
                    continue  # a regular file then, and still (its folder did not change): no session
                elif not plain and not wanted(name):
                    continue
                else:
                    named = True
            path = prefix + name
            link = False
            try:
                st = lstat_of(path)
                mode = st.st_mode
                if listing is not None:
                    listing.append(name if is_reg(mode) else "/" + name)
                if is_link(mode):
                    link = True
                    st = stat_of(path)  # what a symlink leads to decides
                    mode = st.st_mode
            except OSError as exc:
                if listing is not None and not link:
                    listing = None  # gone since the listing: the folder changed, it is listed again next time
                if link:
                    yield Notice(source=path, reason=f"symlink not followed: {exc.strerror or exc}")
                continue
            if is_dir(mode):
                if skip_dir is not None and skip_dir(name):
                    continue
                first, notice = _enter(path, st, link, walked, unstatted)
                if notice is not None:
                    yield notice
                if not first:
                    continue
                if wanted(name):
                    yield Notice(source=path, reason="a directory named like a session file; looked inside it")
                if quiet is not None and not link:
                    candidates.append((name, path, st))
                    continue
                subdirs.append((path, whole or focus is None or os.path.normpath(path) in focus.changed, st))
                continue
            if named:
                pass
            elif plain:
                if not (name.endswith(suffix) and name.startswith(name_prefix)):
                    continue
            elif not wanted(name):
                continue
            if not is_reg(mode):
                yield Notice(source=path, reason=f"{kind_of(mode)}, not a regular file; skipped")
                continue
            if not path.isascii() and not _utf8(path):
                # Its name becomes a session id, a database key and JSON: text must be text.
                yield Notice(
                    source=os.fsdecode(os.fsencode(path)).encode("utf-8", "replace").decode(),
                    reason="a file name that is not valid UTF-8; skipped (rename it to index it)",
                )
                continue
            key = (st.st_dev, st.st_ino)
            if key in yielded:
                continue  # a second path (a link) to a file already found
            yielded.add(key)
            if quiet is not None and not link:
                here[name] = st
            if known is not None and not link:
                if stamp is None:
                    assert side is not None
                    stamp = side(prefix[:-1])  # the folder as a source's path names it
                if known(path, st.st_size, st.st_mtime_ns, st.st_ino, stamp[0], stamp[1]):
                    continue  # as the last scan read it: counted by the scan, no Source made
            yield Source(
                provider=provider,
                path=os.path.realpath(path) if link else path,
                fingerprint=Fingerprint(size=st.st_size, mtime_ns=st.st_mtime_ns, inode=st.st_ino),
                append_only=append_only,
                empty_ok=empty_ok,
            )
        for name, path, cst in candidates:  # every session file here is statted now: the canaries too
            assert quiet is not None and canary is not None
            witness = here.get(beside := canary(name))
            if witness is not None and quiet(path, prefix + beside, witness):
                if cst is None:
                    unstatted.append(path)
                continue
            if cst is None:
                # A remembered entry not looked at yet, and its canary does not quiet it: looked at now, as the
                # loop above looks at a folder (its name is no session file's: nothing else here concerns it).
                link = False
                try:
                    cst = lstat_of(path)
                    if is_link(cst.st_mode):
                        link = True
                        cst = stat_of(path)
                except OSError as exc:
                    if link:
                        yield Notice(source=path, reason=f"symlink not followed: {exc.strerror or exc}")
                    continue
                if not is_dir(cst.st_mode) or (skip_dir is not None and skip_dir(name)):
                    continue
                first, notice = _enter(path, cst, link, walked, unstatted)
                if notice is not None:
                    yield notice
                if not first:
                    continue
            subdirs.append((path, True, cst))
        if listing is not None:
            assert memory is not None
            memory.learn(d, d_st, listing)
        if candidates:
            subdirs.sort(key=_first)
        stack.extend(reversed(subdirs))


def _first(entry: tuple) -> str:
    return entry[0]


def _enter(
    path: str, st: os.stat_result, link: bool, walked: set[tuple[int, int]], unstatted: list[str]
) -> tuple[bool, Notice | None]:
    """Whether the folder met at ``path`` (``st``: what it is, through ``link`` or not) is new to this walk, now
    counted as walked; and the notice a symlink to one walked already gets (a loop, or a second path to it)."""
    if link and unstatted:
        _settle_walked(unstatted, walked)
    key = (st.st_dev, st.st_ino)
    if key in walked:
        if link:
            return False, Notice(
                source=path, reason="symlink to a directory already walked (a loop?); not followed again"
            )
        return False, None
    walked.add(key)
    return True, None


def _settle_walked(unstatted: list[str], walked: set[tuple[int, int]]) -> None:
    """Put the folders of ``unstatted`` (quiet, not statted) into ``walked``, as if statted when met: a symlink to
    one of them is then named as leading to a folder already walked, not walked as a second copy."""
    for path in unstatted:
        try:
            st = os.stat(path)
        except OSError:
            continue
        walked.add((st.st_dev, st.st_ino))
    unstatted.clear()


#: The :class:`FolderMemory` a scan lends every walk of its discovery (None: every folder is listed).
remembered_folders: ContextVar[FolderMemory | None] = ContextVar("remembered_folders", default=None)


class FolderMemory:
    """The folders a stat pass listed, so that one which did not change since is not listed again.

    A session folder gains, loses or renames an entry only by a change the folder's own
    change time (``st_ctime``) records, and ``ctime`` cannot be set back (restoring a
    folder's mtime, as ``touch -d``, ``rsync -t`` or ``tar`` do, sets it to now). So a folder
    whose ``ctime`` and inode are those of a remembered listing holds the same entries, and
    each entry is of the same kind: a regular file is still that file, so one not named
    like a session needs no stat, while every session file is still statted (an append or
    a rewrite in place changes the file, not its folder) and every other entry too (a
    subfolder's own changes show only in its ``ctime``; a symlink can lead elsewhere).

    A listing is only remembered when it cannot race a change (git's "racy" timestamps):
    the folder's ``ctime`` must lie :data:`SETTLED_NS` before this memory was made (before
    the walk statted anything: a change after that stat gets a later time), and must not
    be a whole second (a file system whose times are that coarse could give a change in
    the same second the same time). A folder changed more recently is listed every time
    until it has settled. Windows reports a folder's creation time as ``st_ctime``, so no
    listing is ever remembered there.

    Listings are stored by the scan (``store.state``), as ``(path, ctime_ns, inode,
    names)`` rows, names a JSON list in walk order with every entry that is not a regular
    file marked by a leading "/" (no name holds one). ``rows`` holds them all, or, with
    ``load`` (a folder's row, or None), those asked for so far: a refresh whose quiet folders
    are not walked asks for a hundred of 10,000 (reading them all was ~10 % of its CPU). A
    row asked for alone costs ~4x its share of reading them all, so past :data:`LAZY_MAX`
    asks (a walk of many folders: years of Codex's day folders) ``load_all`` reads the rest.
    """

    #: How long before the walk a folder's last change must be for its listing to be remembered.
    SETTLED_NS = 3_000_000_000
    #: How many rows are read one by one before the rest are read at once.
    LAZY_MAX = 256

    def __init__(
        self,
        rows: dict[str, tuple[str, int, int, str]],
        *,
        now_ns: int | None = None,
        load: Callable[[str], tuple[str, int, int, str] | None] | None = None,
        load_all: Callable[[], dict[str, tuple[str, int, int, str]]] | None = None,
    ) -> None:
        self._rows = rows
        self._load = load
        self._load_all = load_all
        self._asked = 0
        self._absent: set[str] = set()  # folders ``load`` had no row for
        self._boundary = (time.time_ns() if now_ns is None else now_ns) - self.SETTLED_NS
        self.enabled = os.name != "nt"
        #: Listings learned by this scan's walks, rows to store.
        self.learned: dict[str, tuple[str, int, int, str]] = {}
        #: Folders found gone from a folder listed again: their listings (and those under them) to forget.
        self.forgotten: list[str] = []
        #: ``quiet(folder, canary, canary_stat)``: True when the canary says nothing under ``folder`` can have
        #: changed since the last scan read it all, and the caller counts the sources there as seen, unchanged; set by
        #: the scan (it knows what it read), None to walk all.
        self.quiet: Callable[[str, str, os.stat_result], bool] | None = None
        #: ``known(path, size, mtime_ns, inode, wal_size, wal_mtime_ns)``: True when the source with that fingerprint
        #: is as the last scan read it, and the caller counted it (a walk given ``side`` then yields no Source for
        #: it); set by the scan, None to yield every source.
        self.known: Callable[[str, int, int, int, int, int], bool] | None = None

    def _row(self, folder: str) -> tuple[str, int, int, str] | None:
        row = self._rows.get(folder)
        if row is None and self._load is not None and folder not in self._absent:
            if not folder.isascii() and not _utf8(folder):  # no row of text can name it (see ``learn``)
                self._absent.add(folder)
                return None
            self._asked += 1
            if self._asked > self.LAZY_MAX and self._load_all is not None:
                for path, stored in self._load_all().items():
                    if path not in self._absent:  # (a row dropped this scan stays dropped; one learned stays)
                        self._rows.setdefault(path, stored)
                self._load = None
                return self._rows.get(folder)
            row = self._load(folder)
            if row is None:
                self._absent.add(folder)
            else:
                self._rows[folder] = row
        return row

    def names(self, folder: str, st: os.stat_result) -> list[str] | None:
        """``folder``'s remembered listing, if it still holds (``st``: the folder's stat, taken by the walk)."""
        row = self._row(folder)
        if row is None or row[1] != st.st_ctime_ns or row[2] != st.st_ino or not self.enabled:
            return None
        try:
            return _decode_names(row[3])
        except msgspec.DecodeError:
            return None

    def learn(self, folder: str, st: os.stat_result, listing: list[str]) -> None:
        """Remember ``folder``'s ``listing`` (if it has settled), and forget the folders no longer in it."""
        old = self._row(folder)
        if old is not None:
            try:
                before = {n for n in _decode_names(old[3]) if n[0] == "/"}
            except msgspec.DecodeError:
                before = set()
            prefix = folder if folder.endswith(os.sep) else folder + os.sep
            self.forgotten.extend(prefix + n[1:] for n in sorted(before.difference(listing)))
        ctime = st.st_ctime_ns
        if self.enabled and ctime < self._boundary and ctime % 1_000_000_000:
            try:
                # A folder, or a name in it, that is not UTF-8 (its bytes as surrogates) cannot be a row of
                # text: that folder is listed every time instead (its session files are skipped and named).
                row = (folder, ctime, st.st_ino, _encode_names(listing).decode())
                folder.encode("utf-8")
            except UnicodeEncodeError:
                self._rows.pop(folder, None)
                self._absent.add(folder)
                self.learned.pop(folder, None)
                return
            self.learned[folder] = self._rows[folder] = row

    @property
    def changed(self) -> bool:
        """True when there is something to store."""
        return bool(self.learned or self.forgotten)


_decode_names = msgspec.json.Decoder(list[str]).decode
_encode_names = msgspec.json.encode


class Focus:
    """Changed paths as a focused walk uses them: the folders leading to a change, and what changed."""

    def __init__(self, paths: Iterable[str]) -> None:
        self.changed: set[str] = set()
        self.children: dict[str, set[str]] = {}  # folder -> names of changed entries or of folders leading to one
        for p in paths:
            p = os.path.normpath(p)
            self.changed.add(p)
            while True:
                parent, name = os.path.split(p)
                if not name or parent == p:
                    break
                kids = self.children.setdefault(parent, set())
                if name in kids:
                    break  # the rest of the way up is recorded already
                kids.add(name)
                p = parent

    def hit(self, path: str) -> bool:
        """True when ``path`` or a folder above it changed (a source gone with its folder)."""
        p = os.path.normpath(path)
        while True:
            if p in self.changed:
                return True
            parent = os.path.dirname(p)
            if parent == p:
                return False
            p = parent


def subdirs(root: Path) -> Iterator[Path | Notice]:
    """The directories directly under ``root`` (symlinks to one included), in name order; a Notice
    if ``root`` exists but cannot be listed, nothing if it does not exist.

    For stores kept as one folder a project (``<root>/<project>/chats/…``), whose adapters
    walk only the folders that hold sessions, not everything else a project folder keeps.
    """
    try:
        with os.scandir(root) as it:
            entries = sorted(it, key=lambda e: e.name)
    except FileNotFoundError:
        return
    except OSError as exc:
        yield Notice(source=str(root), reason=f"cannot read directory: {exc.strerror or exc}", fatal=True)
        return
    for entry in entries:
        try:
            if entry.is_dir():
                yield Path(entry.path)
        except OSError:
            continue


def side_stamp(side: str, seen: dict[str, tuple[int, int]]) -> tuple[int, int]:
    """What :func:`with_side_file` puts into a fingerprint from ``side``: its (size, mtime_ns), or (0, 0) when it is
    missing; ``seen`` memoises it across one discovery (the ``side`` of :func:`walk_files`)."""
    got = seen.get(side)
    if got is None:
        try:
            st = os.stat(side)
            got = (st.st_size, st.st_mtime_ns)
        except OSError:
            got = (0, 0)
        seen[side] = got
    return got


def with_side_file(source: Source, side: Path | str, seen: dict[str, os.stat_result | None] | None = None) -> Source:
    """``source`` whose fingerprint also sees ``side``, a small file that holds some of its session's facts.

    A rename, a model switch or a title often changes only such a file (Copilot's
    ``workspace.yaml``, Droid's ``.settings.json``, Cline's manifest, Codex's and Claude's
    session indexes). Its size and mtime go where a database's ``-wal`` would: a change there
    alone makes the scan read the source again (an append-only one from its offset, which
    costs nothing), and the session's facts are refreshed. A missing side file changes nothing.
    ``seen`` memoises the stat across one discovery, for a side file many sources share.
    """
    key = os.fspath(side)
    if seen is not None and key in seen:
        st = seen[key]
    else:
        try:
            st = os.stat(key)
        except OSError:
            st = None
        if seen is not None:
            seen[key] = st
    if st is None:
        return source
    fp = msgspec.structs.replace(source.fingerprint, wal_size=st.st_size, wal_mtime_ns=st.st_mtime_ns)
    return msgspec.structs.replace(source, fingerprint=fp)


def _utf8(path: str) -> bool:
    """True when ``path`` (as the OS gave it, undecodable bytes as surrogates) is valid UTF-8 text."""
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def folder_fingerprint(folder: Path, files: Iterable[Path]) -> Fingerprint:
    """One fingerprint for a session kept as several files: any file added, removed, grown or touched changes it.

    ``size`` is their total size, ``mtime_ns`` the newest mtime (the folder's own
    included: a removal touches it), ``wal_size`` the number of files. Files that vanish
    between listing and stat simply do not count.
    """
    st = os.stat(folder)
    total = count = 0
    newest = st.st_mtime_ns
    for f in files:
        try:
            fst = os.stat(f)
        except OSError:
            continue
        total += fst.st_size
        count += 1
        newest = max(newest, fst.st_mtime_ns)
    return Fingerprint(size=total, mtime_ns=newest, inode=st.st_ino, wal_size=count, wal_mtime_ns=0)


def group_fingerprint(parts: Sequence[Fingerprint]) -> Fingerprint:
    """One fingerprint for a session kept as several files that a walk already statted (no stat here).

    Like :func:`folder_fingerprint` without the folder: ``size`` is their total size,
    ``mtime_ns`` the newest mtime, ``inode`` the first file's, ``wal_size`` the number of
    files, so a file added, removed, grown or touched changes it. The folder's own mtime
    is left out on purpose: such files share a folder with other sessions, whose every
    new file would otherwise make this one look changed.
    """
    if not parts:
        raise ValueError("a group of no files has no fingerprint")
    return Fingerprint(
        size=sum(p.size for p in parts),
        mtime_ns=max(p.mtime_ns for p in parts),
        inode=parts[0].inode,
        wal_size=len(parts),
        wal_mtime_ns=0,
    )
