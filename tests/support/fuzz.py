"""The fuzz tests' harness: a fixture HOME copied, mutated, read by every adapter under a deadline, judged.

Each real capture (``tests/fixtures/agents/<agent>-<version>/``) and each peers' sample
home (``shared/fixtures/peers/<agent>/home``) is copied into a temporary HOME. A mutant
(``mutations.py``) breaks one file in it; then every adapter reads the HOME exactly as
a scan calls them (``discover``, then ``read`` of each source) under a deadline, and the
outcome is judged against the bar: it ends promptly, nothing raises out of an adapter
(the scan would report that as "adapter error"), every item is well-typed (a wrong-typed
field would break the index or the state store later), the records the mutant did not
break are still read (words only they hold are still found), and no provider file
changed. The same HOMEs serve ``test_hostile_stores.py`` (special files, unreadable
pieces) through :func:`drive` and :func:`recording_opens`.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import random
import shutil
import sys
import traceback
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from tests.support import mutations as mut
from tests.support.captures import CAPTURES, capture_names, peer_homes
from tests.support.deadline import deadline
from voyager_sessions.core.model import Event, Session
from voyager_sessions.ingest import adapters as registry
from voyager_sessions.ingest.adapters.base import Cursor, Hints, Notice, Partial, Unchanged, discover, uses_hints

_opened: list[str] | None = None
_hooked = False


def _audit(event: str, args: tuple) -> None:
    if _opened is not None and event in ("open", "sqlite3.connect", "os.listdir", "os.scandir") and args:
        target = args[0]
        if isinstance(target, (str, bytes, os.PathLike)):
            _opened.append(os.fsdecode(target))


@contextmanager
def recording_opens() -> Iterator[list[str]]:
    """Every path opened, listed or statted while inside: where the adapters look, existing or not."""
    global _opened, _hooked
    if not _hooked:  # an audit hook stays for the life of the process: added only when first needed
        sys.addaudithook(_audit)
        _hooked = True
    _opened = out = []
    real_stat = os.stat

    def stat(path: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(path, (str, bytes, os.PathLike)):
            out.append(os.fsdecode(path))
        return real_stat(path, *args, **kwargs)

    os.stat = stat  # type: ignore[assignment]
    try:
        yield out
    finally:
        os.stat = real_stat  # type: ignore[assignment]
        _opened = None


def windsurf_home(home: Path) -> None:
    """A Windsurf HOME (no capture or peers' sample exists): the encrypted Cascade store, and the
    legacy chat panel in a workspace ``state.vscdb``, as ``tests/ingest/test_windsurf.py`` builds them."""
    import sqlite3

    cascade = home / ".codeium" / "windsurf" / "cascade"
    cascade.mkdir(parents=True)
    (cascade / "0a0b0c0d-aaaa-bbbb-cccc-dddddddddddd.pb").write_bytes(bytes(range(256)) * 4)
    ws = home / ".config" / "Windsurf" / "User" / "workspaceStorage" / "w1"
    ws.mkdir(parents=True)
    (ws / "workspace.json").write_text(json.dumps({"folder": "file:///home/dev/site"}))
    chat = {
        "tabs": [
            {
                "tabId": "t1",
                "chatTitle": "Deploy notes",
                "bubbles": [
                    {"type": "user", "text": "how do I deploy windsurfprompt quickly"},
                    {"type": "ai", "text": "windsurfreply use the deploy script"},
                ],
            },
            {
                "tabId": "t2",
                "bubbles": [
                    {"type": 1, "text": "windsurfsecond tab question"},
                    {"type": 2, "text": "windsurfsecondreply an answer"},
                ],
            },
        ]
    }
    conn = sqlite3.connect(ws / "state.vscdb")
    conn.execute("CREATE TABLE ItemTable (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)")
    conn.execute("INSERT INTO ItemTable VALUES (?, ?)", ("aiChat.chatdata", json.dumps(chat)))
    conn.execute("INSERT INTO ItemTable VALUES (?, ?)", ("unrelated.editor.key", "{}"))
    conn.commit()
    conn.close()


def amp_home(home: Path) -> None:
    """An Amp HOME (documented; no capture or peers' sample file): one thread as ``test_amp.py`` writes it."""
    from tests.support.samples.amp import messages, thread, write_thread

    write_thread(home, thread(messages()))


def devin_home(home: Path) -> None:
    """A Devin CLI HOME (documented; no capture or sample file): its database as ``test_devin.py`` writes it."""
    from tests.support.samples.devin import write_db

    write_db(home / ".local/share/devin/cli/sessions.db")


def exports_home(home: Path) -> None:
    """A HOME whose imports folder holds a ChatGPT and a Claude.ai export as their test modules write them."""
    from tests.support.samples.chatgpt import conversation as chatgpt_conversation
    from tests.support.samples.chatgpt import write_export as write_chatgpt_export
    from tests.support.samples.claude_ai import conversation as claude_ai_conversation
    from tests.support.samples.claude_ai import write_export as write_claude_ai_export

    folder = home / ".local/share/voyager/imports"
    write_chatgpt_export(folder / "chatgpt" / "conversations.json", [chatgpt_conversation()])
    write_claude_ai_export(folder / "claude" / "conversations.json", [claude_ai_conversation()])


def commandcode_home(home: Path) -> None:
    """A Command Code HOME (documented; no capture or sample file): a transcript as ``test_commandcode.py`` writes it."""
    from tests.support.samples.commandcode import lines, write

    write(home, lines(), {"title": "登录修复", "userRenamed": True})


def iflow_home(home: Path) -> None:
    """An iFlow CLI HOME (documented; no capture or sample file): a transcript as ``test_iflow.py`` writes it."""
    from tests.support.samples.iflow import lines, write

    write(home, lines())


def qoder_home(home: Path) -> None:
    """A Qoder CLI HOME (documented; no capture or sample file): a transcript as ``test_qoder.py`` writes it."""
    from tests.support.samples.qoder import lines, write

    write(home, lines())


def zencoder_home(home: Path) -> None:
    """A Zencoder HOME (documented; no capture or sample file): a transcript as ``test_zencoder.py`` writes it."""
    from tests.support.samples.zencoder import lines, write

    write(home, lines())


def warp_home(home: Path) -> None:
    """A Warp HOME (documented; no capture or sample file): its database as ``test_warp.py`` writes it."""
    from tests.support.samples.warp import store, write_db

    write_db(store(home))


def codebuddy_home(home: Path) -> None:
    """A CodeBuddy Code HOME (documented; no capture or sample file): a transcript as ``test_codebuddy.py`` writes it."""
    from tests.support.samples.codebuddy import lines, write

    write(home, lines())


def junie_home(home: Path) -> None:
    """A Junie HOME (documented; no capture or sample file): a session as ``test_junie.py`` writes it."""
    from tests.support.samples.junie import events, write

    write(home, events())


def turn4_home(home: Path) -> None:
    """The documented agents of #39 (no capture or peers' sample): one store each, as their test modules write
    them, in one HOME (every agent finds its own); a session kept as its own file is named by a hex id where the
    agent allows it, so that the discovery test of test_hostile_stores can copy it under new ids."""
    import json as _json
    import shutil as _shutil

    from synth import opencode as so
    from tests.support.samples import (
        auggie,
        codebuff,
        cortex,
        cowork,
        deepseek_tui,
        forge,
        opencode_forks,
        piebald,
        posit_assistant,
        positron,
        qclaw,
        qwenpaw,
        shelley,
        trae,
        traex,
        visualstudio_copilot,
        workbuddy,
    )
    from tests.support.samples import openclaude as oc
    from tests.support.samples import poolside as pool
    from tests.support.samples.copilot_vscode import rich_session
    from tests.support.items import write as write_lines

    auggie.write(home, auggie.doc())
    codebuff.write(codebuff.folder(home), codebuff.chat())
    (cortex.folder(home) / f"{cortex.SID}.json").write_text(_json.dumps(cortex.doc(), ensure_ascii=False))
    cowork.write(home)
    deepseek_tui.write(home, deepseek_tui.doc())
    forge.write_db(home, [("conv-1", "API", forge.messages())])
    for fork in opencode_forks.FORKS:
        storage = opencode_forks.data_dir(home, fork) / "storage"
        so.write_json_tree(storage, [opencode_forks.conversation()])
        _shutil.move(storage / "session", storage / "session_diff")
    db = piebald.Db(piebald.path_of(home))
    piebald.base(db)
    db.close()
    posit_assistant.conversation(
        posit_assistant.workspace(home) / "conv-9c1e4b7a", posit_assistant.lm(), posit_assistant.tree()
    )
    (positron.chat_dir(home) / "rich-9c1e4b7a.json").write_text(_json.dumps(rich_session(), ensure_ascii=False))
    qclaw.write(home, qclaw.lines())
    qwenpaw.write(home, ".qwenpaw", "console/s-9c1e4b7a.json", qwenpaw.current(qwenpaw.messages()))
    shelley.write_db(home, [("c1", "deploy", 1, None)], {"c1": shelley.main_messages()})
    trae.state_db(trae.workspace(home) / "state.vscdb", [trae.session("s-1", "修复登录 PROMPT_TRAE")])
    traex.write(home, traex.rollout())
    one, two = visualstudio_copilot.turn()
    write_lines(visualstudio_copilot.folder(home) / "a_VSGitHubCopilot_traces.jsonl", [one, two])
    write_lines(workbuddy.log(home, "s-9c1e4b7a.jsonl"), workbuddy.items())
    oc.write(home, oc.lines())
    write_lines(pool.path(home), pool.events())


def turn4_variants_home(home: Path) -> None:
    """The storage variants of #39 beside their agents' captures: Prime Agent's (pi), Kimi Work's (kimi), Kilo's old
    VS Code extension (kilo), Zoo Code's (roo), and a Gemini Apps Takeout in the imports folder."""
    from tests.support.items import write as write_lines
    from tests.support.samples import gemini_apps, kilo_legacy

    header = {
        "type": "session",
        "version": 3,
        "id": "prime-1",
        "timestamp": "2026-12-01T08:03:08.820Z",
        "cwd": "/home/dev/p",
    }
    prompt = {
        "type": "message",
        "id": "u1",
        "parentId": None,
        "timestamp": "2026-12-01T08:03:09Z",
        "message": {"role": "user", "content": [{"type": "text", "text": "primeprompt 重构"}]},
    }
    write_lines(home / ".prime/agent/sessions/2026_prime-1.jsonl", [header, prompt])
    wire = [
        {"type": "metadata", "protocol_version": "1.10"},
        {"timestamp": 1796112502.0, "message": {"type": "TurnBegin", "payload": {"user_input": "kimiworkprompt 整理"}}},
        {
            "timestamp": 1796112503.0,
            "message": {"type": "ContentPart", "payload": {"type": "text", "text": "kimiworkreply 好的"}},
        },
    ]
    write_lines(
        home / ".config/kimi-desktop/daimon-share/daimon/runtime/kimi-code/home/sessions/wd_p_1/conv-1/wire.jsonl", wire
    )
    kilo_legacy.task(home)
    zoo = home / ".config/Code/User/globalStorage/zoocodeorganization.zoo-code/tasks/zoo-1"
    zoo.mkdir(parents=True)
    (zoo / "ui_messages.json").write_text(json.dumps(kilo_legacy.ui(), ensure_ascii=False))
    folder = home / ".local/share/voyager/imports"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "MyActivity.html").write_text(gemini_apps.activity(), encoding="utf-8")


#: HOMEs built here for agents with neither a capture nor a peers' sample.
SYNTHETIC: dict[str, Callable[[Path], None]] = {
    "synthetic-windsurf": windsurf_home,
    "synthetic-amp": amp_home,
    "synthetic-devin": devin_home,
    "synthetic-exports": exports_home,
    "synthetic-commandcode": commandcode_home,
    "synthetic-iflow": iflow_home,
    "synthetic-qoder": qoder_home,
    "synthetic-zencoder": zencoder_home,
    "synthetic-warp": warp_home,
    "synthetic-codebuddy": codebuddy_home,
    "synthetic-junie": junie_home,
    "synthetic-turn4": turn4_home,
    "synthetic-turn4-variants": turn4_variants_home,
}


def fixture_homes() -> list[tuple[str, Path | Callable[[Path], None]]]:
    """(name, folder to copy as HOME or a function that writes one) for every capture, every peers'
    sample and every synthetic HOME."""
    out: list[tuple[str, Path | Callable[[Path], None]]] = list(SYNTHETIC.items())
    out += [(name, CAPTURES / name) for name in capture_names()]
    out += [(f"peer-{home.parent.name}", home) for home in peer_homes()]
    return out


def tree(root: Path) -> dict[str, str]:
    """Relative path -> sha256 and mode (``dir`` for a directory, ``link`` + target for a symlink) of everything
    under ``root``: a read must change neither a provider file's bytes nor its permissions."""
    out = {}
    for p in sorted(root.rglob("*")):
        rel = str(p.relative_to(root))
        if p.is_symlink():
            out[rel] = "link:" + os.readlink(p)
        elif p.is_dir():
            out[rel] = "dir"
        elif p.name.endswith("-shm") and p.with_name(p.name[:-4] + "-wal").exists():
            # SQLite's shared-memory index of a live WAL: every reader maintains it (see test_captures._tree).
            out[rel] = "shm"
        elif p.is_file():
            out[rel] = f"{hashlib.sha256(p.read_bytes()).hexdigest()} {p.stat().st_mode:o}"
        else:
            out[rel] = "special"
    return out


@dataclass
class Outcome:
    """What every adapter did with one HOME."""

    items: list[Any] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)  # an exception out of discover or read, with its traceback
    sources: int = 0
    #: The providers that found anything (a source or a notice).
    found_by: set[str] = field(default_factory=set)

    @property
    def notices(self) -> list[Notice]:
        return [i for i in self.items if isinstance(i, Notice)]

    def words(self) -> set[str]:
        """Every word of every event's text and session title: what a search can find."""
        out: set[str] = set()
        for item in self.items:
            if isinstance(item, Event):
                out.update(w.lower() for w in mut._WORD.findall(item.text))
            elif isinstance(item, Session) and item.title:
                out.update(w.lower() for w in mut._WORD.findall(item.title))
        return out


def check_item(item: Any) -> str | None:
    """Why ``item`` could not go into the index or the state store as it is; None when it can."""
    if isinstance(item, (Notice, Cursor, Unchanged, Partial)):
        if isinstance(item, Notice) and not (isinstance(item.reason, str) and isinstance(item.source, str)):
            return f"notice of wrong types: {item!r}"[:300]
        if isinstance(item, Cursor):
            try:
                msgspec.json.encode(item)
            except (TypeError, msgspec.EncodeError, OverflowError) as exc:
                return f"cursor cannot be stored: {exc}"
        return None
    if not isinstance(item, (Session, Event)):
        return f"not an item: {type(item).__name__}"
    try:
        msgspec.convert(msgspec.structs.asdict(item), type(item))
    except msgspec.ValidationError as exc:
        return f"{type(item).__name__} of wrong types: {exc}: {item!r}"[:400]
    for name in item.__struct_fields__:
        value = getattr(item, name)
        if isinstance(value, str):
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:
                return f"{type(item).__name__}.{name} holds a lone surrogate: {value[:80]!r}"
        elif isinstance(value, float) and not math.isfinite(value):
            return f"{type(item).__name__}.{name} is {value}"
    return None


def drive(env: Mapping[str, str], providers: list[str] | None = None, *, timeout: float = 20.0) -> Outcome:
    """Every adapter's discover and read, as a scan calls them, under ``timeout``; nothing raised is lost."""
    out = Outcome()
    cwds: set[str] = set()
    with deadline(timeout):
        for name in providers or registry.PROVIDERS:
            adapter = registry.get(name)
            hinted = uses_hints(adapter)
            rounds = [Hints()] if not hinted else [Hints(), None]
            seen: set[str] = set()
            for hints in rounds:
                if hints is None:
                    hints = Hints(cwds=frozenset(cwds))
                try:
                    found = list(discover(adapter, env, hints))
                except Exception:
                    out.errors.append(f"{name}: discover raised:\n{traceback.format_exc()}")
                    continue
                if found:
                    out.found_by.add(name)
                for src in found:
                    if isinstance(src, Notice):
                        out.items.append(src)
                        continue
                    if src.path in seen:
                        continue
                    seen.add(src.path)
                    out.sources += 1
                    try:
                        for item in adapter.read(src, None):
                            out.items.append(item)
                            if isinstance(item, Session) and isinstance(item.cwd, str):
                                cwds.add(item.cwd)
                    except Exception:
                        out.errors.append(f"{name}: read {src.path} raised:\n{traceback.format_exc()}")
    return out


class FuzzHome:
    """One fixture copied into ``tmp/home`` (writable, ours), with what an unmutated read finds in it."""

    def __init__(self, name: str, src: Path | Callable[[Path], None], tmp: Path) -> None:
        self.name = name
        self.src = src
        self.tmp = tmp
        self.home = tmp / "home"
        self.pristine = tmp / "pristine"
        self.fresh()
        self.env = {"HOME": str(self.home)}
        self.baseline = drive(self.env)
        assert not self.baseline.errors, self.baseline.errors
        #: The adapters worth running on this HOME: those that found anything in it, and those led by
        #: the cwds sessions name (a mutated cwd may lead them anywhere).
        self.providers = [p for p in registry.PROVIDERS if p in self.baseline.found_by or uses_hints(registry.get(p))]
        self.found = self.baseline.words()
        self.files = self._session_files()
        self.decoded = {rel: mut.decode(self.home / rel, kind) for rel, kind in self.files.items()}
        counts: dict[str, int] = {}
        for d in self.decoded.values():
            for words in d.words:
                for w in words:
                    counts[w] = counts.get(w, 0) + 1
        #: Per file, per record: the words only that record holds and an unmutated read finds.
        self.markers = {
            rel: [sorted(w for w in words if counts[w] == 1 and w in self.found) for words in d.words]
            for rel, d in self.decoded.items()
        }

    def fresh(self) -> None:
        """The HOME as the fixture has it (again), copied whole."""
        if not self.pristine.exists():
            if callable(self.src):
                self.pristine.mkdir(parents=True)
                self.src(self.pristine)
            else:
                mut.copy_tree(self.src, self.pristine)
            projects = self.pristine / ".local/share/crush/projects.json"
            if projects.is_file():  # the sample names its data dirs under HOME=/home/dev
                projects.write_text(projects.read_text().replace('"/home/dev/', f'"{self.home}/'))
        if self.home.exists() or self.home.is_symlink():
            _rmtree(self.home)
        shutil.copytree(self.pristine, self.home, symlinks=True)

    def restore(self, rel: str) -> None:
        """Put back one file a mutant rewrote (with its SQLite side files), cheaper than :meth:`fresh`."""
        for name in (rel, rel + "-wal", rel + "-shm", rel + "-journal"):
            here, there = self.home / name, self.pristine / name
            if here.exists() or here.is_symlink():
                here.unlink()
            if there.exists():
                shutil.copy2(there, here)

    def _session_files(self) -> dict[str, str]:
        out = {}
        for p in sorted(self.home.rglob("*")):
            if p.is_file() and not p.is_symlink() and (kind := mut.classify(p)) is not None:
                out[str(p.relative_to(self.home))] = kind
        return out

    def mutants(self, rel: str, seed: int, *, full: bool) -> list[mut.Mutant]:
        return mut.file_mutants(self.home / rel, self.files[rel], random.Random(seed), full=full)

    def expected(self, rel: str, m: mut.Mutant, rng: random.Random, per_file: int = 4) -> dict[str, str]:
        """Words the read must still find after ``m`` broke ``rel``: word -> where it stands."""
        d = self.decoded[rel]
        record = m.record
        if isinstance(record, tuple):  # a SQLite row: its neighbours are the other rows of its table
            _, table, rowid = record
            record = d.rows.index((table, rowid)) if (table, rowid) in d.rows else None
            same_table = {i for i, (t, _) in enumerate(d.rows) if t == table}
        else:
            same_table = set(range(len(d.values)))
        if m.keeps is not None:
            kept = set(m.keeps)
        else:
            kept = same_table - ({record} if record is not None else set())
        out: dict[str, str] = {}
        # Neighbours first: the records right beside the broken one, then a few others.
        order = sorted(kept, key=lambda i: (abs(i - record) if record is not None else 0, i))
        for i in order[:2] + rng.sample(order[2:], min(len(order) - 2, per_file)) if len(order) > 2 else order:
            if self.markers[rel][i]:
                out[rng.choice(self.markers[rel][i])] = f"{rel} record {i}"
        # One broken file costs no other file.
        for other, records in self.markers.items():
            candidates = [(i, w) for i, words in enumerate(records) for w in words]
            if other != rel and candidates:
                i, w = rng.choice(candidates)
                out[w] = f"{other} record {i}"
        return out


def _rmtree(path: Path) -> None:
    if path.is_symlink() or not path.is_dir():
        path.unlink()
        return
    for p in [path, *path.rglob("*")]:
        if not p.is_symlink():
            try:
                p.chmod(0o700 if p.is_dir() else 0o600)
            except OSError:
                pass
    shutil.rmtree(path)


def judge(
    home: FuzzHome,
    rel: str,
    m: mut.Mutant,
    out: Outcome,
    expected: Mapping[str, str],
    before: dict[str, str],
    *,
    seconds: float,
    limit: float,
) -> list[str]:
    """Everything wrong with ``out``, the read of ``home`` after ``m`` broke ``rel``; [] when it met the bar."""
    problems = list(out.errors)
    if seconds > limit:
        problems.append(f"took {seconds:.1f} s (limit {limit:g} s)")
    for item in out.items:
        if (why := check_item(item)) is not None:
            problems.append(why)
            break
    words = out.words()
    lost = {w: where for w, where in expected.items() if w not in words}
    if lost:
        reasons = "; ".join(n.describe()[:200] for n in out.notices[:4])
        problems.append(f"lost unbroken neighbours {lost} (notices: {reasons})")
    after = tree(home.home)
    if after != before:
        changed = sorted(k for k in set(after) | set(before) if after.get(k) != before.get(k))
        problems.append(f"provider files changed: {changed[:5]}")
    return problems
