"""Checking a resume command the way a shell would take it: it parses, and gives back the exact words."""

from __future__ import annotations

import json
import os
import shlex
import stat
import subprocess
import sys
from pathlib import Path

#: Names a hostile session file may carry: every shell metacharacter that matters, and a newline.
HOSTILE_NAMES = (
    "proj; rm -rf ~",
    "$(touch pwned)",
    "`touch pwned`",
    'it\'s "quoted"',
    "two  spaces",
    "line\nbreak",
    "-starts-with-dash",
)


def option_words(flag: str, value: str) -> list[str]:
    """How a resume command hands ``value`` from a file to a long option: ``--flag=VALUE`` when it begins with
    ``-`` (one word: data, never an option of its own), else ``--flag VALUE``."""
    return [f"{flag}={value}"] if value.startswith("-") else [flag, value]


def shell_words(command: str) -> list[str]:
    """The words ``command`` splits into, after ``sh -n`` accepted it (syntax only: nothing runs)."""
    checked = subprocess.run(["sh", "-n", "-c", command], capture_output=True, text=True, timeout=10)
    assert checked.returncode == 0, (command, checked.stderr)
    return shlex.split(command)


def run_with_stub(command: str, agent: str, tmp: Path) -> tuple[str, list[str]]:
    """Run ``command`` with ``sh -c``, ``agent`` being a stub that records where it ran and its arguments.

    Returns (cwd, argv[1:]) of the stub's one call; fails if the command ran anything else
    (a hostile name that escaped its quoting would leave ``tmp/pwned`` behind or break the call).
    """
    bin_dir = tmp / "stub-bin"
    bin_dir.mkdir(exist_ok=True)
    log = tmp / "stub-calls.jsonl"
    script = bin_dir / agent
    script.write_text(
        f"#!{sys.executable}\nimport json, os, sys\n"
        f"open({str(log)!r}, 'a').write(json.dumps([os.getcwd()] + sys.argv[1:]) + '\\n')\n"
    )
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    env = dict(os.environ, PATH=f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    proc = subprocess.run(["sh", "-c", command], capture_output=True, text=True, env=env, cwd=tmp, timeout=30)
    assert proc.returncode == 0, (command, proc.stderr)
    assert not (tmp / "pwned").exists(), command
    (call,) = [json.loads(line) for line in log.read_text().splitlines()]
    log.unlink()
    return call[0], call[1:]
