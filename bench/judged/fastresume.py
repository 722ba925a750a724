"""The judged queries through fast-resume's ``fr``, on the same generated HOME.

What fast-resume 2.14 does, read from its package (a Rust binary in the wheel's scripts):
it reads the agents' default locations under ``$HOME`` (``~/.claude/projects``,
``~/.codex/sessions``, OpenCode's ``opencode.db`` under ``~/.local/share/opencode``),
keeps one Tantivy document per session in ``$XDG_CACHE_HOME/fast-resume``, and without
its TUI answers ``fr --json --limit N QUERY`` with ``{"sessions": [{"id", "agent", …}],
"meta": …}``, best first (its ``--agent-context`` text documents that output as stable).
The first call indexes (``--rebuild``); the queries then run with ``--no-refresh``.

fast-resume is not a dependency of this project and the bench installs nothing: without
an ``fr`` beside this interpreter or on PATH, the comparison is skipped with that reason.
"""

from __future__ import annotations

import subprocess
from collections.abc import Mapping
from pathlib import Path

import msgspec

from bench.util import child_env


class FrSession(msgspec.Struct, kw_only=True):
    id: str
    agent: str | None = None


class FrOutput(msgspec.Struct, kw_only=True):
    sessions: list[FrSession] = []


def fr_version(fr: str) -> str | None:
    """``fr --version``'s line when it is fast-resume's (another ``fr`` on PATH is not), else None."""
    try:
        out = subprocess.run([fr, "--version"], capture_output=True, text=True, timeout=30, check=False).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    line = out.strip()
    return line if line.startswith(("fr ", "fast-resume")) else None


def fr_env(home_env: Mapping[str, str], cache: Path) -> dict[str, str]:
    """The generated HOME's environment, fr's index cached in ``cache`` (inside the bench's work dir)."""
    env = child_env(home_env)
    env.pop("PYTHONPATH", None)
    env["XDG_CACHE_HOME"] = str(cache)
    return env


def index(fr: str, env: Mapping[str, str]) -> int:
    """Build fr's index of the generated HOME; returns how many sessions a match-all listing shows."""
    subprocess.run(
        [fr, "--rebuild", "--json", "--limit", "1", "x"], env=dict(env), capture_output=True, timeout=600, check=False
    )
    proc = subprocess.run(
        [fr, "--json", "--all", "--no-refresh"], env=dict(env), capture_output=True, timeout=600, check=False
    )
    try:
        return len(msgspec.json.decode(proc.stdout, type=FrOutput).sessions)
    except msgspec.DecodeError:
        return 0


def search(fr: str, env: Mapping[str, str], query: str, limit: int) -> list[str]:
    """The session ids fr ranks for ``query``, best first ([] when its output is not the documented shape)."""
    proc = subprocess.run(
        [fr, "--json", "--no-refresh", "--limit", str(limit), query],
        env=dict(env),
        capture_output=True,
        timeout=120,
        check=False,
    )
    try:
        return [s.id for s in msgspec.json.decode(proc.stdout, type=FrOutput).sessions]
    except msgspec.DecodeError:
        return []
