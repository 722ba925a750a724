"""Scanning a crafted source in a subprocess and reading the scan's peak memory (what a bomb test asserts).

``json_document`` writes a bomb of the single-JSON-document families (a session object whose
one array holds the messages) straight to its file, never holding it.

``scan_peak`` runs ``voyager scan --json`` under a small Python parent that waits for it and
reports ``resource.getrusage(RUSAGE_CHILDREN).ru_maxrss``: the peak RSS of the largest process
of the scan (the writer or a worker), measured by the kernel, never a wall time. The scan must
finish (the subprocess's own timeout is a backstop far above any honest run, not a measurement).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.support.run import voyager_exe

#: The documented bound (docs/limits.md): one scan of one crafted source stays under this.
PEAK_RSS_BOUND_MB = 300

_PARENT = """
import json, resource, subprocess, sys
res = subprocess.run(sys.argv[1:], capture_output=True, text=True)
peak_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print(json.dumps({"rc": res.returncode, "stdout": res.stdout, "stderr": res.stderr, "peak_mb": peak_kb / 1024}))
"""


def scan_peak(home: Path, env: dict[str, str] | None = None) -> dict[str, Any]:
    """``voyager scan --json`` of ``home`` in a subprocess: its summary, stderr and ``peak_mb``."""
    full = {k: v for k, v in os.environ.items() if not k.startswith(("VOYAGER_", "CLAUDE_", "CODEX_"))}
    full.update(
        {
            "HOME": str(home),
            "VOYAGER_HOME": str(home / "voyager-data"),
            "VOYAGER_SHARED_DIR": os.environ.get("VOYAGER_SHARED_DIR", ""),
            "VOYAGER_OPENCODE_HOME": str(home / "no-opencode"),
        }
    )
    full.update(env or {})
    out = subprocess.run(
        [sys.executable, "-c", _PARENT, *voyager_exe(), "scan", "--json"],
        capture_output=True,
        text=True,
        env=full,
        timeout=900,
    )
    doc = json.loads(out.stdout)
    assert doc["rc"] == 0, doc["stderr"][-2000:]
    summary = json.loads(doc["stdout"])
    summary["stderr"] = doc["stderr"]
    summary["peak_mb"] = doc["peak_mb"]
    return summary


def json_document(
    path: Path,
    head: dict[str, Any],
    key: str,
    item: Callable[[int], Any],
    count: int,
    tail: dict[str, Any] | None = None,
) -> Path:
    """Write ``{**head, key: [item(0), …, item(count - 1)], **tail}`` (``key`` "" for a bare array) to ``path``,
    an item at a time: a document of hundreds of MB costs the writer one item of memory."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as fh:
        if key:
            fh.write(json.dumps(head, ensure_ascii=False)[:-1] + ("," if head else "") + json.dumps(key) + ":")
        fh.write("[")
        for i in range(count):
            fh.write(("," if i else "") + json.dumps(item(i), ensure_ascii=False))
        fh.write("]")
        if key:
            fh.write(
                "".join("," + json.dumps(k) + ":" + json.dumps(v, ensure_ascii=False) for k, v in (tail or {}).items())
            )
            fh.write("}")
    return path
