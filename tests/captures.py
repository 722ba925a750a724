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

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

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
