"""Stores that are not what an adapter expects: special files, loops, unreadable pieces, a root that is a file.

Every real capture and peers' sample HOME (see ``tests/support/fuzz.py``) is copied and, piece by piece,
broken the ways a file system can surprise a reader: a FIFO, a socket, a symlink to itself,
a dangling symlink or a directory where a session file is expected (and where an adapter
merely looks for an optional side file); a symlink cycle inside a store folder; a file or
folder it may not read (as a user that permissions bind: root reads everything, so the check
runs in a forked child as ``nobody``); a store root that is a plain file. Each adapter must
end promptly, raise nothing, and leave the odd thing as it found it. Finally, discovery
must stay linear in the number of sessions.
"""

from __future__ import annotations

import hashlib
import os
import random
import re
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support import special
from tests.support.fuzz import FuzzHome, drive, fixture_homes, recording_opens
from voyager_sessions.ingest import adapters as registry
from voyager_sessions.ingest.adapters.base import Source, discover
from voyager_sessions.ingest.manifest import agent_variables

HOMES = dict(fixture_homes())
#: Cases a HOME gets per kind of odd thing (seeded choice among its files and folders): CI-sized.
PER_HOME = 3
DEADLINE = 10.0


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in (*agent_variables(), "XDG_CONFIG_HOME"):
        monkeypatch.delenv(var, raising=False)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, FuzzHome]]:
    cache: dict[str, FuzzHome] = {}

    def get(name: str) -> FuzzHome:
        if name not in cache:
            cache[name] = FuzzHome(name, HOMES[name], tmp_path_factory.mktemp(name))
        return cache[name]

    yield get  # type: ignore[misc]


def _rng(*parts: str) -> random.Random:
    return random.Random(int.from_bytes(hashlib.sha256("/".join(parts).encode()).digest()[:4], "big"))


def _pick(items: list, k: int, rng: random.Random) -> list:
    return items if len(items) <= k else rng.sample(items, k)


def _probed_missing(h: FuzzHome) -> list[Path]:
    """Paths the adapters look for in this HOME that do not exist, inside folders that do (optional side files)."""
    with recording_opens() as seen:
        drive(h.env, h.providers)
    out = []
    for p in sorted({Path(s) for s in seen}):
        if (
            str(p).startswith(str(h.home) + os.sep)
            and not os.path.lexists(p)
            and p.parent.is_dir()
            and p.parent != h.home
        ):
            out.append(p)
    return out


@pytest.mark.skipif(not HOMES, reason="no fixture HOME")
@pytest.mark.parametrize("name", sorted(HOMES))
def test_special_files_and_loops_never_block_or_raise(built, name: str) -> None:
    h: FuzzHome = built(name)
    rng = _rng("special", name)
    files = [h.home / rel for rel in h.files] + _probed_missing(h)
    folders = [p for p in sorted(h.home.rglob("*")) if p.is_dir() and not p.is_symlink()]
    cases = [(p, kind) for kind in special.SPECIALS for p in _pick(files, PER_HOME, rng)]
    cases += [(p, "dir_loop") for p in _pick(folders, PER_HOME, rng)]
    problems = []
    for target, kind in cases:
        h.fresh()
        rel = target.relative_to(h.home)
        target = h.home / rel
        (special.dir_loop if kind == "dir_loop" else special.SPECIALS[kind])(target)
        before = os.lstat(target).st_mode
        started = time.monotonic()
        out = drive(h.env, h.providers, timeout=DEADLINE)
        took = time.monotonic() - started
        if out.errors:
            problems.append(f"{kind} at {rel}: {out.errors[0]}")
        elif took > DEADLINE / 2:
            problems.append(f"{kind} at {rel}: took {took:.1f} s")
        elif os.lstat(target).st_mode != before:
            problems.append(
                f"{kind} at {rel}: changed by the read ({oct(before)} -> {oct(os.lstat(target).st_mode) if os.path.lexists(target) else None})"
            )
    h.fresh()
    assert not problems, "\n".join(problems)


def _homes_of(provider: str, built) -> list[FuzzHome]:
    return [h for name in sorted(HOMES) if provider in (h := built(name)).baseline.found_by]


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork to read as an unprivileged user")
@pytest.mark.parametrize("provider", registry.PROVIDERS)
def test_unreadable_files_and_folders_are_skipped_not_raised(built, provider: str) -> None:
    homes = _homes_of(provider, built)
    if not homes:
        pytest.skip(f"no fixture HOME holds a {provider} store")
    problems: list[str] = []
    for h in homes:
        rng = _rng("unreadable", provider, h.name)
        targets = [p for p in sorted(h.home.rglob("*")) if not p.is_symlink()]
        chosen = [str(p.relative_to(h.home)) for p in _pick(targets, 2 * PER_HOME, rng)]
        h.fresh()

        def each_unreadable(home: Path = h.home, env: dict = h.env, chosen: list[str] = chosen) -> list[str]:
            found = []
            for rel in chosen:
                target = home / rel
                mode = target.stat().st_mode
                target.chmod(0)
                try:
                    out = drive(env, [provider], timeout=DEADLINE)
                finally:
                    target.chmod(mode)
                found += [f"{rel} unreadable: {e}" for e in out.errors[:1]]
            return found

        problems += [f"{h.name}: {p}" for p in special.unprivileged(each_unreadable, h.home)]  # type: ignore[union-attr]
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("provider", registry.PROVIDERS)
def test_a_store_root_that_is_a_file_is_no_error(tmp_path: Path, provider: str) -> None:
    adapter = registry.get(provider)
    home = tmp_path / "home"
    home.mkdir()
    env = {"HOME": str(home)}
    roots = [r for r in adapter.roots(env) if str(r).startswith(str(home) + os.sep)]
    for root in roots:
        root.parent.mkdir(parents=True, exist_ok=True)
        root.write_text("not a folder\n")
    out = drive(env, [provider], timeout=DEADLINE)
    assert not out.errors, out.errors[0]
    # The override variable naming a file is the same case, said by the user.
    override = tmp_path / "override-is-a-file"
    override.write_text("x")
    named = {
        var: str(override)
        for var in agent_variables()
        if var.startswith(f"VOYAGER_{provider.upper().replace('-', '_')}")
    }
    out = drive({**env, **named}, [provider], timeout=DEADLINE)
    assert not out.errors, out.errors[0]
    assert all(p.read_text() == "not a folder\n" for p in roots)
    # HOME itself a file: every default root lies under a file.
    home_file = tmp_path / "home-is-a-file"
    home_file.write_text("x")
    out = drive({"HOME": str(home_file)}, [provider], timeout=DEADLINE)
    assert not out.errors, out.errors[0]


# -- discovery in linear time ------------------------------------------------------------------------

_ID_RUN = re.compile(r"[0-9a-f]{6,}")


def _renamed(name: str, i: int) -> str | None:
    """``name`` with the last 6 digits of its last id-like run (6+ hex digits) replaced by ``i``; None without one."""
    runs = list(_ID_RUN.finditer(name))
    if not runs:
        return None
    end = runs[-1].end()
    return name[: end - 6] + f"{i:06x}" + name[end:]


def _session_unit(h: FuzzHome, src: Source) -> Path | None:
    """The file or folder that is one session (the nearest piece of the source's path named by an id)."""
    p = Path(src.path)
    while p != h.home and p != p.parent:
        if _renamed(p.name, 1) is not None and not p.name.endswith((".db", ".sqlite", ".vscdb")):
            return p
        p = p.parent
    return None


def _discover_seconds(provider: str, env: dict[str, str]) -> tuple[float, int]:
    """CPU seconds of one discovery (this process's: a busy machine stretches the wall time, not this), and its count."""
    adapter = registry.get(provider)
    started = time.process_time()
    found = sum(1 for item in discover(adapter, env) if isinstance(item, Source))
    return time.process_time() - started, found


@pytest.mark.slow
@pytest.mark.parametrize("provider", registry.PROVIDERS)
def test_discovery_stays_linear_in_the_number_of_sessions(built, tmp_path: Path, provider: str) -> None:
    """A store of many tiny sessions (each a copy of a real one under a new id): 4x the sessions may
    cost at most ~8x the discovery time (linear, with room for noise), and every copy is found."""
    homes = _homes_of(provider, built)
    unit = None
    for h in homes:
        h.fresh()
        for item in discover(registry.get(provider), h.env):
            if isinstance(item, Source) and (unit := _session_unit(h, item)) is not None:
                break
        if unit is not None:
            break
    if unit is None:
        pytest.skip(
            f"{provider}: no session kept as its own file or folder named by an id (one database, or a file per project)"
        )
    times = {}
    for n in (250, 1000):
        home = tmp_path / f"n{n}"
        shutil.copytree(h.home, home, symlinks=True)
        original = home / unit.relative_to(h.home)
        for i in range(n):
            copy = original.with_name(_renamed(original.name, i + 1))  # type: ignore[arg-type]
            if copy.exists():
                continue
            (shutil.copytree if original.is_dir() else shutil.copy2)(original, copy)
        env = {"HOME": str(home)}
        _discover_seconds(provider, env)  # warm the page cache
        times[n], found = (
            min(_discover_seconds(provider, env) for _ in range(3))[0],
            _discover_seconds(provider, env)[1],
        )
        assert found >= n, f"{provider}: {found} sources for {n} sessions"
    assert times[1000] <= 8 * times[250] + 0.05, times
