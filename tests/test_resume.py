"""``voyager resume``: every agent with a resume command is handed the exact id, in the exact directory.

Each resumable provider gets a session from its agent's real capture
(``tests/fixtures/agents``, relocated so the directory it names exists here) or, where
there is none, from its test module's format writer; ``voyager resume`` then runs in a
subprocess with a stub agent first on PATH. The stub records its argv and working
directory: the exec must reach it with exactly the session's id and cwd as ``voyager list``
reports them, without a shell in between (the adapter's command reads back exactly).
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import stat
import sys
from pathlib import Path

import pytest

from tests.support.captures import CAPTURES, captures, provider_of
from tests.support.relocate import relocate
from tests.support.run import run_subprocess
from tests.support.sessions import CLAUDE_SID, json_line, claude_session_lines, write_claude
from voyager_sessions.api.resume import ResumeRecipe, parse_command, recipe
from voyager_sessions.core.model import Session
from voyager_sessions.ingest import manifest
from voyager_sessions.ingest.adapters import PROVIDERS
from voyager_sessions.ingest.manifest import agent_variables

#: The program each resumable agent is reopened with (its manifest row's ``binary``).
BINARY = {a.name: a.binary for a in manifest.ROWS.values() if a.binary}
#: Agents that reopen their sessions only inside their own app (or have no command Voyager knows), and why
#: (the row's ``resume`` text).
NO_RESUME = {a.name: a.resume for a in manifest.ROWS.values() if not a.binary}
#: Resumable agents with no real capture: built by their test module's writer (see SYNTHETIC_WRITERS).
SYNTHETIC = {"cursor", "kiro", "grok", "crush", "goose", "devin", "iflow", "qoder", "amp"}

#: Where the captures' agents ran: ``home`` in truth.json, the cwd below it.
CAPTURE_HOME = "/home/dev"


def test_every_provider_is_covered() -> None:
    """A new agent must say whether it resumes, and get a case here if it does."""
    assert set(PROVIDERS) == set(BINARY) | set(NO_RESUME)
    assert not set(BINARY) & set(NO_RESUME)
    have_capture = {provider_of(c) for c in captures()}
    assert set(BINARY) <= have_capture | SYNTHETIC, set(BINARY) - have_capture - SYNTHETIC


# -- the recipe ------------------------------------------------------------------------------------------


HOSTILE = [
    "proj; touch pwned",
    "$(touch pwned)",
    "`touch pwned`",
    'it\'s "q"',
    "two  spaces",
    "line\nbreak",
    "-dash",
    "数据 ü",
    "&& x",
    "~user",
    "*",
]


@pytest.mark.parametrize("word", HOSTILE)
def test_recipe_reads_back_exactly_what_the_adapter_quoted(word: str) -> None:
    r = ResumeRecipe(argv=("claude", "--resume", word), cwd=f"/tmp/{word}")
    assert parse_command(r.command()) == (r.argv, r.cwd)
    assert parse_command(ResumeRecipe(argv=("codex", "resume", word)).command()) == (("codex", "resume", word), None)


@pytest.mark.parametrize(
    "command",
    [
        "claude --resume x; touch pwned",  # an operator outside quotes
        "claude --resume $(id)",  # a substitution sh would expand
        "claude --resume 'x' && rm -rf y",  # a second command
        "cd /a && cd /b && claude",  # a second cd
        "claude  --resume x",  # not how quoting joins words
        'claude --resume "x"',  # double quotes: shlex.quote never writes them
        "claude --resume 'unbalanced",
        "cd '' && claude",
    ],
)
def test_other_shapes_are_not_read_back(command: str) -> None:
    assert parse_command(command) is None
    r = recipe(Session(id="claude:x", provider="claude", native_id="x", cwd="/w", resume=command))
    assert r is not None and r.shell and r.argv == ("sh", "-c", command) and r.cwd == "/w"


def test_recipe_runs_where_the_session_ran() -> None:
    cd = recipe(
        Session(id="c:x", provider="claude", native_id="x", cwd="/other", resume="cd /home/dev/p && claude --resume x")
    )
    assert cd == ResumeRecipe(argv=("claude", "--resume", "x"), cwd="/home/dev/p")
    no_cd = recipe(Session(id="codex:x", provider="codex", native_id="x", cwd="/home/dev/p", resume="codex resume x"))
    assert no_cd == ResumeRecipe(argv=("codex", "resume", "x"), cwd="/home/dev/p")
    assert recipe(Session(id="roo:x", provider="roo", native_id="x", cwd="/p")) is None


def test_hand_over_names_a_directory_it_cannot_enter(tmp_path: Path) -> None:
    """The directory can turn out unenterable (not a directory, no permission, gone) after ``missing`` looked:
    one line naming it, never an internal error, and the process stays where it was."""
    from voyager_sessions.api.resume import hand_over
    from voyager_sessions.core.errors import UserError

    not_a_dir = tmp_path / "file"
    not_a_dir.write_text("")
    before = os.getcwd()
    with pytest.raises(UserError, match=f"cannot resume: cannot enter {not_a_dir}: Not a directory"):
        hand_over(ResumeRecipe(argv=(sys.executable, "-c", "pass"), cwd=str(not_a_dir)))
    assert os.getcwd() == before


# -- the hand-over, in a subprocess -----------------------------------------------------------------------


def stub_agents(tmp: Path, names: list[str]) -> tuple[Path, Path]:
    """A bin dir of stub agents that append ``[cwd, $PWD, *argv[1:]]`` to a log, and the log."""
    bin_dir = tmp / "stub-bin"
    bin_dir.mkdir(exist_ok=True)
    log = tmp / "stub-calls.jsonl"
    for name in names:
        script = bin_dir / name
        script.write_text(
            f"#!{sys.executable}\nimport json, os, sys\n"
            f"open({str(log)!r}, 'a').write(json.dumps([os.path.basename(sys.argv[0]), os.getcwd(), "
            "os.environ.get('PWD')] + sys.argv[1:]) + '\\n')\n"
        )
        script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return bin_dir, log


def resume_env(data: Path, home: Path, bin_dir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in agent_variables()}
    env.update(HOME=str(home), VOYAGER_HOME=str(data), PATH=f"{bin_dir}{os.pathsep}/usr/bin{os.pathsep}/bin")
    return env


def resume_in_subprocess(ref: str, env: dict[str, str], log: Path, tmp: Path) -> list:
    """Run ``voyager resume REF``; the stub's one recorded call ([name, cwd, PWD, *args])."""
    proc = run_subprocess("resume", ref, env=env)
    assert proc.returncode == 0, proc.stderr
    assert "resuming" in proc.stderr
    assert not (tmp / "pwned").exists() and not Path("pwned").exists()
    (call,) = [json.loads(line) for line in log.read_text().splitlines()]
    log.unlink()
    return call


def _capture_params() -> list:
    """One capture per resumable provider: the plain session, and its subagent variant where one exists."""
    out = []
    for name in captures():
        provider = provider_of(name)
        if provider in BINARY and not name.endswith("-compact"):
            out.append(pytest.param(name, id=name))
    return out


@pytest.mark.parametrize("capture", _capture_params())
def test_resume_hands_each_capture_to_its_agent(capture: str, tmp_path: Path, run, monkeypatch) -> None:
    provider = provider_of(capture)
    home = tmp_path / "home"
    shutil.copytree(CAPTURES / capture, home, symlinks=True, ignore=shutil.ignore_patterns("truth.json"))
    relocate(home, CAPTURE_HOME, str(home))
    cwd = home / "proj"
    cwd.mkdir(exist_ok=True)
    data = tmp_path / "data"
    bin_dir, log = stub_agents(tmp_path, [BINARY[provider]])
    env = resume_env(data, home, bin_dir)
    for var in (*agent_variables(), "XDG_CONFIG_HOME", "XDG_DATA_HOME"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("VOYAGER_HOME", str(data))
    scanned = run("scan", "-q")  # in process (fast); only the resume that must exec runs in a subprocess
    assert scanned.exit_code == 0, scanned.stderr
    rows = run.json("list", "--json", "--limit", "1000")["sessions"]
    rows = [r for r in rows if r["provider"] == provider and r["resume"]]
    assert rows, f"{capture}: no resumable session"
    by_id = {r["session_id"]: r for r in rows}
    for row in rows:
        s = Session(
            id=row["session_id"], provider=provider, native_id=row["native_id"], cwd=row["cwd"], resume=row["resume"]
        )
        r = recipe(s)
        assert r is not None and not r.shell, f"{row['resume']!r} is not in the adapters' quoted shape"
        name, ran_in, pwd, *args = resume_in_subprocess(row["session_id"], env, log, tmp_path)
        assert name == BINARY[provider]
        assert row["cwd"] == str(cwd), row  # the capture's directory, as the adapter recorded it
        assert ran_in == pwd == row["cwd"]
        parent = by_id.get(row["parent"] or "")
        ids = {row["native_id"], parent["native_id"] if parent else None}
        if provider == "aider":  # Aider reopens the chat history of the directory it runs in: no id
            assert args == ["--restore-chat-history"], args
        elif provider == "cecli":  # cecli reopens the project's auto-save: the one session it points to
            assert args == ["--auto-load"] and row["native_id"].endswith("a34b5131/auto-save.json"), (row, args)
        elif provider == "cline" and row["parent"]:  # a subagent reopens through its root session
            assert args[-1] == row["parent"].partition(":")[2]
        else:
            assert ids & set(args), (row, args)


def test_resume_hostile_names_claude(home, run, tmp_path: Path) -> None:
    """An id and a directory full of shell syntax reach the agent as they are, and run nothing."""
    bad_dir = tmp_path / "proj; touch pwned $(touch pwned) `touch pwned` it's"
    bad_dir.mkdir()
    sid = "5f1c2a9e-$(touch pwned)-'x'"
    lines = [
        line.replace(CLAUDE_SID, sid).replace("/home/dev/shop", str(bad_dir).replace("\\", "\\\\"))
        for line in claude_session_lines(cwd="/home/dev/shop")
    ]
    write_claude(home, lines, sid=sid)
    bin_dir, log = stub_agents(tmp_path, ["claude"])
    env = resume_env(Path(os.environ["VOYAGER_HOME"]), home, bin_dir)
    assert run("scan", "-q").exit_code == 0
    name, ran_in, pwd, *args = resume_in_subprocess(f"claude:{sid}", env, log, tmp_path)
    assert (name, ran_in, pwd, args) == ("claude", str(bad_dir), str(bad_dir), ["--resume", sid])
    printed = run_subprocess("resume", f"claude:{sid}", "--print", env=env)
    assert printed.returncode == 0 and shlex.split(printed.stdout) == [
        "cd",
        str(bad_dir),
        "&&",
        "claude",
        "--resume",
        sid,
    ]


def _cursor(home: Path, work: Path) -> tuple[str, list[str]]:
    from urllib.parse import quote

    from tests.support.samples.cursor import CLI_MESSAGES, cli_store

    chat = "chat $(id) 1"
    cli_store(
        home / ".cursor" / "chats" / ("f" * 32) / chat / "store.db",
        CLI_MESSAGES,
        workspace="file://" + quote(str(work)),
    )
    return f"cursor:{chat}", ["--resume", chat]


def _kiro(home: Path, work: Path) -> tuple[str, list[str]]:
    from tests.support.samples.kiro import write_cli

    sid = "3f2a9c1e-5b7d-4e8f-9a0b-1c2d3e4f5a6b"
    write_cli(home, sid, meta={"session_id": sid, "cwd": str(work), "title": "x", "created_at": "2026-12-01T08:00:00Z"})
    return f"kiro:{sid}", ["chat", "--resume-id", sid]


def _grok(home: Path, work: Path) -> tuple[str, list[str]]:
    from tests.support.items import write
    from tests.support.samples.grok import folder, history, summary

    sid = "019f7000-0000-7000-8000-0000000000a1"
    path = folder(home, sid)
    summary(path, sid)
    doc = json.loads((path / "summary.json").read_text())
    doc["info"]["cwd"] = str(work)
    (path / "summary.json").write_text(json.dumps(doc))
    write(path / "chat_history.jsonl", history())
    return f"grok:{sid}", ["--resume", sid]


def _crush(home: Path, work: Path) -> tuple[str, list[str]]:
    from tests.support.samples.crush import project_store, write_projects

    project_store(home, work)
    write_projects(home / ".local/share/crush", [{"path": str(work), "data_dir": ".crush"}])
    return "crush:s-main", ["--cwd", str(work), "--session", "s-main"]


def _goose(home: Path, work: Path) -> tuple[str, list[str]]:
    from tests.support.samples.goose import MAIN, messages, write_db

    write_db(home, [dict(MAIN, working_dir=str(work))], [m for m in messages() if m[0] == MAIN["id"]])
    return f"goose:{MAIN['id']}", ["session", "--resume", "--session-id", MAIN["id"]]


def _devin(home: Path, work: Path) -> tuple[str, list[str]]:
    from tests.support.samples.devin import SID, write_db

    write_db(home / ".local/share/devin/cli/sessions.db", cwd=str(work))
    return f"devin:{SID}", ["-r", SID]


def _iflow(home: Path, work: Path) -> tuple[str, list[str]]:
    from tests.support.samples.iflow import SID, lines, write

    write(home, lines(cwd=str(work)))
    return f"iflow:{SID}", ["--resume", SID]


def _qoder(home: Path, work: Path) -> tuple[str, list[str]]:
    from tests.support.samples.qoder import SID, lines, write

    write(home, lines(cwd=str(work)))
    return f"qoder:{SID}", ["-r", SID]


def _amp(home: Path, work: Path) -> tuple[str, list[str]]:
    from urllib.parse import quote

    from tests.support.samples.amp import TID, messages, thread, write_thread

    trees = [{"displayName": work.name, "uri": "file://" + quote(str(work))}]
    write_thread(home, thread(messages(), env={"initial": {"trees": trees}}))
    return f"amp:{TID}", ["threads", "continue", TID]


#: provider -> a writer of one session whose working directory is ``work``: (its id, the arguments its agent gets).
SYNTHETIC_WRITERS = {
    "cursor": _cursor,
    "kiro": _kiro,
    "grok": _grok,
    "crush": _crush,
    "goose": _goose,
    "devin": _devin,
    "iflow": _iflow,
    "qoder": _qoder,
    "amp": _amp,
}


def test_synthetic_writers_cover_the_agents_without_captures() -> None:
    assert set(SYNTHETIC_WRITERS) == SYNTHETIC


@pytest.mark.parametrize("provider", sorted(SYNTHETIC_WRITERS))
def test_resume_hands_a_written_session_to_its_agent(provider: str, home, run, tmp_path: Path) -> None:
    """Agents with no capture: a session from their format writer, in a directory named with shell syntax."""
    work = tmp_path / "项目 a;b $(touch pwned)"
    work.mkdir()
    sid, expected = SYNTHETIC_WRITERS[provider](home, work)
    bin_dir, log = stub_agents(tmp_path, [BINARY[provider]])
    env = resume_env(Path(os.environ["VOYAGER_HOME"]), home, bin_dir)
    scanned = run("scan", "-q")
    assert scanned.exit_code == 0, scanned.stderr
    (row,) = [r for r in run.json("list", "--json")["sessions"] if r["session_id"] == sid]
    assert parse_command(row["resume"]) is not None, f"{row['resume']!r} is not in the adapters' quoted shape"
    name, ran_in, pwd, *args = resume_in_subprocess(sid, env, log, tmp_path)
    assert (name, ran_in, pwd, args) == (BINARY[provider], str(work), str(work), expected)


# -- what resume says instead --------------------------------------------------------------------------------


@pytest.fixture
def claude_indexed(home, run) -> Path:
    work = home / "shop"
    work.mkdir()
    write_claude(home, claude_session_lines(cwd=str(work)))
    assert run("scan", "-q").exit_code == 0
    return work


def test_resume_names_what_is_missing(claude_indexed: Path, home, tmp_path: Path, monkeypatch) -> None:
    bin_dir, log = stub_agents(tmp_path, [])  # no agent on PATH
    env = resume_env(Path(os.environ["VOYAGER_HOME"]), home, bin_dir)
    proc = run_subprocess("resume", CLAUDE_SID[:8], env=env)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and "`claude` is not on PATH" in proc.stderr
    shutil.rmtree(claude_indexed)
    stub_agents(tmp_path, ["claude"])
    proc = run_subprocess("resume", CLAUDE_SID[:8], env=env)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1
    assert f"the session's directory {claude_indexed} does not exist" in proc.stderr
    assert not log.exists()


def test_resume_print_is_quoted_for_a_shell(claude_indexed: Path, run) -> None:
    res = run("resume", CLAUDE_SID, "--print")
    assert res.exit_code == 0
    assert shlex.split(res.stdout) == ["cd", str(claude_indexed), "&&", "claude", "--resume", CLAUDE_SID]


def test_resume_dash_is_the_last_searchs_first_hit(claude_indexed: Path, run, home) -> None:
    none = run("resume", "-", "--print")
    assert none.exit_code == 2 and "voyager search" in none.stderr
    assert run("search", "marmalade", "--no-refresh", "--json").exit_code == 0
    last = Path(os.environ["VOYAGER_HOME"]) / "last-search.json"
    assert stat.S_IMODE(last.stat().st_mode) == 0o600
    res = run("resume", "-", "--print")
    assert res.exit_code == 0 and CLAUDE_SID in res.stdout
    assert "first hit of `voyager search marmalade`" in res.stderr
    assert run("search", "nothing-matches-this-zzz", "--no-refresh").exit_code == 1
    res = run("resume", "-", "--print")
    assert res.exit_code == 2 and "found nothing" in res.stderr


def test_search_does_not_fail_when_it_cannot_remember(claude_indexed: Path, run) -> None:
    last = Path(os.environ["VOYAGER_HOME"]) / "last-search.json"
    last.mkdir()  # os.replace cannot put a file there
    res = run("search", "marmalade", "--no-refresh", "--json")
    assert res.exit_code == 0 and json.loads(res.stdout)["total"] == 1
    assert [p.name for p in last.parent.iterdir() if p.name.startswith(".last-search")] == []


def test_dash_with_an_unreadable_last_search_is_one_line(claude_indexed: Path, run) -> None:
    (Path(os.environ["VOYAGER_HOME"]) / "last-search.json").mkdir()  # opens, but cannot be read
    res = run("resume", "-", "--print")
    assert res.exit_code == 2 and res.stdout == ""
    assert res.stderr.count("\n") == 1 and "cannot read" in res.stderr and "last-search.json" in res.stderr


def test_no_resume_offers_export(home, run) -> None:
    from tests.support.samples.copilot_vscode import rich_session, workspace

    (workspace(home) / "rich.json").write_text(json.dumps(rich_session(), ensure_ascii=False), encoding="utf-8")
    assert run("scan", "-q").exit_code == 0
    res = run("resume", "copilot-vscode:rich")
    assert res.exit_code == 2 and res.stdout == ""
    assert "no command that reopens" in res.stderr and "voyager export copilot-vscode:rich" in res.stderr


def test_resume_print_hides_control_characters_only_from_a_terminal(home, run) -> None:
    lines = [json_line({**json.loads(line), "cwd": "/tmp/a\x1b]52;c;cHduZWQ=\x07b"}) for line in claude_session_lines()]
    write_claude(home, lines)
    assert run("scan", "-q").exit_code == 0
    res = run("resume", CLAUDE_SID, "--print")  # CliRunner's stdout is not a terminal: exact bytes
    assert shlex.split(res.stdout)[1] == "/tmp/a\x1b]52;c;cHduZWQ=\x07b"
    import pty
    import subprocess

    from tests.support.run import voyager_exe

    main, child = pty.openpty()
    try:
        proc = subprocess.run(
            [*voyager_exe(), "resume", CLAUDE_SID, "--print"],
            stdout=child,
            stderr=subprocess.PIPE,
            text=True,
            timeout=60,
        )
        os.close(child)
        shown = os.read(main, 65536)
    finally:
        os.close(main)
    assert proc.returncode == 0 and "control characters" in proc.stderr
    assert b"\x1b" not in shown and b"\x07" not in shown and "/tmp/a\u241b]52".encode() in shown
