"""The agent manifest's contract, run over every row: what a row declares, its adapter does.

For each agent: the row's module has the adapter and exactly the capabilities the row declares;
in a fake HOME built from its homes the adapter looks nowhere else, and finds its store there (its real
capture, ``tests/fixtures/agents``, where one exists), and where each home's ``VOYAGER_…`` override moves it; reading every source leaves every file
byte-identical and creates nothing; every resume command reads back exactly, with the row's program,
even when the session's directory is hostile; and a record of a kind it does not know is named in a
notice, never silently dropped.

Then a 31st agent, defined here (one row and one class), is registered through the manifest's own hook
and shows up in the registry, in ``voyager doctor --json``, in the docs' tables and in a scan, with no
other file edited: what adding an agent takes (docs/contributing.md walks through it).
"""

from __future__ import annotations

import hashlib
import importlib
import inspect
import json
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import ClassVar

import pytest

from tests.support.captures import CAPTURES, capture_names, provider_of
from tests.support.relocate import relocate
from tests.support.run import Run
from voyager_sessions.api.resume import ResumeRecipe, parse_command, recipe
from voyager_sessions.core.model import Event, Session, session_id
from voyager_sessions.ingest import adapters as registry
from voyager_sessions.ingest import manifest
from voyager_sessions.ingest.adapters.base import Cursor, Item, Notice, Source, discover, fingerprint

#: The store kinds a row may name (a new kind is added here with the docs that explain it).
STORE_KINDS = {"jsonl", "json", "sqlite", "markdown", "html", "encrypted", "jsonl+zstd", "sqlite+zstd"}

#: Where the captures' agents ran (truth.json's ``home``); text files name it in every cwd.
CAPTURE_HOME = b"/home/dev"
#: A directory name no shell may read as anything but one word: the sessions' cwd and the fake HOME sit below it.
HOSTILE = "it's $(touch pwned) `id`; x && y | z *"
HOSTILE_CWD = f"/tmp/{HOSTILE}".encode()

#: Captures whose sessions' directory relocating the copy cannot move, and why.
CWD_NOT_MOVED = {"gptme": "its cwd is the target of the conversation's `workspace` symlink (/root/proj), not text"}


def _first_capture(provider: str) -> str | None:
    """The plain capture of ``provider`` (not a ``-compact``/``-subagent`` variant), if there is one."""
    names = [n for n in capture_names() if provider_of(n) == provider]
    plain = [n for n in names if not n.endswith(("-compact", "-subagent"))]
    return (plain or names or [None])[0]


def _tree(root: Path) -> dict[str, str]:
    """Relative path -> sha256 (or "dir") of everything under ``root``: a hash and a listing at once.

    A ``-shm`` beside a ``-wal`` is listed, not hashed: SQLite's shared-memory index of the WAL, which
    every reader of a database with a live WAL maintains (see test_captures); it must still not appear.
    """
    out = {}
    for p in sorted(root.rglob("*")):
        rel = str(p.relative_to(root))
        if p.is_dir() and not p.is_symlink():
            out[rel] = "dir"
        elif p.name.endswith("-shm") and p.with_name(p.name[:-4] + "-wal").exists():
            out[rel] = "shm"
        else:
            out[rel] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def _env(home: Path) -> dict[str, str]:
    """An environment naming only the fake HOME: every agent variable unset, nothing of the real user's."""
    return {"HOME": str(home)}


def _under(path: Path | str, root: Path) -> bool:
    return Path(path).is_relative_to(root)


def _read_all(adapter: object, env: Mapping[str, str]) -> tuple[list[Source], list[Item]]:
    sources, items = [], []
    for found in discover(adapter, env):  # type: ignore[arg-type]
        if isinstance(found, Source):
            sources.append(found)
            items += list(adapter.read(found))  # type: ignore[attr-defined]
    return sources, items


# -- the contract, one function a clause, so the 31st agent below runs the same ----------------------------


def check_declaration(agent: manifest.Agent) -> None:
    """The row's module has its adapter, and the capabilities the row declares are the ones it has."""
    module = importlib.import_module(agent.module)
    adapter = module.ADAPTER
    assert adapter.name == agent.name
    assert agent.probe == callable(getattr(module, "probe", None)), (
        "declare probe=True exactly when the module has probe()"
    )
    takes_hints = len(inspect.signature(adapter.discover).parameters) >= 2
    assert agent.uses_hints == takes_hints, "declare uses_hints=True exactly when discover(env, hints) takes hints"
    assert (agent.evidence == "observed") == bool(agent.versions), "observed agents name the versions seen"
    assert agent.stores and set(agent.stores) <= STORE_KINDS, agent.stores
    assert agent.homes, "every agent has at least one home"
    assert any(entries[0][0].startswith("VOYAGER_") for entries in agent.homes.values()), "no VOYAGER_ override"
    assert agent.where and agent.resume
    assert agent.binary is None or f"{agent.binary} " in agent.resume, "the resume text names the row's program"


def check_looks_only_in_its_homes(agent: manifest.Agent, home: Path) -> None:
    """With nothing but HOME set, every place the adapter names is below that HOME."""
    adapter = registry.get(agent.name)
    roots = adapter.roots(_env(home))
    outside = [str(r) for r in roots if not _under(r, home)]
    assert not outside, f"{agent.name} looks outside the fake HOME: {outside}"


def check_reads_without_writing(agent: manifest.Agent, home: Path) -> list[Item]:
    """Every source found under ``home`` is below it and read; nothing in ``home`` changes or appears."""
    adapter = registry.get(agent.name)
    before = _tree(home)
    sources, items = _read_all(adapter, _env(home))
    assert _tree(home) == before, f"{agent.name} changed or created files beside its store"
    assert all(_under(s.path, home) for s in sources)
    return items


def check_resume_reads_back(agent: manifest.Agent, sessions: list[Session]) -> None:
    """Each session's resume command is the adapter's shape, quoted, run by the row's program (or none)."""
    for s in sessions:
        if agent.binary is None:
            assert s.resume is None, (agent.name, s.resume)
            continue
        if s.resume is None:  # a session with nothing to resume (a subagent, say) may have none
            continue
        parsed = parse_command(s.resume)  # None unless quoting its words again rebuilds it byte for byte
        assert parsed is not None, f"{agent.name}: {s.resume!r} does not read back exactly"
        argv, _ = parsed
        assert argv[0] == agent.binary, (agent.name, argv)
        # Every option the command holds is one the row's resume cell names (the docs say the whole command,
        # and an option named nowhere could only have come from the agent's files).
        declared = {
            o
            for span in re.findall(r"`([^`]*)`", agent.resume)
            for o in re.findall(r"(?<![\w-])--?[A-Za-z][A-Za-z0-9-]*", span)
        }
        used = {w.partition("=")[0] for w in argv[1 : argv.index("--") if "--" in argv else None] if w.startswith("-")}
        assert used <= declared, (agent.name, used - declared)


def _hostile_copy(capture: Path, home: Path) -> None:
    """``capture`` copied into ``home`` as if its agent had run in a hostile directory (text, SQLite, hashed dirs)."""
    shutil.copytree(capture, home, symlinks=True, ignore=shutil.ignore_patterns("truth.json"))
    relocate(home, CAPTURE_HOME.decode(), HOSTILE_CWD.decode())


ROWS = [pytest.param(name, id=name) for name in manifest.names()]


@pytest.mark.parametrize("name", ROWS)
def test_row_matches_its_adapter(name: str) -> None:
    check_declaration(manifest.row(name))


@pytest.mark.parametrize("name", ROWS)
def test_looks_only_in_the_fake_home(name: str, tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    check_looks_only_in_its_homes(manifest.row(name), home)


@pytest.mark.parametrize("name", ROWS)
def test_reads_its_capture_without_writing_and_quotes_resume(name: str, tmp_path: Path) -> None:
    agent = manifest.row(name)
    capture = _first_capture(name)
    if capture is None:
        pytest.skip(f"{name} has no real capture (documented); its test module's fixtures cover it")
    home = tmp_path / HOSTILE / "home"  # agents whose cwd is where their file sits (Aider) get it too
    _hostile_copy(CAPTURES / capture, home)
    items = check_reads_without_writing(agent, home)
    sessions = [i for i in items if isinstance(i, Session)]
    assert sessions, f"{name}: nothing read from its capture in the fake HOME"
    assert any(isinstance(i, Event) for i in items)
    check_resume_reads_back(agent, sessions)
    hostile = [s for s in sessions if s.cwd and HOSTILE in s.cwd and s.resume]
    assert hostile or agent.binary is None or name in CWD_NOT_MOVED, (
        f"{name}: no resumable session ran in the hostile directory"
    )
    for s in hostile:  # the hostile directory reached the command as one word, not as shell syntax
        r = recipe(s)
        assert r is not None and not r.shell, s.resume
        assert any(HOSTILE in part for part in (r.cwd or "", *r.argv)), s.resume


@pytest.mark.parametrize("name", ROWS)
def test_its_override_variables_move_it(name: str, tmp_path: Path) -> None:
    """Each home's ``VOYAGER_…`` override, pointed at the store moved out of HOME, is where the adapter then finds it."""
    agent = manifest.row(name)
    capture = _first_capture(name)
    if capture is None:
        pytest.skip(f"{name} has no real capture (documented); its test module's fixtures cover it")
    home, moved = tmp_path / "home", tmp_path / "moved"
    shutil.copytree(CAPTURES / capture, home, symlinks=True, ignore=shutil.ignore_patterns("truth.json"))
    adapter = registry.get(name)
    before = sorted(s.path for s in discover(adapter, _env(home)) if isinstance(s, Source))
    env = _env(home)
    relocated: dict[str, Path] = {}  # the default dir under HOME -> where it went
    for home_name, entries in agent.homes.items():
        (var, sub), default = entries[0], dict(entries).get("HOME")
        if not var.startswith("VOYAGER_") or not default or not (home / default).is_dir():
            continue
        target = moved / home_name / default  # keep the default's own path below it (some adapters read parents)
        value = str(target.parents[len(Path(sub).parts) - 1]) if sub else str(target)
        if env.get(var, value) != value:
            pytest.skip(f"{name}: {var} names several homes at different places")
        env[var] = value
        if (home / default).exists():
            relocated[str(home / default)] = target
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.move(home / default, target)
    if not relocated:
        pytest.skip(f"{name}: its capture holds no home with a default under HOME and an override")
    after = sorted(s.path for s in discover(adapter, env) if isinstance(s, Source))

    def where_now(path: str) -> str:
        for old, new in relocated.items():
            if Path(path).is_relative_to(old):
                return str(new / Path(path).relative_to(old))
        return path

    assert after == sorted(where_now(p) for p in before), f"{name}: the override did not move what it found"
    assert after, f"{name}: nothing found through its override"


def _copied(name: str, tmp_path: Path) -> tuple[manifest.Agent, Path, list[Source]]:
    """The row, a fake HOME holding a copy of its capture, and the sources found there (skip without a capture)."""
    agent = manifest.row(name)
    capture = _first_capture(name)
    if capture is None:
        pytest.skip(f"{name} has no real capture (documented); its test module's fixtures cover it")
    home = tmp_path / "home"
    shutil.copytree(CAPTURES / capture, home, symlinks=True, ignore=shutil.ignore_patterns("truth.json"))
    adapter = registry.get(name)
    return agent, home, [s for s in discover(adapter, _env(home)) if isinstance(s, Source)]


def _reread(name: str, home: Path, path: str) -> list[Item]:
    adapter = registry.get(name)
    fresh = next(s for s in discover(adapter, _env(home)) if isinstance(s, Source) and s.path == path)
    return list(adapter.read(fresh))


@pytest.mark.parametrize("name", ROWS)
def test_an_unknown_record_is_named_not_dropped(name: str, tmp_path: Path) -> None:
    """A record of a kind the adapter has never seen, appended to a copy of its JSONL log, comes back as a notice."""
    _, home, sources = _copied(name, tmp_path)
    logs = [s for s in sources if s.path.endswith(".jsonl")]
    if not logs:
        pytest.skip(f"{name}: no JSONL log in its capture to append an unknown record to")
    with open(logs[0].path, "ab") as f:
        f.write(b'{"type": "voyager-contract-unknown", "payload": {"x": 1}}\n')
    items = _reread(name, home, logs[0].path)
    assert any(isinstance(i, Notice) for i in items), f"{name}: an unknown record was dropped without a notice"


@pytest.mark.parametrize("name", ROWS)
def test_a_source_of_unknown_shape_is_never_silently_empty(name: str, tmp_path: Path) -> None:
    """A text source rewritten to a shape the agent never wrote: a notice, or no session (the scan then says so)."""
    _, home, sources = _copied(name, tmp_path)
    texts = [s for s in sources if s.path.endswith((".json", ".jsonl", ".md")) and Path(s.path).is_file()]
    if not texts:
        pytest.skip(f"{name}: no text source in its capture to rewrite")
    source = texts[0]
    Path(source.path).write_text('{"voyager-contract": "a shape no agent writes"}\n')
    items = _reread(name, home, source.path)
    named = any(isinstance(i, Notice) for i in items)
    empty = not any(isinstance(i, (Session, Event)) for i in items) and not source.empty_ok
    assert named or empty, f"{name}: read a source of unknown shape as if it were fine: {items[:3]}"


def test_the_manifest_imports_no_adapter() -> None:
    """Names, labels and homes cost one small table: no adapter module is imported to answer them."""
    code = (
        "import sys; from voyager_sessions.ingest import manifest, adapters; manifest.agent_variables(); "
        "adapters.PROVIDERS; print([m for m in sys.modules if m.startswith('voyager_sessions.ingest.adapters.')])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


# -- a 31st agent: one row, one class, nothing else edited ---------------------------------------------------


class ToyAdapter:
    """A tiny agent defined in this test: one ``~/.toy/<id>.jsonl`` a session, one ``{"said": …}`` line a prompt."""

    name: ClassVar[str] = "toy"

    def roots(self, env: Mapping[str, str]) -> list[Path]:
        return [manifest.agent_home("toy", env)]  # type: ignore[list-item]  # HOME is its last resort

    def discover(self, env: Mapping[str, str]) -> Iterator[Source | Notice]:
        for root in self.roots(env):
            for path in sorted(root.glob("*.jsonl")) if root.is_dir() else ():
                yield Source(provider=self.name, path=str(path), fingerprint=fingerprint(path), append_only=True)

    def read(self, source: Source, cursor: Cursor | None = None) -> Iterator[Item]:
        native = Path(source.path).stem
        sid = session_id(self.name, native)
        yield Session(
            id=sid,
            provider=self.name,
            native_id=native,
            cwd="/tmp",
            resume=ResumeRecipe(argv=("toy", "--resume", native), cwd="/tmp").command(),
            source=source.path,
        )
        with open(source.path, "rb") as f:
            for seq, line in enumerate(f):
                record = json.loads(line)
                if "said" in record:
                    yield Event(session=sid, seq=seq, kind="user", origin="human", text=record["said"])
                else:
                    yield Notice(source=source.path, where=f"line {seq + 1}", reason="unknown record: skipped")


ADAPTER = ToyAdapter()


def probe(path: str) -> str:
    """The toy's shape of one source (declared on its row, so ``doctor`` calls it)."""
    return "toy-v1"


TOY = manifest.Agent(
    name="toy",
    label="Toy Agent",
    module=__name__,
    evidence="observed",
    versions=("0.0.1",),
    homes={"toy": (("VOYAGER_TOY_HOME", ""), ("HOME", ".toy"))},
    stores=("jsonl",),
    where="`~/.toy/*.jsonl`",
    resume="`toy --resume <id>` in cwd",
    binary="toy",
    probe=True,
)


@pytest.fixture
def toy(home: Path) -> Iterator[Path]:
    """The toy agent registered, with one session in the fake HOME; unregistered afterwards."""
    manifest.register(TOY)
    try:
        (home / ".toy").mkdir()
        (home / ".toy" / "t1.jsonl").write_text('{"said": "TOYMARKER hello"}\n')
        yield home
    finally:
        manifest.unregister("toy")


def test_a_new_agent_is_one_row_and_one_class(toy: Path, tmp_path: Path) -> None:
    assert "toy" in registry.PROVIDERS and registry.get("toy") is ADAPTER
    assert "VOYAGER_TOY_HOME" in manifest.agent_variables()
    check_declaration(TOY)
    check_looks_only_in_its_homes(TOY, toy)
    items = check_reads_without_writing(TOY, toy)
    check_resume_reads_back(TOY, [i for i in items if isinstance(i, Session)])
    # doctor: its label, evidence, where it looked, what it found and the shape its probe names
    run = Run()
    doc = run.json("doctor", "--json")
    row = next(p for p in doc["providers"] if p["provider"] == "toy")
    assert (row["label"], row["evidence"], row["versions"]) == ("Toy Agent", "observed", ["0.0.1"])
    assert row["roots_found"] == [str(toy / ".toy")] and row["sources"] == 1 and row["shapes"] == {"toy-v1": 1}
    # the docs' tables
    line = "| Toy Agent | `toy` | observed 0.0.1 | `~/.toy/*.jsonl` |"
    assert line + " `toy --resume <id>` in cwd |" in manifest.docs_table().splitlines()
    assert line in manifest.readme_table().splitlines()
    # and a scan indexes it like any other agent
    res = run("scan", "--json", "--provider", "toy")
    assert res.exit_code == 0, res.stderr
    hits = json.loads(run("search", "TOYMARKER", "--json", "--no-refresh").stdout)["hits"]
    assert [(h["provider"], h["kind"]) for h in hits] == [("toy", "user")]


def test_register_refuses_a_name_or_home_already_taken() -> None:
    with pytest.raises(ValueError, match="already registered"):
        manifest.register(manifest.row("claude"))
    with pytest.raises(ValueError, match="homes already declared"):
        manifest.register(manifest.Agent(name="other", label="Other", module=__name__, homes={"claude": ()}))
    with pytest.raises(ValueError, match="built-in"):
        manifest.unregister("claude")
