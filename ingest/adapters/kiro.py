"""The Kiro adapter: every place Kiro's CLI and IDE have been described to keep sessions, read-only.

Kiro is documented, not observed: the peers (VY, AV, FAD, DJ, cli-continues) disagree on
where it writes, which looks like version drift, so every described variant is read and
``probe(path)`` names the one a store turned out to be (``voyager doctor`` shows it):

=============================  ================================================================  ==============
shape                          where                                                              module
=============================  ================================================================  ==============
``cli-jsonl``                  ``~/.kiro/sessions/cli/<uuid>.jsonl`` + ``<uuid>.json``             ``_kiro_cli``
``session-dir-jsonl``          ``~/.kiro/sessions/<workspace>/sess_<uuid>/messages.jsonl``         ``_kiro_cli``
``cli-sqlite``                 kiro-cli's ``data.sqlite3``, table ``conversations_v2``             ``_kiro_db``
``ide-workspace-json``         ``<User>/globalStorage/kiro.kiroagent/workspace-sessions/*/*.json`` ``_kiro_ide``
``app-support-workspace-json`` ``<Kiro>/workspace-sessions/*/*.json`` (cli-continues' place)      ``_kiro_ide``
``ide-chat``                   ``<User>/globalStorage/kiro.kiroagent/<hash>/<hash>.chat``          ``_kiro_ide``
=============================  ================================================================  ==============

Homes (the manifest's homes (``ingest/manifest.py``)): ``kiro`` (``VOYAGER_KIRO_HOME``, else ``~/.kiro``), ``kiro.app``
(the IDE's user dir: ``VOYAGER_KIRO_APP_DIR``, else ``paths.vscode_user_dirs(env, "Kiro")``:
``$XDG_CONFIG_HOME/Kiro/User`` or ``~/.config/Kiro/User`` on Linux, and
``~/Library/Application Support/Kiro/User`` probed beside it on every platform) and
``kiro.cli`` (kiro-cli's data dir: ``VOYAGER_KIRO_CLI_HOME``, else ``$XDG_DATA_HOME/kiro-cli``
or ``~/.local/share/kiro-cli``, and ``~/Library/Application Support/kiro-cli``). A
``VOYAGER_…`` variable is authoritative for its home. Kiro documents no variable of its own.

Resume: kiro.dev documents ``kiro-cli chat --resume-id <id>`` (sessions per directory); it is
given for the CLI's JSONL sessions. The IDE has none, and for the older SQLite rows it is not
known that the current CLI resumes them by id, so none is given.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar

from voyager_sessions.core import paths
from voyager_sessions.ingest import manifest
from voyager_sessions.ingest.adapters import _kiro_cli, _kiro_db, _kiro_ide
from voyager_sessions.ingest.adapters.base import Cursor, Fingerprint, Item, Notice, Source
from voyager_sessions.ingest.files import kind_of, with_side_file
from voyager_sessions.ingest.sqlite import read_schema, sqlite_source

PROVIDER = _kiro_cli.PROVIDER
SHAPES: tuple[str, ...] = (
    "cli-jsonl",
    "session-dir-jsonl",
    "cli-sqlite",
    "cli-sqlite-without-conversations",
    "ide-workspace-json",
    "app-support-workspace-json",
    "ide-chat",
    "unknown-schema",
    "unreadable",
)

DB_NAME = "data.sqlite3"
AGENT_DIR = ("globalStorage", "kiro.kiroagent")


def user_dirs(env: Mapping[str, str]) -> list[Path]:
    """The IDE's user dirs to look in: the override alone, else this platform's and the macOS one.

    cli-continues reads the macOS place whatever the platform; a folder that is not there
    costs one failed stat, and a store copied from a Mac is then found too.
    """
    override = manifest.agent_home("kiro.app", env)
    if override is not None:
        return [override]
    mac = paths.home(env) / "Library" / "Application Support" / "Kiro" / "User"
    return _unique([*paths.vscode_user_dirs(env, "Kiro"), mac])


def cli_data_dirs(env: Mapping[str, str]) -> list[Path]:
    base = manifest.agent_home("kiro.cli", env)
    assert base is not None
    if env.get("VOYAGER_KIRO_CLI_HOME"):
        return [base]
    return _unique([base, paths.home(env) / "Library" / "Application Support" / "kiro-cli"])


def _unique(dirs: list[Path]) -> list[Path]:
    seen: dict[str, Path] = {}
    for d in dirs:
        seen.setdefault(os.path.normpath(str(d)), d)
    return list(seen.values())


def _entries(folder: Path) -> Iterator[os.DirEntry[str] | Notice]:
    """The entries of ``folder`` in name order; a Notice when it exists but cannot be listed."""
    try:
        with os.scandir(folder) as it:
            entries = sorted(it, key=lambda e: e.name)
    except (FileNotFoundError, NotADirectoryError):
        return
    except OSError as exc:
        yield Notice(source=str(folder), reason=f"cannot read directory: {exc.strerror or exc}")
        return
    yield from entries


def _files(folder: Path, keep: Any, *, append_only: bool) -> Iterator[Source | Notice]:
    """A Source for each regular file in ``folder`` whose name ``keep`` accepts; a Notice for one that is not regular."""
    for entry in _entries(folder):
        if isinstance(entry, Notice):
            yield entry
            continue
        if not keep(entry.name):
            continue
        try:
            st = os.stat(entry.path)
        except OSError:
            continue
        if not os.path.isfile(entry.path):
            yield Notice(source=entry.path, reason=f"{kind_of(st.st_mode)}, not a regular file; skipped")
            continue
        yield Source(
            provider=PROVIDER,
            path=entry.path,
            append_only=append_only,
            fingerprint=Fingerprint(size=st.st_size, mtime_ns=st.st_mtime_ns, inode=st.st_ino),
        )


def _subdirs(folder: Path) -> Iterator[Path | Notice]:
    for entry in _entries(folder):
        if isinstance(entry, Notice):
            yield entry
        elif entry.is_dir():
            yield Path(entry.path)


def jsonl_ids(env: Mapping[str, str]) -> frozenset[str]:
    """The ids of the CLI's JSONL sessions (file names; no file is read), which the SQLite store must not repeat."""
    kiro = manifest.agent_home("kiro", env)
    assert kiro is not None
    try:
        with os.scandir(kiro / "sessions" / "cli") as it:
            return frozenset(e.name[:-6] for e in it if e.name.endswith(".jsonl"))
    except OSError:
        return frozenset()


def _workspace_json(name: str) -> bool:
    return name.endswith(".json") and name != "sessions.json"


class KiroAdapter:
    """Kiro's CLI JSONL sessions, kiro-cli's SQLite conversations and the IDE's session documents."""

    name: ClassVar[str] = PROVIDER

    def roots(self, env: Mapping[str, str]) -> list[Path]:
        kiro = manifest.agent_home("kiro", env)
        assert kiro is not None
        found = [kiro / "sessions"]
        for user in user_dirs(env):
            found += [user.joinpath(*AGENT_DIR), user.parent / "workspace-sessions"]
        found += [d / DB_NAME for d in cli_data_dirs(env)]
        return found

    def discover(self, env: Mapping[str, str]) -> Iterator[Source | Notice]:
        kiro = manifest.agent_home("kiro", env)
        assert kiro is not None
        sessions = kiro / "sessions"
        # The CLI: sessions/cli/*.jsonl; DJ's layout: sessions/<workspace>/sess_<uuid>/messages.jsonl.
        for sub in _subdirs(sessions):
            if isinstance(sub, Notice):
                yield sub
            elif sub.name == "cli":
                for item in _files(sub, lambda n: n.endswith(".jsonl"), append_only=True):
                    # The title and cwd live in <uuid>.json beside it: a rename changes only that file.
                    yield (
                        with_side_file(item, item.path[: -len(".jsonl")] + ".json")
                        if isinstance(item, Source)
                        else item
                    )
            else:
                for folder in _subdirs(sub):
                    if isinstance(folder, Notice):
                        yield folder
                    elif _kiro_cli.is_session_dir(folder.name):
                        for item in _files(folder, lambda n: n == "messages.jsonl", append_only=True):
                            yield with_side_file(item, folder / "session.json") if isinstance(item, Source) else item
        for user in user_dirs(env):
            agent = user.joinpath(*AGENT_DIR)
            for folder in _subdirs(agent):
                if isinstance(folder, Notice):
                    yield folder
                elif folder.name == "workspace-sessions":
                    for ws in _subdirs(folder):
                        if isinstance(ws, Notice):
                            yield ws
                        else:
                            yield from _files(ws, _workspace_json, append_only=False)
                else:
                    yield from _files(folder, lambda n: n.endswith(".chat"), append_only=False)
            for ws in _subdirs(user.parent / "workspace-sessions"):
                if isinstance(ws, Notice):
                    yield ws
                else:
                    yield from _files(ws, _workspace_json, append_only=False)
        for data in cli_data_dirs(env):
            yield from sqlite_source(PROVIDER, data / DB_NAME, named=bool(env.get("VOYAGER_KIRO_CLI_HOME")))

    def read(self, source: Source, cursor: Cursor | None = None) -> Iterator[Item]:
        path = source.path
        if path.endswith(".jsonl"):
            return _kiro_cli.read_stream(source, cursor)
        if path.endswith(".chat"):
            return _kiro_ide.read_chat(source)
        if path.endswith(".json"):
            return _kiro_ide.read_workspace_json(source)
        return _kiro_db.read_db(source, cursor, jsonl_ids(os.environ))


ADAPTER = KiroAdapter()


def probe(path: str | os.PathLike[str]) -> str:
    """Which documented Kiro variant the store at ``path`` is (see the module doc), for ``voyager doctor``."""
    p = Path(path)
    if p.suffix == ".jsonl":
        return _kiro_cli.layout_of(str(p))
    if p.suffix == ".chat":
        return "ide-chat"
    if p.suffix == ".json":
        return _kiro_ide.probe_json(p)
    schema = read_schema(p)
    if schema is None:
        return "unreadable"
    return "cli-sqlite" if _kiro_db.has_conversations(schema) else "cli-sqlite-without-conversations"
