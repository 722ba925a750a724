"""Where the tests find agents' files: the real captures in the repository, the peers' samples outside it.

``tests/fixtures/agents/<agent>-<version>/`` holds what each agent's real CLI wrote when it was run
headless here (``HOME=/home/dev``, a scripted local model), with ``truth.json`` naming the markers of
every turn; ``tests/fixtures/agents/PROVENANCE.md`` says which CLI and version wrote each. They are part
of the repository, so a clone anywhere runs the same capture tests as CI.

The peers' samples (``shared/fixtures/peers/<agent>/``) are other projects' test data: they stay
outside the repository and are read by one optional group of tests, skipped with that reason when
the folder is not beside the checkout (or named by ``$VOYAGER_SHARED_DIR``). The adapters they
exercise are also covered by fixtures written here from the documented shapes.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

import pytest

from tests.support.run import Run
from voyager_sessions.ingest.manifest import agent_variables

ROOT = Path(__file__).resolve().parents[2]

#: The real captures, one folder each (always present: they are in the repository).
CAPTURES = ROOT / "tests" / "fixtures" / "agents"

#: OpenCode 1.18.33's database as its CLI left it, with a live WAL holding most rows.
OPENCODE_LIVE_WAL = ROOT / "tests" / "fixtures" / "opencode-1.18.33"

#: Why a test of the peers' samples did not run.
NO_PEERS = "the peers' samples (other projects' test data) are not in this repository: put shared/ beside the checkout or set VOYAGER_SHARED_DIR to run them"


def _peers() -> Path | None:
    for candidate in (os.environ.get("VOYAGER_SHARED_DIR"), ROOT.parent / "shared"):
        if candidate and (Path(candidate) / "fixtures" / "peers").is_dir():
            return Path(candidate) / "fixtures" / "peers"
    return None


#: ``shared/fixtures/peers`` when it is beside the checkout, else None.
PEERS = _peers()

#: Marks a test that reads the peers' samples.
needs_peers = pytest.mark.skipif(PEERS is None, reason=NO_PEERS)


def capture_names() -> list[str]:
    """Every capture folder (one with a ``truth.json``), sorted."""
    return sorted(d.name for d in CAPTURES.iterdir() if (d / "truth.json").is_file())


def peer_homes() -> list[Path]:
    """Every peers' sample's ``home`` folder (none when the samples are not here)."""
    if PEERS is None:
        return []
    return sorted(p / "home" for p in PEERS.iterdir() if (p / "home").is_dir())


#: truth.json's ``agent`` -> Voyager's provider name, where they differ.
PROVIDER_OF_AGENT = {
    "factory": "droid",
    "vibe2": "vibe",
    "interpreter": "open-interpreter",
    "mini": "mini-swe-agent",
    "openclaw-legacy": "openclaw",
}


def captures() -> list[str]:
    return capture_names()


def provider_of(capture: str) -> str:
    agent = json.loads((CAPTURES / capture / "truth.json").read_text())["agent"]
    return PROVIDER_OF_AGENT.get(agent, agent)


def _tree(root: Path) -> dict[str, str]:
    """Relative path -> sha256 of every file under ``root`` (directories listed as "dir").

    A ``-shm`` beside a ``-wal`` is listed, not hashed: it is SQLite's shared-memory index of
    the WAL, which every reader of a database with a live WAL maintains (the agent's own
    reads rewrite it too); Voyager cannot read those rows without it. It must still not be
    created where there was none.
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


class Capture:
    """One capture copied into a fresh HOME and scanned; searches go through the real CLI."""

    def __init__(self, name: str, tmp: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        self.name = name
        self.truth = json.loads((CAPTURES / name / "truth.json").read_text())
        self.provider = provider_of(name)
        self.home = tmp / "home"
        shutil.copytree(CAPTURES / name, self.home, symlinks=True, ignore=shutil.ignore_patterns("truth.json"))
        for var in (*agent_variables(), "XDG_CONFIG_HOME", "NO_COLOR"):
            monkeypatch.delenv(var, raising=False)
        monkeypatch.setenv("HOME", str(self.home))
        self.data = tmp / "voyager-data"  # outside HOME: the tree check sees only the agent's files
        monkeypatch.setenv("VOYAGER_HOME", str(self.data))
        self.run = Run()
        self.before = _tree(self.home)
        res = self.run("scan", "--json")
        assert res.exit_code == 0, res.stderr
        self.scan = json.loads(res.stdout)
        self.scan_stderr = res.stderr
        self._hits: dict[str, list[dict]] = {}

    def hits(self, marker: str) -> list[dict]:
        if marker not in self._hits:
            res = self.run("search", marker, "--json", "--no-refresh", "--limit", "100")
            assert res.exit_code in (0, 1), res.stderr
            self._hits[marker] = json.loads(res.stdout)["hits"]
        return self._hits[marker]

    def in_files(self, marker: str) -> bool:
        """True when truth.json places ``marker`` in a file the agent wrote (as bytes, or once decoded:
        ``decoded_marker_files``, for a store whose text no grep sees, as Reasonix's zstd frames)."""
        truth = self.truth
        return bool(truth.get("marker_files", {}).get(marker) or truth.get("decoded_marker_files", {}).get(marker))

    def sessions(self) -> dict[str, dict]:
        doc = self.run.json("list", "--json", "--limit", "1000")
        return {s["session_id"]: s for s in doc["sessions"]}
