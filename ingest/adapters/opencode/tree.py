"""Reading OpenCode's early storage: a ``storage/`` tree of JSON files, one per session, message and part.

``storage/session/<project>/ses_*.json``, ``storage/message/<session>/msg_*.json`` and
``storage/part/<message>/prt_*.json``. The tree is one Source, always read whole (it is
small and has no update times worth a signature); its fingerprint summarises every file.
Sessions that the database beside it also holds are skipped: OpenCode migrated them, and
the database copy is the current one.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from voyager_sessions.ingest.adapters._common import int_or_none as _int
from voyager_sessions.ingest.adapters._common import release
from voyager_sessions.ingest.adapters._common import str_or_none as _str
from voyager_sessions.ingest.adapters.base import Fingerprint, Item, Notice, Source
from voyager_sessions.ingest.adapters.opencode.emit import (
    Ctx,
    Emitter,
    agent_title,
    as_dict,
    is_summary,
    loads,
    model_name,
    secs,
)
from voyager_sessions.ingest.adapters.opencode.product import Product
from voyager_sessions.ingest.adapters.opencode.schema import V1, V2
from voyager_sessions.ingest.files import open_regular
from voyager_sessions.ingest.jsondoc import capped_bytes
from voyager_sessions.ingest.sqlite import connect_readonly, tables
from voyager_sessions.core.model import Session

_TREE_DIRS = ("message", "part", "project")


def tree_fingerprint(storage: Path, session_dirs: tuple[str, ...] = ("session",)) -> Fingerprint:
    """A stat summary of the JSON tree that changes when any file under it is added, removed or rewritten.

    ``size`` = total bytes, ``mtime_ns`` = newest mtime of any file or directory (a
    deletion touches its directory), ``inode`` = number of files.
    """
    total = newest = count = 0
    stack = [storage / d for d in (*session_dirs, *_TREE_DIRS)]
    while stack:
        d = stack.pop()
        try:
            newest = max(newest, d.stat().st_mtime_ns)
            with os.scandir(d) as it:
                for entry in it:
                    try:
                        if entry.is_dir(follow_symlinks=False):
                            stack.append(Path(entry.path))
                        elif entry.is_file(follow_symlinks=False):
                            st = entry.stat()
                            total += st.st_size
                            newest = max(newest, st.st_mtime_ns)
                            count += 1
                    except OSError:
                        continue
        except OSError:
            continue
    return Fingerprint(size=total, mtime_ns=newest, inode=count)


def _json_files(d: Path | None) -> list[Path]:
    if d is None:
        return []
    try:
        return sorted(p for p in d.iterdir() if p.suffix == ".json" and os.path.isfile(p))
    except OSError:
        return []


def _child(base: Path, name: Any, suffix: str = "") -> Path | None:
    """``base/<name><suffix>`` when ``name`` (an id read from a file) is one plain path component; else None.

    The tree's folders are named after ids its files hold: an id that is not a plain name (a NUL, a slash,
    ``..``) would name no folder of the tree, or one outside it, and is looked up nowhere.
    """
    if not isinstance(name, str) or not name or name in (".", "..") or "\x00" in name or "/" in name or "\\" in name:
        return None
    return base / f"{name}{suffix}"


def _load_file(p: Path) -> dict[str, Any]:
    """One file of the tree (a session, a message, a part): ValueError past ``VOYAGER_MAX_JSON_BYTES`` (named)."""
    with open_regular(p) as f:  # read-only, and never a FIFO that would block
        return loads(capped_bytes(f))


def _db_session_ids(db_path: Path) -> set[str]:
    """Session ids the database beside the tree already holds: it supersedes the JSON copies."""
    if not os.path.isfile(db_path):
        return set()
    try:
        conn = connect_readonly(db_path)
    except sqlite3.Error:
        return set()
    try:
        schema = tables(conn)
        ids: set[str] = set()
        for table in (V1.sessions, V2.sessions):
            if table in schema and "id" in schema[table]:
                ids.update(r[0] for r in conn.execute(f"SELECT id FROM {table}"))
        return ids
    except sqlite3.DatabaseError:
        return set()
    finally:
        conn.close()


def read_tree(source: Source, product: Product) -> Iterator[Item]:
    storage = Path(source.path)
    ctx = Ctx(source.path, product.label)
    session_roots = [storage / d for d in product.session_dirs if os.path.isdir(storage / d)]
    if not session_roots:
        wanted = " or ".join(f"{d}/" for d in product.session_dirs)
        yield Notice(
            source=source.path, reason=f"unknown-schema: no {wanted} directory in the storage tree", fatal=True
        )
        return
    superseded = _db_session_ids(storage.parent / product.db_name)
    skipped = 0
    projects: dict[str, str | None] = {}
    session_files: list[Path] = []
    try:
        project_dirs = [p for root in session_roots for p in sorted(root.iterdir()) if os.path.isdir(p)]
    except OSError as exc:
        yield Notice(source=source.path, reason=f"unreadable: {exc}", fatal=True)
        return
    for pdir in project_dirs:
        session_files.extend(_json_files(pdir))
    for sfile in session_files:
        try:
            info = _load_file(sfile)
        except (OSError, ValueError) as exc:
            yield ctx.malformed(f"session {sfile.stem}", exc)
            continue
        native = _str(info.get("id")) or sfile.stem
        if native in superseded:
            skipped += 1
            continue
        yield from _read_session(storage, source.path, product, native, info, projects, ctx)
    if skipped:
        yield Notice(
            source=source.path,
            reason=f"skipped {skipped} JSON session(s) that {product.db_name} also holds (the database copy is read)",
        )
    yield from ctx.summary()


def _project(storage: Path, pid: Any, cache: dict[str, str | None]) -> str | None:
    if not isinstance(pid, str) or not pid:
        return None
    if pid not in cache:
        worktree: str | None = None
        try:
            path = _child(storage / "project", pid, ".json")
            if path is None:
                raise ValueError("not a plain name")
            proj = _load_file(path)
            wt = _str(proj.get("worktree"))
            worktree = wt if wt and (proj.get("vcs") or ("vcs" not in proj and wt != "/")) else None
        except (OSError, ValueError):
            pass
        cache[pid] = worktree
    return cache[pid]


def _read_session(
    storage: Path,
    src: str,
    product: Product,
    native: str,
    info: dict[str, Any],
    projects: dict[str, str | None],
    ctx: Ctx,
) -> Iterator[Item]:
    # One session's message headers are loaded to order them; parts stream per message.
    msgs: list[tuple[int | float, str, dict[str, Any]]] = []
    for mfile in _json_files(_child(storage / "message", native)):
        try:
            m = _load_file(mfile)
        except (OSError, ValueError) as exc:
            yield ctx.malformed(f"message {mfile.stem}", exc)
            continue
        created = as_dict(m.get("time")).get("created")
        msgs.append((created if isinstance(created, (int, float)) else 0, _str(m.get("id")) or mfile.stem, m))
    msgs.sort(key=lambda t: (t[0], t[1]))

    tokens_in = tokens_out = None
    model = None
    for _c, _mid, m in msgs:
        if m.get("role") != "assistant":
            continue
        tok = as_dict(m.get("tokens"))
        if _int(tok.get("input")) is not None:
            tokens_in = (tokens_in or 0) + tok["input"]
        if _int(tok.get("output")) is not None:
            tokens_out = (tokens_out or 0) + tok["output"]
        model = model_name({"id": m.get("modelID"), "providerID": m.get("providerID")}) or model
    times = as_dict(info.get("time"))
    directory = _str(info.get("directory"))
    parent = _str(info.get("parentID"))
    title = agent_title(info.get("title"))
    meta = Session(
        id=product.session_id(native),
        provider=product.name,
        native_id=native,
        title=title,
        title_source="agent" if title else None,
        cwd=directory,
        git_repo=_project(storage, info.get("projectID"), projects),
        model=model,
        started=secs(times.get("created")),
        updated=secs(times.get("updated")),
        parent=product.session_id(parent) if parent else None,
        resume=product.resume(directory, native),
        source=src,
        tokens_in=tokens_in,
        tokens_out=tokens_out,
        agent_version=release(info.get("version")),
    )
    yield meta
    em = Emitter(meta.id, subagent=parent is not None, ctx=ctx)
    for created, mid, m in msgs:
        role = m.get("role")
        if role not in ("user", "assistant"):
            ctx.unknown.saw(f"message:{role}")
            continue
        ts = secs(created) if created else None
        summary = is_summary(role, m)
        parts = []
        for pfile in _json_files(_child(storage / "part", mid)):
            try:
                p = _load_file(pfile)
            except (OSError, ValueError) as exc:
                yield ctx.malformed(f"part {pfile.stem}", exc)
                continue
            parts.append((_str(p.get("id")) or pfile.stem, p))
        parts.sort(key=lambda t: t[0])
        for _pid, p in parts:
            yield from em.part(role, p, ts, summary=summary)
        if role == "assistant" and m.get("error"):
            yield from em.assistant_error(m.get("error"), ts)
