"""Voyager's benchmark: ``python -m bench`` from the repository root.

A top-level package that is *not* installed: it imports the installed ``voyager``
and measures it the way a user meets it (real provider formats written by the shared
synth writers, real scans, the real CLI), in temporary directories only. See
``docs/bench.md`` for what each scenario measures and ``bench/__main__.py`` for flags.
"""

from __future__ import annotations

from pathlib import Path

#: The repository root: child processes get it on ``PYTHONPATH`` so ``bench`` imports there too.
REPO_ROOT = Path(__file__).resolve().parent.parent
