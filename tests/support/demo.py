"""The bundled demo corpus, indexed as ``voyager demo`` indexes it (the ``demo`` fixture of ``tests/conftest.py``)."""

from __future__ import annotations

import time

from voyager_sessions.demo import CORPUS

#: 2026-12-01T12:00:00Z: when the golden exports say they were made.
EPOCH = 1796126400


#: The demo sessions exported: Claude Code (tools, an error, a checkpoint) and Codex (CJK, reasoning, a patch).
DEMO = {
    "claude-config": "claude:3f6c9a52-8d41-4e7b-a0c3-5b2e91d7f104",
    "codex-timeout": "codex:019a4b7c-2d31-7e05-8f6a-9c3b1e0d2a48",
}


def index_demo(run, monkeypatch) -> None:
    """The demo corpus indexed as ``voyager demo`` indexes it, and a checkpoint saved at a fixed time."""
    monkeypatch.setenv("VOYAGER_CLAUDE_HOME", str(CORPUS / "claude"))
    monkeypatch.setenv("VOYAGER_CODEX_HOME", str(CORPUS / "codex"))
    monkeypatch.setenv("SOURCE_DATE_EPOCH", str(EPOCH))
    assert run("scan", "-q", "--provider", "claude", "--provider", "codex").exit_code == 0
    with monkeypatch.context() as m:
        m.setattr(time, "time", lambda: EPOCH - 3600.0)
        res = run(
            "checkpoint",
            "save",
            DEMO["claude-config"],
            "--title",
            "Config loader fix",
            "--status",
            "tests green",
            "--objective",
            "Stop parse_config_v2 failing without a database section",
            "--done",
            "Default the section to {}",
            "--next",
            "Release 2.4.1",
            "--file",
            "src/inventory/config.py",
        )
        assert res.exit_code == 0, res.stderr
