"""Names no file or program can take (issue #38, item 11): one line and exit 2, never "internal error".

The probe: a NUL in a Codex session id ended ``voyager resume`` with "internal error" (``execve`` refuses
an argument holding one), and a data dir whose name is not UTF-8 ended ``voyager mcp install`` with
"internal error" (and made every other command call the index "damaged"). Widened: any id or path with
bytes that cannot be represented, in any command, is one line.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.run import run_subprocess, voyager_exe
from tests.support.sessions import codex_session_lines, write_codex
from voyager_sessions.core.errors import failure
from voyager_sessions.ingest.files import FolderMemory
from voyager_sessions.ingest.manifest import agent_variables

NUL_ID = "01a230a0-8a40\x007cd3-b08c-d701010d0280"


def _env(home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in agent_variables() and not k.startswith("VOYAGER_")}
    env.update(HOME=str(home), VOYAGER_HOME=str(home / "voyager-data"), VOYAGER_OPENCODE_HOME=str(home / "none"))
    env.update(extra)
    return env


def _one_line(res) -> None:  # noqa: ANN001
    assert res.returncode == 2, (res.returncode, res.stderr)
    assert "internal error" not in res.stderr and res.stderr.count("\n") == 1, res.stderr


@pytest.mark.slow
def test_a_nul_in_a_codex_id_is_one_line_from_resume_and_its_print(tmp_path: Path) -> None:
    home = tmp_path / "home"
    work = tmp_path / "work"
    work.mkdir()
    lines = []
    for line in codex_session_lines(cwd=str(work)):
        doc = json.loads(line)
        if doc.get("type") == "session_meta":
            doc["payload"]["id"] = NUL_ID
        lines.append(json.dumps(doc) + "\n")
    write_codex(home, lines)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    stub = bin_dir / "codex"
    stub.write_text(f"#!{sys.executable}\nimport sys; open({str(tmp_path / 'ran')!r}, 'w').write(repr(sys.argv))\n")
    stub.chmod(stub.stat().st_mode | stat.S_IXUSR)
    env = _env(home, PATH=f"{bin_dir}{os.pathsep}/usr/bin{os.pathsep}/bin")
    assert run_subprocess("scan", "-q", env=env).returncode == 0
    found = run_subprocess("search", "ERR_CONN_REFUSED_42", "--json", env=env)
    sid = json.loads(found.stdout)["hits"][0]["session_id"]
    assert "\x00" in sid
    for args in (["resume", "-"], ["resume", "-", "--print"]):
        res = run_subprocess(*args, env=env)
        assert res.returncode == 2 and "internal error" not in res.stderr, res.stderr
        assert "NUL byte" in res.stderr.splitlines()[-1]
    assert not (tmp_path / "ran").exists()


@pytest.mark.parametrize(
    "args",
    [
        ["mcp", "install", "claude"],
        ["search", "anything"],
        ["scan"],
        ["list"],
        ["stats"],
        ["checkpoint", "list"],
        ["show", "x"],
    ],
    ids=lambda a: " ".join(a),
)
def test_a_data_dir_whose_name_is_not_utf8_is_one_line_naming_the_variable(tmp_path: Path, args: list[str]) -> None:
    home = tmp_path / "home"
    home.mkdir()
    data = os.fsdecode(os.fsencode(str(tmp_path)) + b"/data\xff\xfe")  # what the OS hands Python for such a name
    res = run_subprocess(*args, env=_env(home, VOYAGER_HOME=data))
    _one_line(res)
    assert "not UTF-8" in res.stderr and "VOYAGER_HOME" in res.stderr
    assert not os.path.exists(os.fsencode(data))  # nothing was made there


def test_any_other_unrepresentable_name_reaching_the_top_is_one_line() -> None:
    """The safety net every front end reports through: a NUL, or bytes that are not UTF-8, anywhere."""
    for exc in (ValueError("embedded null byte"), ValueError("embedded null character in path")):
        line, code = failure(exc)
        assert code == 2 and "NUL byte" in line and "internal error" not in line
    try:
        "/tmp/x\udcff\udcfe".encode("utf-8")
    except UnicodeEncodeError as exc:
        line, code = failure(exc)
        assert code == 2 and "not UTF-8" in line and "\\xff\\xfe" in line
    line, code = failure(ValueError("something else"))
    assert code == 4 and "internal error" in line  # a bug is still a bug


BAD = os.fsdecode(b"x\xff\xfe")  # what the OS hands Python for an argument whose bytes are not UTF-8


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    root = tmp_path_factory.mktemp("unrepresentable")
    home = root / "home"
    write_codex(home, codex_session_lines(cwd=str(root)))
    env = _env(home)
    assert run_subprocess("scan", "-q", env=env).returncode == 0
    return env


@pytest.mark.parametrize(
    "args",
    [
        ["search", BAD],
        ["search", f"cwd:{BAD}"],
        ["search", "ERR_CONN_REFUSED_42", "--cwd", BAD],
        ["search", "ERR_CONN_REFUSED_42", "--session", BAD],
        ["search", "ERR_CONN_REFUSED_42", "--json", "--repo", BAD],
        ["show", BAD],
        ["export", BAD],
        ["resume", BAD, "--print"],
        ["import", BAD],
        ["checkpoint", "show", BAD],
    ],
    ids=lambda a: " ".join(x.replace(BAD, "<not-utf8>") for x in a),
)
def test_an_argument_whose_bytes_are_not_utf8_is_one_line(indexed: dict[str, str], args: list[str]) -> None:
    """A query, id, path or filter that is not UTF-8 text matches nothing Voyager holds and cannot be stored: one
    line on stderr, exit 2 (or 1 where it is only a query that finds nothing), never an internal error."""
    res = subprocess.run(voyager_exe() + args, capture_output=True, env=indexed, timeout=120)
    err = res.stderr.decode("utf-8", "replace")
    assert res.returncode in (1, 2), (res.returncode, err)
    assert "internal error" not in err and "Traceback" not in err and err.count("\n") <= 1, err
    assert res.stdout == b"" or res.returncode == 1, res.stdout
    err.encode("utf-8")  # what it says is text a terminal can show


@pytest.mark.slow  # waits for the folders to settle (FolderMemory.SETTLED_NS), as a scan a few seconds later does
def test_a_session_folder_whose_name_is_not_utf8_costs_only_its_sessions(tmp_path: Path) -> None:
    """A Claude Code project folder named with bytes that are not UTF-8: its session is skipped with one notice
    naming it, the other project's sessions are indexed, and a rescan says it again without failing."""
    from tests.support.sessions import claude_session_lines, write_claude

    home = tmp_path / "home"
    good = write_claude(home, claude_session_lines(), project="-home-dev-shop")
    other = "11111111-2222-3333-4444-555555555555"
    bad = write_claude(home, claude_session_lines(sid=other), sid=other, project="-home-dev-cafe")
    bad_dir = os.fsencode(bad.parent)[:-1] + b"\xe9"  # "-home-dev-caf\xe9": Latin-1, as an old tool named it
    os.rename(os.fsencode(bad.parent), bad_dir)
    env = _env(home)
    third = "22222222-2222-3333-4444-555555555555"
    for i in range(3):
        if i == 2:  # once the folders have settled and their listings could be remembered: a new session
            time.sleep(FolderMemory.SETTLED_NS / 1e9 + 0.2)
            write_claude(home, claude_session_lines(sid=third), sid=third, project="-home-dev-shop")
        res = run_subprocess("scan", env=env)
        assert res.returncode == 0, res.stderr
        notices = [line for line in res.stderr.splitlines() if "not valid UTF-8" in line]
        assert len(notices) == 1 and "-home-dev-caf" in notices[0], res.stderr
        assert "internal error" not in res.stderr and "adapter error" not in res.stderr, res.stderr
    listed = run_subprocess("list", "--json", env=env)
    assert listed.returncode == 0, listed.stderr
    ids = {s["session_id"] for s in json.loads(listed.stdout)["sessions"]}
    assert ids == {f"claude:{good.stem}", f"claude:{third}"}
    assert os.listdir(bad_dir) == [os.fsencode(bad.name)]  # read-only: nothing made beside it


@pytest.mark.slow  # ~2 s: in the slow run, so the default run keeps to its budget
def test_an_agents_variable_naming_a_folder_that_is_not_utf8_costs_only_that_agent(tmp_path: Path) -> None:
    """``CODEX_HOME`` set to a folder whose name is not UTF-8: the scan reads every other agent (the memory of
    absent places is text: such a place is not kept, and ended the whole scan with exit 2), again and again;
    Codex's sessions there are skipped and named; ``doctor`` shows the place, its JSON with U+FFFD for the bytes."""
    from tests.support.sessions import claude_session_lines, write_claude

    home = tmp_path / "home"
    good = write_claude(home, claude_session_lines())
    codex_home = os.fsdecode(os.fsencode(tmp_path) + b"/codex\xff")
    env = _env(home, CODEX_HOME=codex_home)
    for i in range(3):
        if i == 2:  # the folder appears, holding a session
            write_codex(Path(tmp_path / "stage"), codex_session_lines())
            os.rename(os.fsencode(tmp_path / "stage" / ".codex"), os.fsencode(codex_home))
        res = run_subprocess("scan", env=env)
        assert res.returncode == 0, res.stderr
        assert "internal error" not in res.stderr and "adapter error" not in res.stderr, res.stderr
        assert ("not valid UTF-8" in res.stderr) == (i == 2), res.stderr
    listed = run_subprocess("list", "--json", env=env)
    assert {s["session_id"] for s in json.loads(listed.stdout)["sessions"]} == {f"claude:{good.stem}"}
    doctor = subprocess.run(voyager_exe() + ["doctor", "--json"], capture_output=True, env=env, timeout=120)
    assert doctor.returncode == 0, doctor.stderr
    text = doctor.stdout.decode("utf-8")  # valid UTF-8, whatever the names
    assert "codex\ufffd" in text
    json.loads(text)
    plain = subprocess.run(voyager_exe() + ["doctor"], capture_output=True, env=env, timeout=120)
    assert plain.returncode == 0 and b"codex" in plain.stdout, plain.stderr
