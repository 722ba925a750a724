"""Checking a resume command the way a shell would take it: it parses, and gives back the exact words."""

from __future__ import annotations

import shlex
import subprocess

#: Names a hostile session file may carry: every shell metacharacter that matters, and a newline.
HOSTILE_NAMES = (
    "proj; rm -rf ~",
    "$(touch pwned)",
    "`touch pwned`",
    "it's \"quoted\"",
    "two  spaces",
    "line\nbreak",
    "-starts-with-dash",
)


def shell_words(command: str) -> list[str]:
    """The words ``command`` splits into, after ``sh -n`` accepted it (syntax only: nothing runs)."""
    checked = subprocess.run(["sh", "-n", "-c", command], capture_output=True, text=True, timeout=10)
    assert checked.returncode == 0, (command, checked.stderr)
    return shlex.split(command)
