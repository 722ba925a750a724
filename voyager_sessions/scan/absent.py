"""Knowing, without importing it, that an agent has nothing to scan: the refresh before every search stays cheap.

Voyager reads 27 agents; importing all their adapters costs a fresh process more than a
search of a million events. Most machines have a handful of those agents. So a scan
remembers, per agent, the places its adapter looks (``roots``) and, for each place that
does not exist, its nearest existing ancestor and that directory's mtime. On the next
scan, an agent whose every place is still absent, with every such ancestor unchanged, is
known to have nothing, without importing its adapter: creating anything on the way to
one of its places would have changed an ancestor's mtime. Anything else (a place that
exists, an ancestor that changed, other environment variables, an adapter that finds
stores through hints rather than fixed places) means the adapter is imported and asked,
as before. The memory is one JSON value in the state store, rewritten only when it changes.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path

import msgspec

from voyager_sessions.core.digest import blake2b
from voyager_sessions.ingest.adapters.base import Adapter, uses_hints
from voyager_sessions.ingest.manifest import agent_variables

#: Environment variables whose values decide where adapters look (besides every agent's own).
_ENV_KEYS = ("HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "APPDATA", "VOYAGER_AIDER_ROOTS")

META_KEY = "absent_roots"


class Place(msgspec.Struct, array_like=True):
    """A place an adapter looks, absent when seen: its nearest existing ancestor and that one's mtime."""

    root: str
    ancestor: str
    mtime_ns: int


class Memory(msgspec.Struct):
    """Per agent, the places it looked, all absent when last seen (an agent with a place present is not kept)."""

    env: str = ""
    agents: dict[str, list[Place]] = {}


def env_digest(env: Mapping[str, str]) -> str:
    """A digest of every variable that can move an agent's store (a change means: look again everywhere)."""
    keys = sorted(set(agent_variables()) | set(_ENV_KEYS))
    h = blake2b(digest_size=12)
    for key in keys:
        h.update(f"{key}={env.get(key, '')}\0".encode("utf-8", "surrogatepass"))
    return h.hexdigest()


def _nearest_existing(path: Path) -> tuple[Path, int] | None:
    """The nearest existing ancestor of absent ``path`` and its mtime; None if ``path`` itself exists."""
    try:
        os.stat(path)
        return None
    except OSError:
        pass
    for parent in path.parents:
        try:
            return parent, os.stat(parent).st_mtime_ns
        except OSError:
            continue
    return Path("/"), 0


def absent_places(roots: Iterable[Path | str]) -> list[Place] | None:
    """The places for ``roots`` if every one is absent now, else None (something may be there: ask the adapter)."""
    places = []
    for root in roots:
        found = _nearest_existing(Path(root))
        if found is None:
            return None
        ancestor, mtime = found
        place = Place(root=str(root), ancestor=str(ancestor), mtime_ns=mtime)
        if not (_text(place.root) and _text(place.ancestor)):
            return None  # a name that is not UTF-8 (an agent's variable) cannot be kept as text: always ask
        places.append(place)
    return places


def _text(path: str) -> bool:
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def still_absent(places: list[Place]) -> bool:
    """True when none of ``places`` can have appeared since they were remembered (their ancestors are unchanged)."""
    for place in places:
        try:
            if os.stat(place.ancestor).st_mtime_ns != place.mtime_ns:
                return False
        except OSError:
            return False
        try:
            os.stat(place.root)
            return False
        except OSError:
            continue
    return True


_decode = msgspec.json.Decoder(Memory).decode


def load(raw: str | None, env: Mapping[str, str]) -> Memory:
    """The memory kept by the last scan, or an empty one (unreadable, or for other environment variables)."""
    digest = env_digest(env)
    if raw:
        try:
            memory = _decode(raw)
        except (msgspec.DecodeError, msgspec.ValidationError):
            memory = Memory()
        if memory.env == digest:
            return memory
    return Memory(env=digest)


def dump(memory: Memory) -> str:
    return msgspec.json.encode(memory).decode()


def remember(memory: Memory, name: str, adapter: Adapter, env: Mapping[str, str]) -> None:
    """Record what ``adapter`` (``name``) looks at now: kept only when it relies on fixed places that are all absent."""
    places = None
    if not uses_hints(adapter):
        try:
            places = absent_places(adapter.roots(env))
        except Exception:  # an adapter that cannot name its places is always asked
            places = None
    if places is None:
        memory.agents.pop(name, None)
    else:
        memory.agents[name] = places
