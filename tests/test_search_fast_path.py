"""``voyager search`` without click (voyager_sessions.cli.main) behaves exactly like the click command.

Three layers: the option table is the click command's definition; the fast argv reader
never accepts what click refuses and, where it accepts, yields click's own values
(fixed vectors plus a seeded fuzz); and whole runs (stdout, stderr, exit code, errors
the command raises) match between ``voyager_sessions.cli.main.main`` and ``voyager_sessions.cli.app.main``.
"""

from __future__ import annotations

import gc
import os
import random
import subprocess
import sys

import click
import pytest

from voyager_sessions.cli import commands
from voyager_sessions.cli import reading as search_cmd
from voyager_sessions.cli.app import cli
from voyager_sessions.cli.common import Busy, UserError
from voyager_sessions.cli.main import COMPLETE_VAR
from voyager_sessions.cli.main import main as fast_main
from voyager_sessions.cli.options import QUERY_PARAM, SEARCH_OPTIONS

SEARCH = cli.commands["search"]


def parse_search(args: list[str]) -> dict | None:
    """What voyager_sessions.cli.main reads from ``voyager search ARGS`` without click."""
    return commands.parse("search", args)


@pytest.fixture(autouse=True)
def _unfreeze():
    """voyager_sessions.cli.main.main freezes what start-up imported (meant for a process about to exit); undo it here."""
    yield
    gc.unfreeze()


def _click_params(args: list[str]) -> dict | None:
    """What click passes the search callback for ``args``, or None when it refuses them or shows help."""
    try:
        return SEARCH.make_context("search", list(args)).params
    except (click.ClickException, click.exceptions.Exit):
        return None


# -- the option table is the click command ----------------------------------------------


def test_click_command_is_built_from_the_table():
    params = SEARCH.params
    assert params[0].name == QUERY_PARAM and params[0].nargs == -1 and isinstance(params[0], click.Argument)
    options = [p for p in params[1:] if p.name != "help"]
    assert [o.name for o in options] == [o.dest for o in SEARCH_OPTIONS]
    for opt, param in zip(SEARCH_OPTIONS, options):
        assert tuple(param.opts) == opt.decls
        assert param.multiple == opt.multiple
        assert param.is_flag == (opt.kind == "flag")
        if opt.kind == "int":
            assert (param.type.min, param.type.max) == opt.bounds
        if opt.kind == "choice":
            assert tuple(param.type.choices) == opt.choices


def test_click_command_help_lists_every_option():
    help_text = SEARCH.get_help(click.Context(SEARCH, info_name="search"))
    for opt in SEARCH_OPTIONS:
        for decl in opt.decls:
            assert decl in help_text


# -- the fast reader agrees with click ----------------------------------------------------

#: Spellings the fast reader must take itself (each also checked against click).
ACCEPTED = [
    ["zorblax"],
    ["zorblax", "--no-refresh", "--json"],
    ["connection", "refused", "--jsonl", "-n", "5", "--offset", "10"],
    ["--json", "x", "--limit=3", "--provider", "codex", "--provider=claude", "--kind", "tool", "y"],
    ["x", "--repo", "voyager", "--cwd", "/home/dev", "--session", "3f2a", "--since", "7d", "--until", "2026-11-01"],
    ["x", "--sort", "recent", "--sessions", "-C", "3", "--color", "never", "--context=50"],
    ["x", "--limit", "10000", "--offset", "0", "--limit", "7"],  # the last of a repeated option wins
    ["--no-refresh", "--json", "--provider", "codex"],
    ["--", "-word", "--json"],
    ["-", "x"],
    ["x", "--repo", "--json"],  # click takes the next word as the value, whatever it looks like
    ["x", "--repo", ""],
    ["x", "--since=a=b"],
    ["数据库", "--limit", "007"],
    [],
]

#: Spellings left to click (help, mistakes, forms not copied).
REFUSED = [
    ["--help"],
    ["-h"],
    ["x", "--bogus"],
    ["x", "-x"],
    ["x", "--limit"],
    ["x", "--limit", "0"],
    ["x", "-n", "10001"],
    ["x", "-n5"],
    ["x", "-n=5"],
    ["x", "--limit", "abc"],
    ["x", "--limit", "+5"],
    ["x", "--limit", "5_0"],
    ["x", "--json=1"],
    ["x", "--sort", "RECENT"],
    ["x", "--color", "yes"],
    ["x", "-C", "51"],
    ["x", "--lim", "3"],
    ["x", "-Cn"],
    ["x", "--version"],
    ["-5"],
    ["x", "--offset", "9" * 5000],
    ["x", "--limit", "0" * 5000 + "5"],  # past Python's int() digit limit
]


@pytest.mark.parametrize("args", ACCEPTED, ids=lambda a: " ".join(a) or "(none)")
def test_fast_reader_reads_what_click_reads(args):
    fast = parse_search(args)
    assert fast is not None
    assert fast == _click_params(args)


@pytest.mark.parametrize("args", REFUSED, ids=" ".join)
def test_fast_reader_leaves_the_rest_to_click(args):
    assert parse_search(args) is None


def test_fast_reader_never_disagrees_with_click_fuzzed():
    vocab = [
        "w",
        "a b",
        "数据",
        "-",
        "--",
        "-x",
        "-word",
        "--json",
        "--jsonl",
        "--json=1",
        "--limit",
        "--limit=5",
        "-n",
        "-n5",
        "-n=5",
        "5",
        "0",
        "10000",
        "10001",
        "-3",
        "+3",
        "05",
        "abc",
        "",
        "--offset",
        "--offset=-1",
        "--sort",
        "recent",
        "relevance",
        "RECENT",
        "--color",
        "never",
        "always",
        "--provider",
        "codex",
        "--kind",
        "tool",
        "--repo",
        "--sessions",
        "--session",
        "-C",
        "-C3",
        "50",
        "51",
        "--no-refresh",
        "--help",
        "-h",
        "--since",
        "7d",
        "--until",
        "--cwd",
        "--lim",
        "-Cn",
        "--context=2",
        "--provider=x",
        "x=y",
        "-xyz",
        "--no-refresh=1",
        "--sort=recent",
        "--color=",
        "0" * 30 + "7",
        "9" * 30,
    ]
    rng = random.Random(20261130)
    accepted = 0
    for _ in range(3000):
        args = [rng.choice(vocab) for _ in range(rng.randint(0, 7))]
        fast = parse_search(args)
        if fast is not None:
            accepted += 1
            assert fast == _click_params(args), args
    assert accepted > 300  # the fuzz exercises the reader, not only its refusals


# -- whole runs match ------------------------------------------------------------------------


def _outcome(entry, argv: list[str], capfd) -> tuple[object, str, str]:
    with pytest.raises(SystemExit) as exc_info:
        entry(argv)
    out, err = capfd.readouterr()
    return exc_info.value.code, out, err


def _click_main(argv: list[str]) -> None:
    from voyager_sessions.cli.app import main

    main(argv)


RUNS = [
    ["search", "数据", "--json", "--no-refresh"],
    ["search", "connection", "refused", "--jsonl", "--no-refresh", "-n", "1"],
    ["search", "--no-refresh", "--provider", "codex", "--kind", "tool", "--json"],
    ["search", "ERR_CONN_REFUSED_42", "--no-refresh"],
    ["search", "ERR_CONN_REFUSED_42", "--no-refresh", "--color", "always"],
    ["search", "parse_config_v2", "--no-refresh", "-C", "1", "--json"],
    ["search", "postgres", "--no-refresh", "--sessions", "--sort", "recent", "--json"],
    ["search", "postgres", "--no-refresh", "--offset", "5", "--json"],
    ["search", "postgres", "--no-refresh", "--offset", "5"],
    ["search", "qwertyuiopasdf", "--no-refresh"],
    ["search", "qwertyuiopasdf", "--no-refresh", "--json"],
    ["search", "--no-refresh", "--json"],
    ["search", '"unterminated', "--no-refresh"],
    ["search", "x", "--no-refresh", "--kind", "nope"],
    ["search", "x", "--no-refresh", "--provider", "nope"],
    ["search", "x", "--no-refresh", "--since", "7x"],
    ["search", "postgres", "--json"],  # refreshes first: nothing changed
    ["search", "--", "-postgres", "systemctl"],
]


def test_whole_runs_match_the_click_command(corpus, run, capfd):
    assert run("scan").exit_code == 0
    capfd.readouterr()
    for argv in RUNS:
        assert parse_search(argv[1:]) is not None, argv  # this run takes the fast path
        fast = _outcome(fast_main, argv, capfd)
        slow = _outcome(_click_main, argv, capfd)
        assert fast == slow, argv
        assert fast[0] in (0, 1, 2), (argv, fast)


def test_what_the_fast_path_leaves_to_click_still_works(corpus, run, capfd):
    assert run("scan").exit_code == 0
    capfd.readouterr()
    for argv in (
        ["search", "--help"],
        ["search", "x", "-n0"],
        ["search", "x", "--bogus"],
        ["--version"],
        ["list", "--json"],
    ):
        assert _outcome(fast_main, argv, capfd) == _outcome(_click_main, argv, capfd), argv


def test_a_fresh_data_dir_matches(home, capfd):
    # The first search in a fresh data dir scans (finding nothing here) before it answers.
    argv = ["search", "x", "--json"]
    assert _outcome(fast_main, argv, capfd) == _outcome(_click_main, argv, capfd)


def _store_error() -> Exception:
    from voyager_sessions.store.db import StoreError

    return StoreError("cannot open state.db: disk I/O error")


@pytest.mark.parametrize(
    "exc",
    [
        UserError("bad thing: fix it"),
        Busy("another scan is running (pid 1)"),
        _store_error(),
        RuntimeError("boom"),
        KeyboardInterrupt(),
        EOFError(),
        BrokenPipeError(32, "pipe"),
    ],
    ids=lambda e: type(e).__name__,
)
def test_errors_the_command_raises_are_reported_alike(exc, home, capfd, monkeypatch):
    def raising(**params) -> None:
        raise exc

    monkeypatch.setattr(search_cmd, "search_command", raising)
    monkeypatch.setattr(sys, "stdout", sys.stdout)  # click swaps in a pipe-pacifying wrapper on EPIPE
    monkeypatch.setattr(sys, "stderr", sys.stderr)
    argv = ["search", "x", "--no-refresh", "--json"]
    fast = _outcome(fast_main, argv, capfd)
    assert fast == _outcome(_click_main, argv, capfd)
    assert fast[1] == ""
    if isinstance(exc, (UserError, Busy)):
        assert fast == (exc.exit_code, "", f"voyager: {exc}\n")


def test_a_broken_install_is_reported_alike(home, capfd, monkeypatch):
    # An import the search needs fails: the same one-line internal error either way.
    monkeypatch.setitem(sys.modules, "msgspec", None)
    for name in [
        m
        for m in sys.modules
        if m in ("voyager_sessions.core.model", "voyager_sessions.search") or m.startswith("voyager_sessions.search.")
    ]:
        monkeypatch.delitem(sys.modules, name)
    argv = ["search", "x", "--no-refresh", "--json"]
    fast = _outcome(fast_main, argv, capfd)
    assert fast == _outcome(_click_main, argv, capfd)
    assert fast[0] == 4 and "internal error: ModuleNotFoundError" in fast[2]


def test_debug_mode_raises_alike(home, monkeypatch):
    def raising(**params) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(search_cmd, "search_command", raising)
    monkeypatch.setenv("VOYAGER_DEBUG", "1")
    for entry in (fast_main, _click_main):
        with pytest.raises(RuntimeError, match="boom"):
            entry(["search", "x"])


def test_shell_completion_goes_to_click(home, capfd, monkeypatch):
    monkeypatch.setenv(COMPLETE_VAR, "bash_complete")
    monkeypatch.setenv("COMP_WORDS", "voyager search x --no-re")
    monkeypatch.setenv("COMP_CWORD", "3")
    fast = _outcome(fast_main, ["search", "x", "--no-re"], capfd)
    assert fast == _outcome(_click_main, ["search", "x", "--no-re"], capfd)
    assert "--no-refresh" in fast[1]


def test_console_script_searches_without_importing_click(corpus, run):
    assert run("scan").exit_code == 0
    code = (
        "import atexit, sys\n"
        "atexit.register(lambda: sys.stderr.write('click imported: %s\\n' % ('click' in sys.modules)))\n"
        "from voyager_sessions.cli.main import main\n"
        "main()\n"
    )
    for argv, rc in (
        (["search", "数据", "--json", "--no-refresh"], 0),
        (["search", "qwertyuiopasdf", "--json"], 1),
        (["search", "(", "--json"], 2),
    ):
        proc = subprocess.run(
            [sys.executable, "-c", code, *argv],
            capture_output=True,
            text=True,
            env=dict(os.environ),
            timeout=120,
            check=False,
        )
        assert proc.returncode == rc, proc.stderr
        assert proc.stderr.endswith(f"click imported: {rc == 2}\n"), proc.stderr  # only an error needs click


def test_fast_path_sets_the_private_umask(corpus, run):
    # What the root group does first (everything Voyager writes is private) happens on the fast path too.
    assert run("scan").exit_code == 0
    code = (
        "import atexit, os, sys\n"
        "atexit.register(lambda: sys.stderr.write('umask %o\\n' % os.umask(0)))\n"
        "from voyager_sessions.{} import main\n"
        "main()\n"
    )
    for module in ("cli.main", "cli.app"):
        proc = subprocess.run(
            [sys.executable, "-c", code.format(module), "search", "数据", "--json", "--no-refresh"],
            capture_output=True,
            text=True,
            env=dict(os.environ),
            timeout=120,
            check=False,
            preexec_fn=lambda: os.umask(0o022),
        )
        assert proc.returncode == 0 and proc.stderr == "umask 77\n", (module, proc.stderr)


def test_the_command_runs_with_collection_on(home, monkeypatch):
    # Start-up runs with the cyclic collector off; the work (a refresh scan may read gigabytes) must not.
    seen: list[bool] = []

    def recording(**params) -> None:
        seen.append(gc.isenabled())
        raise SystemExit(0)

    monkeypatch.setattr(search_cmd, "search_command", recording)
    with pytest.raises(SystemExit):
        fast_main(["search", "x"])
    with pytest.raises(SystemExit):
        _click_main(["search", "x"])
    assert seen == [True, True] and gc.isenabled()


def test_the_picker_imports_textual_with_collection_off_and_runs_with_it_on(home, monkeypatch):
    # `voyager ui`'s fast path: Textual and the app are imported before the collector runs again (it ran ~95
    # times in their import), and the app itself runs with it on.
    pytest.importorskip("textual")
    import io

    from voyager_sessions import tui
    from voyager_sessions.cli import picker

    seen: list[tuple[str, bool]] = []

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    def loaded_with(loaded):  # noqa: ANN001, ANN202
        def recording() -> None:
            seen.append(("loaded", gc.isenabled()))
            loaded()

        return recording

    opened = picker.open_picker
    monkeypatch.setattr(picker, "open_picker", lambda query, loaded: opened(query, loaded=loaded_with(loaded)))
    monkeypatch.setattr(tui, "run", lambda ddir, query: seen.append((f"run {query}", gc.isenabled())))
    monkeypatch.setattr(sys, "stdin", Terminal())
    monkeypatch.setattr(sys, "stdout", Terminal())
    with pytest.raises(SystemExit) as exc:
        fast_main(["ui", "迁移"])
    assert exc.value.code == 0 and seen == [("loaded", False), ("run 迁移", True)] and gc.isenabled()
