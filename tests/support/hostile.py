"""Hostile text for end-to-end tests: a session whose every field carries terminal escapes and shell metacharacters
(``EVIL``), and an agent binary stub that records how it was started.
"""

from __future__ import annotations

import stat
from pathlib import Path

#: Ids and paths as a hostile (or merely unlucky) session file may hold them.
EVIL = [
    "x; touch {pwned} #",
    "$(touch {pwned})",
    "`touch {pwned}`",
    'it\'s "quoted"',
    "two words",
    "line\nbreak",
]


def _stub(bin_dir: Path, name: str, log: Path) -> None:
    """An agent binary that records its argv (one JSON line) and its cwd."""
    script = bin_dir / name
    script.write_text(
        f"#!/usr/bin/env python3\nimport json, os, sys\n"
        f"open({str(log)!r}, 'a').write(json.dumps([os.getcwd()] + sys.argv[1:]) + '\\n')\n"
    )
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
