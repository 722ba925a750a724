"""The real CLI as a test runs it: in process through click's runner (``Run``, stdout and stderr apart), or as a
subprocess of the installed console script (``voyager_exe``, ``run_subprocess``); ``sha256_tree`` to prove files
unchanged.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner


def sha256_tree(root: Path) -> dict[str, str]:
    return {str(p): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(root.rglob("*")) if p.is_file()}


class Run:
    """Invoke the real CLI in-process (click's CliRunner) with stdout and stderr kept apart."""

    def __call__(self, *args: str, input: str | None = None):
        from voyager_sessions.cli.app import cli

        return CliRunner().invoke(cli, list(args), input=input, catch_exceptions=False)

    def json(self, *args: str):
        res = self(*args)
        assert res.exit_code in (0, 1), (res.exit_code, res.stderr)
        return json.loads(res.stdout)


def voyager_exe() -> list[str]:
    """The installed console script when present (a real subprocess), else ``python -m voyager_sessions``."""
    exe = Path(sys.executable).with_name("voyager")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "voyager_sessions"]


def run_subprocess(*args: str, env: dict | None = None, input: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        voyager_exe() + list(args),
        capture_output=True,
        text=True,
        env=env or dict(os.environ),
        input=input,
        timeout=120,
    )
