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
from tests.support.sessions import (
    CLAUDE_SID,
    claude_session_lines,
    codex_session_lines,
    json_line,
    write_claude,
    write_codex,
)
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
SYNTHETIC = {
    "cursor",
    "kiro",
    "grok",
    "crush",
    "goose",
    "devin",
    "iflow",
    "qoder",
    "amp",
    "openclaude",
    "traex",
    "auggie",
}

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


def _openclaude(home: Path, work: Path) -> tuple[str, list[str]]:
    from tests.support.samples.openclaude import SID, lines, write

    write(home, lines(cwd=str(work)))
    return f"openclaude:{SID}", ["--resume", SID]


def _auggie(home: Path, work: Path) -> tuple[str, list[str]]:
    from tests.support.samples.auggie import SID, doc, write

    write(home, doc())  # the file names no directory: Auggie finds a session by id wherever it runs
    return f"auggie:{SID}", ["--resume", SID]


def _traex(home: Path, work: Path) -> tuple[str, list[str]]:
    from tests.support.samples.traex import SID, rollout, write

    write(home, rollout(cwd=str(work)))
    return f"traex:{SID}", ["resume", SID]


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
    "openclaude": _openclaude,
    "traex": _traex,
    "auggie": _auggie,
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
    # A session whose files name no directory (Auggie's) is resumed where voyager runs: its agent finds it by id.
    where = str(work) if row["cwd"] else os.getcwd()
    assert (name, ran_in, pwd, args) == (BINARY[provider], where, where, expected)


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


# -- ids and paths from files are data, never options (issue 38) -------------------------------------------

#: What a crafted file names its session: an option that turns the agent's safety checks off.
YOLO = "--dangerously-skip-permissions"


def row_options(provider: str) -> frozenset[str]:
    """The options the provider's manifest row declares for its resume command (its ``resume`` cell)."""
    import re

    cell = " ".join(re.findall(r"`([^`]*)`", manifest.row(provider).resume))
    return frozenset(re.findall(r"(?<![\w-])--?[A-Za-z][A-Za-z0-9-]*", cell))


def assert_data_stays_data(provider: str, argv: tuple[str, ...] | list[str], hostile: str) -> None:
    """No word of ``argv`` that the agent's parser reads as an option came from a file: each word before a
    ``--`` that begins with ``-`` is an option the row declares (``--flag=VALUE`` carries its value with it),
    and a ``hostile`` value stands only attached to its option, after ``--`` or as ``./…``."""
    words = list(argv[1:])
    end = words.index("--") if "--" in words else len(words)
    for word in words[:end]:
        if word.startswith("-"):
            assert word.partition("=")[0] in row_options(provider), (provider, argv)
        assert not word.startswith(hostile), (provider, argv)


def rewrite_ids(root: Path, ids: list[str], hostile: str, *, names: bool = True) -> None:
    """Every native id in ``root`` (file text, SQLite text cells, and with ``names`` file and folder names)
    prefixed with ``hostile``."""
    for native in sorted(ids, key=len, reverse=True):
        relocate(root, native, hostile + native)
        for p in sorted(root.rglob(f"*{native}*") if names else (), key=lambda p: -len(p.parts)):
            if native in p.name and not p.name.startswith(hostile):
                p.rename(p.with_name(p.name.replace(native, hostile + native)))


def _adapter_sessions(provider: str, home: Path) -> list[Session]:
    from voyager_sessions.ingest.adapters import get
    from voyager_sessions.ingest.adapters.base import Source, discover

    adapter = get(provider)
    out: list[Session] = []
    for found in discover(adapter, {"HOME": str(home)}):
        if isinstance(found, Source):
            out += [i for i in adapter.read(found) if isinstance(i, Session)]
    return out


#: Agents whose ids no file can make begin with '-': OpenHands' is its folder's hex, Omnigent's a 16-byte UUID, Aider's
#: and cecli's a history file's path.
NOT_SPELLED = {"openhands", "omnigent", "aider", "cecli"}

#: Agents that take a session's id only after a short option (``-r ID``): a hostile id leaves them no command.
SHORT_OPTION_ONLY = {"kimi", "devin", "qoder", "code-puppy", "deepagents"}


def _hostile_home_params() -> list:
    out = [pytest.param("capture", c, id=c) for c in (p.values[0] for p in _capture_params())]
    return out + [pytest.param("writer", p, id=f"{p}-written") for p in sorted(SYNTHETIC_WRITERS)]


@pytest.mark.parametrize(("kind", "which"), _hostile_home_params())
def test_a_hostile_id_is_data_for_every_agent(kind: str, which: str, tmp_path: Path, home: Path) -> None:
    """Every resumable agent's sessions, their ids rewritten to begin with ``--dangerously-skip-permissions``
    (the file names, the records, the database rows that hold them): each resume command either hands the id
    over as data (``--resume=ID``, ``-- ID``) and holds no option its manifest row does not declare, or the
    session has no command and ``why_none`` says why."""
    from voyager_sessions.api.resume import why_none

    provider = provider_of(which) if kind == "capture" else which

    def written(names: bool) -> list[Session]:
        shutil.rmtree(home)
        work = tmp_path / "work"
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir()
        if kind == "capture":
            shutil.copytree(CAPTURES / which, home, symlinks=True, ignore=shutil.ignore_patterns("truth.json"))
            relocate(home, CAPTURE_HOME, str(home))
        else:
            home.mkdir()
            SYNTHETIC_WRITERS[provider](home, work)
        before = _adapter_sessions(provider, home)
        assert before, which
        for root in (home, work):  # Crush keeps a project's database in the project
            rewrite_ids(root, [s.native_id for s in before if s.provider == provider], YOLO, names=names)
        return [s for s in _adapter_sessions(provider, home) if s.provider == provider]

    # A file the agent names after its id is renamed too; where the agent's file names have a shape of
    # their own (Amp's T-<id>.json), the id is rewritten where the records hold it.
    after = written(names=True)
    if not any(s.native_id.startswith(YOLO) for s in after):
        after = written(names=False)
    # Some ids nothing in a file can spell so (NOT_SPELLED); their commands are still checked (no undeclared option).
    assert any(s.native_id.startswith(YOLO) for s in after) or provider in NOT_SPELLED, (
        which,
        [s.native_id for s in after],
    )
    for s in after:
        r = recipe(s)
        if r is None:
            # No command: only where the agent takes the id after a short option (``kimi -r``: no form keeps a
            # value beginning with '-' data for every parser), and it says why.
            assert s.resume is None, s.resume
            if provider in NOT_SPELLED:  # no command for this one whatever its id (cecli: not the latest save)
                continue
            if s.parent:  # a subagent of an agent that reopens it only through its parent (Crush, Goose)
                assert "through its parent" in why_none(s)
                continue
            assert provider in SHORT_OPTION_ONLY, (s.id, s.resume)
            assert "as data" in why_none(s), why_none(s)
            continue
        assert not r.shell, s.resume
        assert_data_stays_data(provider, r.argv, YOLO)
        assert not (r.cwd or "").startswith("-")


def test_a_claude_file_named_as_an_option_resumes_as_data(home, run, tmp_path: Path) -> None:
    """The probe: a Claude Code file named ``--dangerously-skip-permissions.jsonl``. ``voyager resume -`` after a
    search hands ``--resume=--dangerously-skip-permissions`` to claude (one word: the id is the option's value),
    and the JSON ``resume`` field, ``--print`` and the exec agree."""
    work = home / "shop"
    work.mkdir()
    write_claude(home, claude_session_lines(sid=YOLO, cwd=str(work)), sid=YOLO)
    bin_dir, log = stub_agents(tmp_path, ["claude"])
    env = resume_env(Path(os.environ["VOYAGER_HOME"]), home, bin_dir)
    assert run("scan", "-q").exit_code == 0
    found = run.json("search", "marmalade", "--json", "--no-refresh")
    (hit,) = found["hits"]
    assert hit["session_id"] == f"claude:{YOLO}"
    assert shlex.split(hit["resume"]) == ["cd", str(work), "&&", "claude", f"--resume={YOLO}"]
    printed = run("resume", "-", "--print")
    assert printed.exit_code == 0 and printed.stdout.strip() == hit["resume"]
    name, ran_in, _, *args = resume_in_subprocess("-", env, log, tmp_path)
    assert (name, ran_in, args) == ("claude", str(work), [f"--resume={YOLO}"])


def test_a_codex_id_that_is_an_option_resumes_after_the_end_of_options(home, run, tmp_path: Path) -> None:
    """The probe's second file: a Codex rollout whose id is ``--dangerously-bypass-approvals-and-sandbox``. Codex
    takes the id as an operand, so it comes after ``--``: ``codex resume -- --dangerously-bypass-…``."""
    bad = "--dangerously-bypass-approvals-and-sandbox"
    work = home / "api"
    work.mkdir()
    write_codex(home, codex_session_lines(sid=bad, cwd=str(work)), sid="0199a7b2-0000-7000-8000-000000000001")
    bin_dir, log = stub_agents(tmp_path, ["codex"])
    env = resume_env(Path(os.environ["VOYAGER_HOME"]), home, bin_dir)
    assert run("scan", "-q").exit_code == 0
    (row,) = run.json("list", "--json")["sessions"]
    assert row["native_id"] == bad and shlex.split(row["resume"]) == ["codex", "resume", "--", bad]
    name, ran_in, _, *args = resume_in_subprocess(row["session_id"], env, log, tmp_path)
    assert (name, ran_in, args) == ("codex", str(work), ["resume", "--", bad])


def test_an_index_from_before_keeps_no_command_with_a_foreign_option(home, run, tmp_path: Path) -> None:
    """A session indexed by a Voyager that wrote ``claude --resume --dangerously-skip-permissions``: the state
    migration drops that command (and only that one), and ``voyager resume`` says why instead of running it."""
    import sqlite3

    from voyager_sessions.core.paths import DataDir
    from voyager_sessions.store.state import StateStore

    work = home / "shop"
    work.mkdir()
    write_claude(home, claude_session_lines(cwd=str(work)))
    assert run("scan", "-q").exit_code == 0
    state = DataDir(Path(os.environ["VOYAGER_HOME"])).state_db
    db = sqlite3.connect(state)
    old = f"cd {shlex.quote(str(work))} && claude --resume {YOLO}"
    db.execute("UPDATE sessions SET resume = ?", (old,))
    db.execute(
        "INSERT INTO sessions (id, provider, native_id, resume) VALUES ('codex:x', 'codex', 'x', 'codex resume x')"
    )
    db.execute("PRAGMA user_version = 8")  # as the Voyager before this migration left it
    db.commit()
    db.close()
    StateStore(state).close()  # opening it migrates
    db = sqlite3.connect(state)
    assert dict(db.execute("SELECT id, resume FROM sessions").fetchall()) == {
        f"claude:{CLAUDE_SID}": None,
        "codex:x": "codex resume x",
    }
    db.close()
    res = run("resume", CLAUDE_SID, "--print")
    assert res.exit_code == 2 and res.stdout == ""
    assert "cannot resume" in res.stderr and "voyager export" in res.stderr


def test_a_command_kept_with_a_foreign_option_is_never_run() -> None:
    """Whatever put it there, a command whose words after the program hold an option no manifest row declares is
    no recipe: resume, the picker's Enter and the web page's copy button all go through ``recipe``."""
    from voyager_sessions.api.resume import why_none

    for command in (
        f"claude --resume {YOLO}",
        f"codex resume {shlex.quote('--dangerously-bypass-approvals-and-sandbox')}",
        "cd /w && claude --resume x --permission-mode=bypassPermissions",
        "claude --resume 'a\x00b'",
    ):
        s = Session(id="claude:x", provider="claude", native_id="x", cwd="/w", resume=command)
        assert recipe(s) is None, command
        assert "will not run it" in why_none(s)
    for command in (f"claude --resume={YOLO}", f"codex resume -- {YOLO}", "goose session --resume --session-id x"):
        assert recipe(Session(id="c:x", provider="claude", native_id="x", resume=command)) is not None


# -- the forms: what resume_in writes, read back by real option parsers -------------------------------------


def test_resume_in_hands_data_over_as_data() -> None:
    from voyager_sessions.ingest.adapters._common import arg, opt, path_arg, resume_in

    assert resume_in("/w", "claude", opt("--resume", "abc")) == "cd /w && claude --resume abc"  # as always
    assert resume_in("/w", "claude", opt("--resume", YOLO)) == f"cd /w && claude --resume={YOLO}"
    assert resume_in(None, "codex", "resume", arg(YOLO)) == f"codex resume -- {YOLO}"
    assert resume_in(None, "codex", "resume", arg("abc")) == "codex resume abc"
    assert resume_in(None, "kimi", opt("-r", YOLO)) is None  # a short option: no form keeps it data everywhere
    assert resume_in(None, "kimi", opt("-r", "abc")) == "kimi -r abc"
    # A path operand: absolute as it is, anything else explicitly relative (never an option, never a subcommand).
    assert resume_in(None, "opencode", path_arg("/p"), opt("--session", "s")) == "opencode /p --session s"
    assert resume_in(None, "opencode", path_arg("-rf"), opt("--session", "s")) == "opencode ./-rf --session s"
    assert resume_in(None, "opencode", path_arg("run"), opt("--session", "s")) == "opencode ./run --session s"
    assert resume_in("-P", "claude", opt("--resume", "x")) == "cd ./-P && claude --resume x"
    # What no program can be given, or no id at all.
    assert resume_in(None, "claude", opt("--resume", "a\x00b")) is None
    assert resume_in("/a\x00b", "claude", opt("--resume", "x")) is None
    assert resume_in(None, "claude", opt("--resume", "")) is None
    # An id passed unmarked (an adapter written before the forms): still never an option no row declares.
    assert resume_in(None, "claude", "--resume", YOLO) is None
    assert resume_in(None, "claude", "--resume", "abc") == "claude --resume abc"
    # Shell syntax in data stays one quoted word.
    hostile = "x; touch pwned $(id) `id` 'q'\nnext"
    line = resume_in(hostile, "claude", opt("--resume", hostile))
    assert line is not None and shlex.split(line) == ["cd", hostile, "&&", "claude", "--resume", hostile]


PARSED = [
    # (argv after the program, what the option's value / the operand must be)
    ([f"--resume={YOLO}"], YOLO),
    ([f"--resume=a=b {YOLO}"], f"a=b {YOLO}"),
    (["--", YOLO], YOLO),
]


@pytest.mark.parametrize(("argv", "value"), PARSED)
def test_argparse_and_click_read_the_forms_as_data(argv: list[str], value: str) -> None:
    """Python's two option parsers (argparse: Vibe, OpenHands, Hermes, Aider; click: gptme, Kimi) read an attached
    value and an operand after ``--`` as data, and never see the flag the value spells."""
    import argparse

    import click
    from click.testing import CliRunner

    parser = argparse.ArgumentParser()
    parser.add_argument("--resume")
    parser.add_argument("--dangerously-skip-permissions", action="store_true")
    parser.add_argument("operand", nargs="?")
    ns = parser.parse_args(argv)
    assert (ns.resume or ns.operand) == value and not ns.dangerously_skip_permissions

    seen: dict = {}

    @click.command()
    @click.option("--resume")
    @click.option("--dangerously-skip-permissions", "yolo", is_flag=True)
    @click.argument("operand", required=False)
    def cmd(resume, yolo, operand):  # noqa: ANN001, ANN202
        seen.update(value=resume or operand, yolo=yolo)

    assert CliRunner().invoke(cmd, argv).exit_code == 0
    assert seen == {"value": value, "yolo": False}


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
@pytest.mark.parametrize(("argv", "value"), PARSED)
def test_nodes_parser_reads_the_forms_as_data(argv: list[str], value: str) -> None:
    """Node's own option parser (``util.parseArgs``, the rules commander and yargs share for these forms: the
    agents written in TypeScript) reads the same."""
    import subprocess

    script = (
        "const {parseArgs} = require('node:util');"
        "const r = parseArgs({args: JSON.parse(process.argv[1]), allowPositionals: true, strict: true, options: {"
        "resume: {type: 'string'}, 'dangerously-skip-permissions': {type: 'boolean'}}});"
        "console.log(JSON.stringify([r.values.resume ?? r.positionals[0], !!r.values['dangerously-skip-permissions']]));"
    )
    out = subprocess.run(["node", "-e", script, json.dumps(argv)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == [value, False]


# -- where the agent runs -----------------------------------------------------------------------------------


def test_a_folder_another_user_controls_is_no_place_to_resume(tmp_path: Path) -> None:
    """An agent started in a folder reads its project settings (hooks, MCP servers) from there: a session's
    folder must belong to this user (or root), be writable by no other user, and lie below no folder another
    user owns or may rename things in."""
    from voyager_sessions.api.resume import unsafe_directory

    mine = tmp_path / "mine"
    mine.mkdir(mode=0o755)
    assert unsafe_directory(str(mine)) is None
    if os.geteuid() != 0:  # the folder is ours: seen by another user, it is someone else's
        assert "belongs to another user" in (unsafe_directory(str(mine), uid=os.geteuid() + 4242) or "")
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    assert "writable by every user" in (unsafe_directory(str(shared)) or "")
    inside = shared / "proj"
    inside.mkdir(mode=0o755)
    assert "which every user can write" in (unsafe_directory(str(inside)) or "")
    shared.chmod(0o1777)  # sticky, as /tmp: nobody may rename what is not theirs
    assert unsafe_directory(str(inside)) is None
    afile = tmp_path / "file"
    afile.write_text("")
    assert "is not a directory" in (unsafe_directory(str(afile)) or "")
    assert "does not exist" in (unsafe_directory(str(tmp_path / "gone")) or "")
    if os.geteuid() == 0:  # root can hand a folder to someone else
        theirs = tmp_path / "theirs"
        theirs.mkdir(mode=0o755)
        os.chown(theirs, 4242, 4242)
        assert "belongs to another user (uid 4242)" in (unsafe_directory(str(theirs)) or "")
        below = theirs / "proj"
        below.mkdir()
        assert "lies in" in (unsafe_directory(str(below)) or "")


def test_resume_refuses_a_folder_every_user_can_write(home, run, tmp_path: Path) -> None:
    work = tmp_path / "shared"
    work.mkdir()
    work.chmod(0o777)
    write_claude(home, claude_session_lines(cwd=str(work)))
    bin_dir, log = stub_agents(tmp_path, ["claude"])
    env = resume_env(Path(os.environ["VOYAGER_HOME"]), home, bin_dir)
    assert run("scan", "-q").exit_code == 0
    proc = run_subprocess("resume", CLAUDE_SID, env=env)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1
    assert "writable by every user" in proc.stderr and "--print" in proc.stderr
    assert not log.exists()


def test_resume_in_a_folder_with_a_newline(home, run, tmp_path: Path) -> None:
    """A folder name with a newline and a terminal escape is still one folder: the agent runs there, and the line
    that says so shows the characters as stand-ins."""
    work = tmp_path / "two\nlines \x1b[31mred"
    work.mkdir()
    write_claude(home, [line.replace("/home/dev/shop", json.dumps(str(work))[1:-1]) for line in claude_session_lines()])
    bin_dir, log = stub_agents(tmp_path, ["claude"])
    env = resume_env(Path(os.environ["VOYAGER_HOME"]), home, bin_dir)
    assert run("scan", "-q").exit_code == 0
    proc = run_subprocess("resume", CLAUDE_SID, env=env)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.count("\n") == 1 and "\x1b" not in proc.stderr
    (call,) = [json.loads(line) for line in log.read_text().splitlines()]
    assert call[:2] == ["claude", str(work)] and call[3:] == ["--resume", CLAUDE_SID]
