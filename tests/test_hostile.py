"""Session text is hostile input: it must never run a command or drive the terminal that shows it."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.support.hostile import EVIL, _stub
from tests.support.sessions import claude_session_lines, codex_session_lines, write_claude, write_codex

ESCAPES = "\x1b[2J\x1b]52;c;cHduZWQ=\x07\x1b]0;owned\x07\x9b31m\rOVERWRITE\x7f"


@pytest.mark.parametrize("evil", EVIL)
def test_resume_commands_quote_every_part(home, run, tmp_path, evil):
    pwned = tmp_path / "pwned"
    ident = evil.format(pwned=pwned)
    cwd = tmp_path / f"dir {ident}".replace("/", "_")
    cwd.mkdir()
    # Codex: the id comes from session_meta.payload.id, the cwd from the file.
    lines = [json.loads(line) for line in codex_session_lines(sid=ident, cwd=str(cwd))]
    write_codex(home, [json.dumps(line) + "\n" for line in lines], sid="0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b")
    # Claude: the id is the file name (no "/" possible), the cwd from the lines.
    write_claude(home, claude_session_lines(cwd=str(cwd)), sid=ident.replace("/", "_").replace("\n", "_"))
    assert run("scan").exit_code == 0
    bin_dir, log = tmp_path / "bin", tmp_path / "argv.log"
    bin_dir.mkdir()
    for agent in ("codex", "claude"):
        _stub(bin_dir, agent, log)
    hits = run.json("search", "--json", "--no-refresh", "--limit", "50", "postgres OR 数据库")["hits"]
    resumes = {h["provider"]: h["resume"] for h in hits}
    assert set(resumes) == {"codex", "claude"}
    env = dict(os.environ, PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    for command in resumes.values():
        proc = subprocess.run(["sh", "-c", command], capture_output=True, text=True, env=env, timeout=30)
        assert proc.returncode == 0, (command, proc.stderr)
    assert not pwned.exists(), "a resume command ran a command hidden in a session id"
    calls = [json.loads(line) for line in log.read_text().splitlines()]
    assert ["resume", ident] in [c[1:] for c in calls]  # codex got the id, whole
    claude_call = next(c for c in calls if c[1] == "--resume")
    assert claude_call[0] == str(cwd) and claude_call[2] == ident.replace("/", "_").replace("\n", "_")


def _hostile_corpus(home: Path) -> None:
    lines = claude_session_lines(cwd=f"/home/dev/{ESCAPES}")
    lines = [
        line.replace("我们的数据库迁移失败了", f"我们的数据库迁移失败了 {json.dumps(ESCAPES)[1:-1]}") for line in lines
    ]
    write_claude(home, lines)


def _assert_inert(text: str) -> None:
    for ch in ("\x1b", "\x9b", "\x07", "\r", "\x7f"):
        assert ch not in text, (repr(ch), text)


def test_text_output_neutralises_control_characters(home, run):
    _hostile_corpus(home)
    assert run("scan").exit_code == 0
    for args in (
        ["search", "数据库"],
        ["search", "数据库", "-C", "2"],
        ["search", "数据库", "--sessions"],
        ["list"],
        ["show", "5f1c"],
    ):
        res = run(*args, "--color", "never") if args[0] in ("search", "show") else run(*args)
        assert res.exit_code == 0, (args, res.stderr)
        _assert_inert(res.stdout)
        assert "OVERWRITE" in res.stdout or args[0] == "list"  # the text is shown, only made harmless
    # With colour on, Voyager's own escapes are the only ones: every ESC starts one of its SGR codes.
    res = run("search", "数据库", "--color", "always")
    assert all(part.startswith(("[1;33m", "[0m", "[1m", "[2m")) for part in res.stdout.split("\x1b")[1:])
    assert "\x9b" not in res.stdout and "\x07" not in res.stdout


def test_json_output_escapes_c1_controls(home, run):
    _hostile_corpus(home)
    assert run("scan").exit_code == 0
    for args in (
        ["search", "数据库", "--json"],
        ["search", "数据库", "--jsonl"],
        ["show", "5f1c", "--json"],
        ["list", "--json"],
    ):
        res = run(*args)
        raw = res.stdout_bytes
        assert b"\xc2\x9b" not in raw and b"\x7f" not in raw and b"\x1b" not in raw, args
        docs = [json.loads(line) for line in res.stdout.splitlines()] if "--jsonl" in args else [json.loads(res.stdout)]
        assert "\x9b" in json.dumps(docs, ensure_ascii=False)  # the value itself is kept, only escaped
