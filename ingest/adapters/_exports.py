"""Conversation exports people download (ChatGPT, Claude.ai, Gemini Apps): where they are, which is which, their bytes.

Owns what the ``chatgpt``, ``claude-ai`` and ``gemini-apps`` adapters share (the first two's adapter class too:
``ExportAdapter``). A ChatGPT or Claude.ai export is a
``conversations.json`` (ChatGPT also shards it as ``conversations-000.json`` …), loose or in
the ``.zip`` the service mails; both services name the file the same, so the first object
key that tells them apart decides (``mapping``: ChatGPT; ``chat_messages``: Claude.ai),
read from the head of the file only. A Google Takeout of Gemini Apps' activity is an HTML page,
``My Activity/Gemini Apps/MyActivity.html`` (loose, in the unpacked ``Takeout`` folder, or in the
Takeout ``.zip``), told by its head naming Gemini Apps in My Activity's cells. A zip is read in
place (``zipfile``), never extracted.
A conversation file larger than ``jsondoc.STREAM_JSON_BYTES`` (loose or inflated) is never
decoded whole: its conversations are read one at a time (``StreamedArray``), so an export of
any size is indexed in memory bounded by its largest conversation.

Exports have no fixed place, so they are found in two ways:

* the paths ``voyager import PATH`` recorded in Voyager's state, handed to the adapters by
  the scan as :class:`~voyager_sessions.ingest.adapters.base.Hints` (adapters never read
  Voyager's own databases);
* the imports folder, ``$VOYAGER_IMPORTS`` or ``<data dir>/imports``: every ``*.json`` and
  ``*.zip`` in it, and ``conversations*.json`` one folder down (an unpacked export).

Each is a Source fingerprinted like any agent's file: re-read when it changes, gone from
the index when it is gone (unless ``scan --keep-missing``).
"""

from __future__ import annotations

import os
import re
import stat
import zlib
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, ClassVar, Literal

from voyager_sessions.core import paths
from voyager_sessions.ingest import manifest
from voyager_sessions.ingest.adapters._common import UnknownRecords, str_or_none
from voyager_sessions.ingest.adapters.base import Cursor, Hints, Item, Notice, Source, Unchanged, fingerprint
from voyager_sessions.ingest.files import open_regular, read_notice
from voyager_sessions.ingest import jsondoc
from voyager_sessions.ingest.jsondoc import StreamedArray, decode_document, stream_end
from voyager_sessions.ingest.jsonl import BadLine
from voyager_sessions.ingest.sqlite import SessionSignatures, digest
from voyager_sessions.core.model import session_id

if TYPE_CHECKING:
    import zipfile

ExportKind = Literal["chatgpt", "claude-ai", "gemini-apps"]
#: The conversation files of an export: ``conversations.json`` or ChatGPT's shards.
CONVERSATIONS = re.compile(r"\Aconversations(?:-\d{1,6})?\.json\Z")
#: Where a Takeout keeps Gemini Apps' activity page, below the ``Takeout`` folder (any ``.html`` there).
GEMINI_ACTIVITY = ("My Activity", "Gemini Apps")
#: How much of a file's head the sniff reads: the first conversation's keys come well before.
_HEAD = 256 << 10
_KEY = re.compile(rb'"(mapping|chat_messages)"\s*:')
#: A My Activity page's cells, and the product Gemini Apps' cells name.
_ACTIVITY_CELL = re.compile(rb"outer-cell", re.I)
_GEMINI = re.compile(rb">\s*Gemini Apps\s*<", re.I)


def _is_activity_member(name: str) -> bool:
    """True for a Takeout zip member that is Gemini Apps' activity page (``…/My Activity/Gemini Apps/*.html``)."""
    parts = name.split("/")
    return len(parts) >= 3 and tuple(parts[-3:-1]) == GEMINI_ACTIVITY and parts[-1].lower().endswith((".html", ".htm"))


def imports_dir(env: Mapping[str, str], provider: ExportKind = "chatgpt") -> Path:
    """``$VOYAGER_IMPORTS`` when set (``provider``'s manifest home; both kinds' homes name the same folder),
    else ``imports/`` in Voyager's data dir."""
    named = manifest.agent_home(provider, env)
    return named.expanduser() if named else paths.data_dir(env) / "imports"


def _member_names(archive: zipfile.ZipFile) -> list[zipfile.ZipInfo]:
    """The conversation files in a zip (at any depth; a Takeout's Gemini Apps activity pages), in name order."""
    return sorted(
        (
            i
            for i in archive.infolist()
            if not i.is_dir()
            and (CONVERSATIONS.match(i.filename.rsplit("/", 1)[-1]) or _is_activity_member(i.filename))
        ),
        key=lambda i: i.filename,
    )


def _sniff(head: bytes) -> ExportKind | None:
    if _ACTIVITY_CELL.search(head) and _GEMINI.search(head):
        return "gemini-apps"
    m = _KEY.search(head)
    body = head[3:] if head.startswith(b"\xef\xbb\xbf") else head  # a byte-order mark some tools write
    if m is None or not body.lstrip().startswith(b"["):
        return None
    return "chatgpt" if m.group(1) == b"mapping" else "claude-ai"


def kind_of(path: str | os.PathLike[str]) -> ExportKind | None:
    """Which service's export the file at ``path`` is (a ``.json`` or a ``.zip``), or None. Raises OSError."""
    import zipfile  # here: zipfile brings shutil, bz2 and lzma, ~3 ms of a refresh that opens no export

    if not stat.S_ISREG(os.stat(path).st_mode):
        return None  # a FIFO or a device would block the zip check's open
    if zipfile.is_zipfile(path):
        try:
            with zipfile.ZipFile(path) as archive:
                members = _member_names(archive)
                if not members:
                    return None
                with archive.open(members[0]) as f:
                    return _sniff(f.read(_HEAD))
        except (zipfile.BadZipFile, RuntimeError, NotImplementedError, ValueError, EOFError):
            return None
    with open_regular(path) as f:
        return _sniff(f.read(_HEAD))


#: A zip member may inflate to this many bytes, or to this many times its compressed size if that is more: a real
#: export (JSON compresses 5-15 times) never comes near it; a bomb (deflate reaches ~1,000 times) stops there.
MAX_INFLATED_BYTES = 1 << 30
MAX_INFLATE_RATIO = 100


class _Member:
    """A zip member read for a streamed pass: what the zip or its compression refuses is an OSError (a
    ``StreamedArray`` ends on one, naming it), never another exception escaping the read; past its bound
    (``MAX_INFLATED_BYTES``, ``MAX_INFLATE_RATIO``) it is :class:`~voyager_sessions.ingest.jsondoc.Capped`."""

    def __init__(self, f: IO[bytes], compressed: int) -> None:
        self.f = f
        self.left = max(MAX_INFLATED_BYTES, MAX_INFLATE_RATIO * compressed)
        self.bound = self.left

    def read(self, n: int = -1) -> bytes:
        if self.left <= 0:
            if self._read(1):
                raise jsondoc.Capped(
                    f"inflates to more than {self.bound:,} bytes (the larger of {MAX_INFLATED_BYTES:,} and "
                    f"{MAX_INFLATE_RATIO} times its compressed size): a decompression bomb"
                )
            return b""
        data = self._read(self.left if n < 0 else min(n, self.left))
        self.left -= len(data)
        return data

    def _read(self, n: int) -> bytes:
        import zipfile

        try:
            return self.f.read(n)
        except (zipfile.BadZipFile, zlib.error, RuntimeError, NotImplementedError, EOFError) as exc:
            raise OSError(f"unreadable zip member: {exc}") from exc


@contextmanager
def _open_member(path: str, name: str) -> Iterator[_Member]:
    import zipfile

    try:
        with zipfile.ZipFile(path) as archive, archive.open(name) as f:
            yield _Member(f, archive.getinfo(name).compress_size)
    except (zipfile.BadZipFile, RuntimeError, NotImplementedError, ValueError, KeyError, EOFError) as exc:
        raise OSError(f"unreadable zip: {exc}") from exc


def pieces(path: str) -> list[tuple[str, Callable[[], Any]]]:
    """The conversation files of the export at ``path``, each named for notices and with an opener (a context
    manager giving its bytes as a stream): ``path`` itself, or each member of a zip. Raises OSError."""
    import zipfile

    if zipfile.is_zipfile(path):
        try:
            with zipfile.ZipFile(path) as archive:
                names = [i.filename for i in _member_names(archive)]
        except (zipfile.BadZipFile, RuntimeError, NotImplementedError, ValueError, EOFError) as exc:
            raise OSError(f"unreadable zip: {exc}") from exc
        return [(f"{path}!{name}", partial(_open_member, path, name)) for name in names]
    return [(path, partial(open_regular, path))]


def piece_count(path: str) -> int:
    """How many conversation files the export at ``path`` holds (1 for a loose file, or a zip that is not one)."""
    import zipfile

    try:
        if zipfile.is_zipfile(path):
            with zipfile.ZipFile(path) as archive:
                return len(_member_names(archive))
    except (OSError, zipfile.BadZipFile, RuntimeError, NotImplementedError, ValueError, EOFError):
        pass
    return 1


def documents(path: str) -> Iterator[tuple[str, bytes | StreamedArray] | Notice]:
    """Each conversation file of the export at ``path`` (``path`` itself, or each member of a zip), named for
    notices, one at a time: its bytes when it is at most ``jsondoc.STREAM_JSON_BYTES``, else a
    ``StreamedArray`` of its conversations, read one at a time (a download of years of chats is
    indexed whatever its size, in bounded memory); an unreadable piece is a Notice. Raises OSError."""
    import zipfile

    threshold = jsondoc.STREAM_JSON_BYTES
    if not zipfile.is_zipfile(path):
        if os.stat(path).st_size > threshold:
            yield path, StreamedArray(path, None)
            return
        with open_regular(path) as f:
            loose = f.read(threshold + 1)
        if len(loose) > threshold or jsondoc.costly(loose):
            del loose
            yield path, StreamedArray(path, None)
            return
        yield path, loose
        return
    try:
        with zipfile.ZipFile(path) as archive:
            members = _member_names(archive)
            if not members:
                yield Notice(source=path, reason="a zip without conversations.json: not an export; skipped", fatal=True)
            for info in members:
                where = f"{path}!{info.filename}"
                with archive.open(info) as f:
                    data = f.read(threshold + 1)  # never more, whatever the header claims
                if len(data) > threshold or jsondoc.costly(data):  # too large, or too many values, to decode whole
                    del data
                    yield where, StreamedArray(where, None, opener=partial(_open_member, path, info.filename))
                    continue
                yield where, data
    except (zipfile.BadZipFile, RuntimeError, NotImplementedError, ValueError, EOFError, zlib.error) as exc:
        yield Notice(source=path, reason=f"unreadable zip: {exc}", fatal=True)


def candidates(env: Mapping[str, str], hints: Hints, provider: ExportKind = "chatgpt") -> Iterator[Path]:
    """Every file that may be an export: the recorded imports, then the imports folder's files."""
    for recorded in sorted(hints.imports):
        p = Path(recorded)
        if p.is_dir():
            yield from conversation_files(p)
        else:
            yield p
    folder = imports_dir(env, provider)
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError:
        return
    for entry in entries:
        p = Path(entry.path)
        if entry.name.endswith((".json", ".zip", ".html", ".htm")):
            yield p
        elif entry.is_dir(follow_symlinks=False):
            yield from conversation_files(p)


def conversation_files(folder: Path) -> list[Path]:
    """The ``conversations*.json`` files directly in ``folder`` (an unpacked export), or the Gemini Apps activity
    pages of an unpacked Takeout (``folder`` being the ``Takeout`` folder or the one holding it), in name order."""
    try:
        found = sorted(Path(e.path) for e in os.scandir(folder) if CONVERSATIONS.match(e.name))
    except OSError:
        return []
    for base in (folder, folder / "Takeout"):
        activity = base.joinpath(*GEMINI_ACTIVITY)
        try:
            found += sorted(Path(e.path) for e in os.scandir(activity) if e.name.lower().endswith((".html", ".htm")))
        except OSError:
            continue
    return found


def discover(provider: ExportKind, env: Mapping[str, str], hints: Hints) -> Iterator[Source | Notice]:
    """A Source for every export of ``provider``'s kind among the candidates (each file once)."""
    seen: set[str] = set()
    for path in candidates(env, hints, provider):
        key = os.path.realpath(path)
        if key in seen:
            continue
        seen.add(key)
        try:
            st = os.stat(path)
            if not stat.S_ISREG(st.st_mode) or kind_of(path) != provider:
                continue
            fp = fingerprint(path)
        except OSError:
            continue  # gone or unreadable: `voyager import --list` names it
        yield Source(provider=provider, path=str(path), fingerprint=fp, append_only=False)


#: One conversation mapped: its Session and Events (or nothing to index), given the conversation and the
#: notice counter; provided by each service's adapter.
Convert = Callable[[dict[str, Any], str, UnknownRecords], Iterator[Item]]


def read_export(
    source: Source, cursor: Cursor | None, provider: ExportKind, label: str, id_key: str, convert: Convert
) -> Iterator[Item]:
    """Every conversation of the export at ``source`` as ``convert`` maps it, re-reading only those that changed.

    An export holds many conversations (a new download repeats the old ones), so the Cursor
    keeps a digest per conversation: an unchanged one comes back ``Unchanged``. One
    conversation that is not an object, or has no id, costs only itself.
    """
    signatures = SessionSignatures(cursor)
    unknown = UnknownRecords(label)
    single = piece_count(source.path) == 1  # a broken piece is fatal only when it is the whole export
    pieces = documents(source.path)
    complete = True
    while True:
        try:
            piece = next(pieces)
        except StopIteration:
            break
        except OSError as exc:
            yield read_notice(source.path, exc)
            return
        if isinstance(piece, Notice):
            complete = complete and not piece.fatal
            yield piece
            continue
        where, data = piece
        notices: list[Notice] = []
        if isinstance(data, StreamedArray):
            doc: Any = data
        else:
            if data.startswith(b"\xef\xbb\xbf"):
                data = data[3:]  # a byte-order mark some tools write (see jsondoc.read_json)
            try:
                doc = decode_document(data, where, notices)
            except BadLine as exc:
                yield Notice(source=where, reason=f"not JSON: {exc}; skipped", fatal=single)
                complete = False
                continue
            del data
        yield from notices
        if not isinstance(doc, (list, StreamedArray)):
            yield Notice(
                source=where,
                reason=f"not a list of conversations: not a {label} export; skipped",
                fatal=single,
            )
            complete = False
            continue
        for conv in doc:
            native = str_or_none(conv.get(id_key)) or str_or_none(conv.get("id")) if isinstance(conv, dict) else None
            if native is None:
                unknown.saw("conversation:no-id")
                continue
            sig = digest(conv)
            if signatures.same(native, sig):
                yield Unchanged(session=session_id(provider, native))
                continue
            signatures.record(native, sig)
            yield from convert(conv, native, unknown)
        for ended in stream_end(doc, where):
            # Cut short (rewritten, or a broken zip): what was read stands; the export is read again next scan.
            complete = complete and not ended.fatal
            yield ended if single or not ended.fatal else Notice(source=where, reason=ended.reason)
    if (notice := unknown.notice(source.path)) is not None:
        yield notice
    if complete:
        yield signatures.cursor()


class ExportAdapter:
    """The adapter of one service's exports: found by :func:`discover`, read by :func:`read_export`.

    The ``chatgpt`` and ``claude-ai`` adapters differ only in the service they name, the key
    their conversations keep the id under and the mapping of one conversation, so a subclass
    sets ``name``, ``label``, ``id_key`` and ``convert``; finding and reading are the same.
    """

    name: ClassVar[ExportKind]
    #: How notices name the export ("ChatGPT export").
    label: ClassVar[str]
    #: The conversation's id key (``"id"`` is tried after it).
    id_key: ClassVar[str]

    @staticmethod
    def convert(conv: dict[str, Any], native: str, unknown: UnknownRecords, *, source: str) -> Iterator[Item]:
        """One conversation's Session and Events (the service's adapter says how)."""
        raise NotImplementedError

    def roots(self, env: Mapping[str, str]) -> list[Path]:
        return [imports_dir(env, self.name)]

    def discover(self, env: Mapping[str, str], hints: Hints | None = None) -> Iterator[Source | Notice]:
        # The recorded imports come as hints (the scan reads them from Voyager's state).
        return discover(self.name, env, hints or Hints())

    def read(self, source: Source, cursor: Cursor | None = None) -> Iterator[Item]:
        return read_export(
            source,
            cursor,
            self.name,
            self.label,
            self.id_key,
            lambda conv, native, unknown: self.convert(conv, native, unknown, source=source.path),
        )
