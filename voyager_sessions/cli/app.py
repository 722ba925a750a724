"""The ``voyager`` command line: a thin click layer over ingest, search and store.

Each command parses flags, calls one library function and renders its result as
text (for people) or JSON (for scripts). stdout carries only results; progress,
warnings and errors go to stderr. Exit codes: 0 found, 1 nothing found, 2 usage or
query error, 3 busy (another scan holds the writer), 4 internal error. Heavy modules are
imported inside commands so ``voyager --help`` starts fast.

The console script enters through :mod:`voyager_sessions.cli.main`, which runs a plain
``voyager search`` without importing this module; everything else comes here. The
reading commands (``search``, ``list``, ``show``, ``stats``) are built from their option
tables in :mod:`voyager_sessions.cli.options` and run the functions of
:mod:`voyager_sessions.cli.reading` and :mod:`voyager_sessions.cli.reading`, which need no click.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import click

from voyager_sessions.cli import commands, reading
from voyager_sessions.cli.argv import Option
from voyager_sessions.cli.common import (
    EXIT_NONE,
    UserError,
    VoyagerError,
    data_dir,
    emit_json,
    failure,
    private_umask,
    run_meaning,
    run_scan,
    use_color,
)
from voyager_sessions.core.filters import SESSION_FILTERS
from voyager_sessions.core.paths import DataDir
from voyager_sessions.core.plural import count
from voyager_sessions.core.textsafe import printable

if TYPE_CHECKING:
    from voyager_sessions.core.reports import Health, ProviderReport

# Subcommands that live in their own modules, imported only when invoked.
LAZY_COMMANDS: dict[str, str] = {
    "checkpoint": "voyager_sessions.cli.checkpoint:checkpoint",
    "export": "voyager_sessions.cli.handover:export",
    "resume": "voyager_sessions.cli.handover:resume",
    "serve": "voyager_sessions.cli.serve:serve",
    "mcp": "voyager_sessions.cli.serve:mcp",
    "web": "voyager_sessions.cli.web:web",
    "ui": "voyager_sessions.cli.ui:ui",
}


class Interval(click.FloatRange):
    """Seconds between rescans: at least 0.2, at most a day, and a number (click's ranges let ``nan`` through,
    and a wait of ``inf`` or past the platform's ``time_t`` fails the waiting thread)."""

    name = "seconds"

    def __init__(self) -> None:
        super().__init__(0.2, 86_400.0)

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> float:
        seconds = float(super().convert(value, param, ctx))
        if seconds != seconds:  # nan
            self.fail(f"{value!r} is not a number of seconds", param, ctx)
        return seconds


class LazyGroup(click.Group):
    """The root group: lazy subcommands, and one-line errors with the documented exit codes."""

    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        windows_expand_args: bool = True,
        **extra: Any,
    ) -> NoReturn:
        """Always standalone (``standalone_mode`` is click's, ignored): the process exits with the documented code."""
        try:
            rv = super().main(
                args=args,
                prog_name=prog_name or "voyager",
                complete_var=complete_var,
                standalone_mode=False,
                windows_expand_args=windows_expand_args,
                **extra,
            )
        except click.exceptions.Exit as exc:
            sys.exit(exc.exit_code)
        except click.exceptions.Abort:
            click.echo("voyager: interrupted", err=True)
            sys.exit(130)
        except click.ClickException as exc:
            hint = ""
            if isinstance(exc, click.UsageError):
                cmd = exc.ctx.command_path if exc.ctx else "voyager"
                hint = f" (see `{cmd} --help`)"
            click.echo(f"voyager: {exc.format_message()}{hint}", err=True)
            sys.exit(exc.exit_code)
        except (VoyagerError, KeyboardInterrupt) as exc:
            line, code = failure(exc)
            click.echo(line, err=True)
            sys.exit(code)
        except BrokenPipeError:
            # `voyager search … | head` closed the pipe: not an error.
            os._exit(0)
        except Exception as exc:
            if os.environ.get("VOYAGER_DEBUG"):
                raise
            line, code = failure(exc)
            click.echo(line, err=True)
            sys.exit(code)
        sys.exit(rv if isinstance(rv, int) else 0)

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(super().list_commands(ctx)) | set(LAZY_COMMANDS))

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name in LAZY_COMMANDS:
            import importlib

            mod, _, attr = LAZY_COMMANDS[name].partition(":")
            try:
                return getattr(importlib.import_module(mod), attr)
            except ImportError:
                return None
        return super().get_command(ctx, name)


def exit_as_command_error(exc: BaseException) -> NoReturn:
    """Report ``exc``, raised by ``voyager search`` run without click (see voyager_sessions.cli.main), as the CLI reports it.

    It is raised again from inside a command run by a root group like ``cli``, so click and
    ``LazyGroup.main`` handle it exactly as if the click command had raised it.
    """

    def fail() -> None:
        raise exc

    group = LazyGroup(name="voyager", commands=[click.Command("search", callback=fail)])
    group.main(args=["search"], prog_name="voyager")
    raise AssertionError("LazyGroup.main always exits")  # pragma: no cover


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(package_name="voyager-sessions", prog_name="voyager")
def cli() -> None:
    """Find anything you or your coding agents ever said, ran or saw.

    \b
    Quick start:
      voyager ui                 find a session as you type, read it, resume it (Enter)
      voyager web                the same in your browser (pip install 'voyager-sessions[web]')
      voyager search "数据库"     search from the shell (add --json for scripts)
      voyager scan               index every coding agent's history (see voyager doctor)
      voyager demo               try it on a bundled sample corpus
      voyager serve --detach     keep the index open: every search answers faster

    Data lives in $VOYAGER_HOME (default ~/.local/share/voyager), private to you.
    """
    private_umask()


# -- scan ---------------------------------------------------------------------------


@cli.command()
@click.option(
    "--provider", "providers", multiple=True, help="Only this agent (repeatable; `voyager doctor` names them all)."
)
@click.option("--keep-missing", is_flag=True, help="Keep sessions whose source files are gone.")
@click.option(
    "--rebuild", is_flag=True, help="Build the index anew from every source (a damaged index is rebuilt anyway)."
)
@click.option("--wait", type=float, default=0.0, show_default=True, help="Seconds to wait for another scan to finish.")
@click.option("--json", "as_json", is_flag=True, help="Print the scan summary as JSON on stdout.")
@click.option("-q", "--quiet", is_flag=True, help="No progress or skip messages on stderr.")
@click.option(
    "--workers",
    type=click.IntRange(1, 256),
    default=None,
    help="Processes that read and prepare sources (default: one per core; 1 reads everything in this one).",
)
@click.option(
    "--meaning",
    is_flag=True,
    help="Then compute the meaning vectors still missing, and return when every session has one "
    "(needs voyager-sessions[semantic]).",
)
def scan(
    providers: tuple[str, ...],
    keep_missing: bool,
    rebuild: bool,
    wait: float,
    as_json: bool,
    quiet: bool,
    workers: int | None,
    meaning: bool,
) -> None:
    """Index every agent's session history (only what changed since the last scan).

    Sources that disappeared leave the index too, unless --keep-missing.
    """
    from voyager_sessions.api import provider_names

    known = provider_names()  # read now: a row registered after start-up is a provider too
    for p in providers:
        if p not in known:
            raise UserError(f"unknown provider '{p}': use one of {', '.join(known)}")
    if meaning:
        from voyager_sessions.api.meaning import require_model

        require_model()
    summary = run_scan(
        quiet=quiet,
        providers=list(providers) or None,
        keep_missing=keep_missing,
        wait=wait,
        rebuild=rebuild,
        workers=workers,
    )
    if as_json:
        emit_json(summary)
    elif summary.touched == 0 and not summary.failed:
        click.echo(
            f"Nothing changed: {count(summary.unchanged, 'source')} up to date, {count(summary.sessions, 'session')} indexed "
            f"({summary.seconds:.2f}s)."
        )
    else:
        click.echo(
            f"Scanned {count(summary.sources, 'source')} in {summary.seconds:.2f}s: {summary.new} new, {summary.grown} grown, "
            f"{summary.changed} changed, {summary.unchanged} unchanged, {summary.removed} removed"
            f"{f', {summary.failed} failed' if summary.failed else ''}; "
            f"{count(summary.events_added, 'event')} added, {summary.events_removed} removed; {count(summary.sessions, 'session')} indexed."
        )
    if meaning:
        embedded = run_meaning(quiet=quiet or as_json)
        if not as_json:
            click.echo(
                f"Meaning: {count(embedded.embedded, 'session')} embedded in {embedded.seconds:.2f}s; "
                f"{embedded.ready} of {count(embedded.total, 'session')} searchable by meaning."
            )
    if summary.skipped and not quiet:
        click.echo(f"{count(len(summary.skipped), 'piece')} skipped (named above on stderr).", err=True)
    if summary.sources == 0 and summary.sessions == 0 and not quiet:
        click.echo(
            "No agent history found. Try `voyager demo`, or see `voyager doctor` for where Voyager looked.", err=True
        )
    read_ok = summary.new + summary.grown + summary.changed + summary.unchanged
    if summary.failed > summary.retrying and not read_ok:
        # Every source found failed: nothing is searchable. Partial success is success (exit 0), and so
        # is a source that will be retried (a database locked by its agent): the next refresh reads it.
        click.echo(f"voyager: none of the {count(summary.failed, 'source')} found could be read (see above)", err=True)
        sys.exit(EXIT_NONE)


# -- search -------------------------------------------------------------------------


def _click_option(opt: Option) -> click.Option:
    """The click declaration of one row of an option table (``SEARCH_OPTIONS``, ``LIST_OPTIONS`` …)."""
    attrs: dict = {"help": opt.help, "multiple": opt.multiple}
    if opt.kind == "flag":
        attrs["is_flag"] = True
    elif opt.kind == "int":
        attrs["type"] = click.IntRange(*opt.bounds)
    elif opt.kind == "choice":
        attrs["type"] = click.Choice(opt.choices)
    if opt.default is not None:
        attrs["default"] = opt.default
    if opt.show_default:
        attrs["show_default"] = True
    return click.Option([*opt.decls, opt.dest], **attrs)


def _click_params(name: str) -> list[click.Parameter]:
    """The click parameters of reading command ``name``, from its tables (see ``commands.tables``)."""
    options, positional = commands.tables(name)
    arguments = [] if positional is None else [click.Argument([positional.dest], nargs=positional.nargs)]
    return [*arguments, *map(_click_option, options)]


SEARCH_HELP = f"""Search everything your agents said, ran or saw.

\b
Words must all match; "quoted phrase"; -word excludes; a OR b; (groups);
prefix*; filters provider: kind: {" ".join(f.name + ":" for f in SESSION_FILTERS)} session: since: until:
Examples:
  voyager search 数据库 --provider codex
  voyager search '"connection refused"' kind:tool since:7d
  voyager search ERR_CONN_REFUSED_42 --json | jq '.hits[0].resume'
"""


@cli.command(params=_click_params("search"), help=SEARCH_HELP)
def search(**params: object) -> None:
    """``voyager search`` (its help: ``SEARCH_HELP``, which names the session-attribute filters of the table)."""
    reading.search_command(**params)


# -- list and show ----------------------------------------------------------------------


@cli.command("list", params=_click_params("list"))
def list_cmd(**params: object) -> None:
    """Sessions, newest first."""
    reading.list_command(**params)


@cli.command(params=_click_params("show"))
def show(**params: object) -> None:
    """A session's timeline (id, native id or unambiguous prefix)."""
    reading.show_command(**params)


# -- stats, demo ------------------------------------------------------------------------


@cli.command(params=_click_params("stats"))
def stats(**params: object) -> None:
    """Sessions and events per agent, index size, the last scan that changed something."""
    reading.stats_command(**params)


@cli.command()
@click.option("--json", "as_json", is_flag=True)
def doctor(as_json: bool) -> None:
    """Every agent: where Voyager looked, what it found, what it could not use and why; index health."""
    from voyager_sessions import api

    doc = api.doctor(DataDir(data_dir()), os.environ)
    reports, health = doc.providers, doc.health
    if as_json:
        emit_json(doc)
        return
    for line in doctor_summary(reports, health):
        click.echo(line)
    click.echo("")
    for r in reports:
        seen = f"observed: {', '.join(r.versions)}" if r.evidence == "observed" else "documented, not yet observed"
        if r.versions_seen:
            seen += f"; your files: {printable(', '.join(r.versions_seen))}"
        click.echo(f"{r.label} ({r.provider}) - {seen}")
        for root in r.roots:
            click.echo(f"  looked in  {root}{'' if root in r.roots_found else '  (not there)'}")
        shapes = ", ".join(f"{k}: {v}" for k, v in r.shapes.items())
        click.echo(
            f"  found      {count(r.sources, 'source')}, {r.bytes / 1e6:.1f} MB{f' ({shapes})' if shapes else ''}"
        )
        click.echo(f"  indexed    {count(r.indexed_sessions, 'session')}, {count(r.indexed_events, 'event')}")
        for p in r.problems + r.failed_sources:
            click.echo(f"  cannot use {p}")
        if r.drift:
            click.echo(
                f"  note       {printable(r.drift)}: a newer release than Voyager was tested on; if a search misses "
                "something it wrote, its format may have changed"
            )
        for p in r.notes:
            click.echo(f"  note       {p}")
    click.echo("Voyager")
    for k, v in health.lines():
        click.echo(f"  {k:<15} {v}")


def doctor_summary(reports: list[ProviderReport], health: Health) -> list[str]:
    """``voyager doctor``'s first lines: which agents left sessions here and how many are indexed, what Voyager
    cannot use, the index's health, and where the rest is (every agent below, one block each)."""
    found = sorted(
        (r for r in reports if r.sources or r.indexed_sessions), key=lambda r: (-r.indexed_sessions, r.label)
    )
    sessions = sum(r.indexed_sessions for r in reports)
    events = sum(r.indexed_events for r in reports)
    indexed = f"{count(sessions, 'session')}, {count(events, 'event')} indexed" if sessions else "none indexed yet"
    out = [
        f"Summary: {len(found)} of the {len(reports)} agents Voyager reads left sessions on this machine; {indexed}."
    ]

    def listed(label: str, items: list[str]) -> None:
        """``items`` after ``label``, as many a line as 100 columns hold (an item is never split)."""
        line = f"  {label:<10}"
        for n, item in enumerate(items):
            piece = f" {item}{',' if n < len(items) - 1 else ''}"
            if len(line) + len(piece) > 100 and line.strip() != label:
                out.append(line)
                line = " " * 12
            line += piece
        out.append(line)

    if found:
        listed("agents", [f"{r.label} {r.indexed_sessions}" if sessions else r.label for r in found])
    troubled = [r for r in reports if r.problems or r.failed_sources]
    if troubled:
        listed("cannot use", [f"{r.label} ({len(r.problems) + len(r.failed_sources)})" for r in troubled])
    newer = [r for r in reports if r.drift]
    if newer:
        listed("newer", [f"{r.label} ({printable(r.drift)})" for r in newer])
    state = f"index {printable(health.index)}, state {printable(health.state_db)}"
    out.append(f"  health     {state}; data in {printable(health.data_dir)}")
    if found and not sessions:
        out.append("  next       `voyager scan` (or `voyager ui`) indexes them")
    out.append("Below: each agent, where Voyager looked, what it found and could not use; then Voyager's health.")
    return out


@cli.command("import")
@click.argument("path", required=False)
@click.option("--list", "as_list", is_flag=True, help="List the recorded exports and the imports folder's files.")
@click.option("--forget", is_flag=True, help="Stop reading PATH (the next scan drops its conversations).")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON on stdout.")
def import_cmd(path: str | None, as_list: bool, forget: bool, as_json: bool) -> None:
    """Read a ChatGPT, Claude.ai or Gemini Apps (Takeout) export (conversations.json, MyActivity.html, their folder, or the .zip) in every scan.

    \b
    The path is recorded, not copied: run `voyager scan` to index it, and again after you
    download a newer export to the same place. Exports left in $VOYAGER_IMPORTS (default
    <data dir>/imports) are read without this command. Web chats have no resume command.
    """
    from voyager_sessions import api

    ddir = DataDir(data_dir())
    if as_list or path is None:
        if path is not None or forget:
            raise UserError("--list takes no PATH")
        listed = api.imports(ddir, os.environ)
        if as_json:
            emit_json(listed)
            return
        rows = listed.imports
        if not rows:
            click.echo("No exports recorded; none in the imports folder. `voyager import PATH` records one.", err=True)
            sys.exit(EXIT_NONE)
        for row in rows:
            state = row.kind or ("missing" if not row.present else "not an export")
            how = "recorded" if row.recorded else "imports folder"
            click.echo(f"{printable(row.path)}  {state}  ({how})")
        return
    result = api.import_export(ddir, path, forget=forget)
    if as_json:
        emit_json(result)
    elif forget:
        click.echo(f"Forgot {printable(result.path)}: the next `voyager scan` drops its conversations.")
    else:
        label = {"chatgpt": "ChatGPT", "claude-ai": "Claude.ai", "gemini-apps": "Gemini Apps (Takeout)"}[
            result.kind or ""
        ]
        again = " (already recorded)" if result.already else ""
        click.echo(f"Recorded {printable(result.path)}, a {label} export{again}: `voyager scan` indexes it.")


@cli.command()
@click.option("--interval", type=Interval(), default=2.0, show_default=True, help="Seconds between rescans.")
@click.option("-q", "--quiet", is_flag=True)
@click.option("--poll", is_flag=True, help="Stat every source each time instead of watching the file system.")
def watch(interval: float, quiet: bool, poll: bool) -> None:
    """Keep the index fresh: rescan incrementally every --interval seconds until interrupted."""
    import os
    import time

    from voyager_sessions.api.freshness import ChangeWatcher
    from voyager_sessions.api.freshness import keep_fresh

    from voyager_sessions.core.errors import Busy

    said_busy = False

    from voyager_sessions.api.meaning import background

    # Meaning vectors for what the rescans bring, in the background (nothing without the model).
    meaning = background(DataDir(data_dir()), log=lambda line: click.echo(f"voyager: {printable(line)}", err=True))

    def on_scan(summary) -> None:
        nonlocal said_busy
        if summary.touched:
            meaning.wake()
        if not quiet:
            said_busy = False  # a scan ran: the next collision is news again
        if summary.touched and not quiet:
            click.echo(
                f"{time.strftime('%H:%M:%S')} +{count(summary.events_added, 'event')} "
                f"({summary.new} new, {summary.grown} grown, {summary.changed} changed, "
                f"{summary.removed} removed {'source' if summary.removed == 1 else 'sources'})",
                err=True,
            )

    def on_error(exc: VoyagerError, delay: float) -> None:
        nonlocal said_busy
        if isinstance(exc, Busy):
            # Another scan (``serve``, ``scan``) is doing the work: no failure. Said once, not at every
            # collision (once until a scan of this watcher runs again); with -q not at all.
            if not said_busy and not quiet:
                said_busy = True
                click.echo(f"voyager: {printable(str(exc))}; retrying every {delay:g}s (said once)", err=True)
            return
        # Always said, even with -q: a watcher that silently stopped working would be worse.
        click.echo(f"voyager: {printable(str(exc))}; retrying in {delay:g}s", err=True)

    # The file-system watcher tells each rescan which sources changed; without it (or when it
    # cannot say), a rescan stats every source, as it always did.
    watcher = ChangeWatcher(os.environ, enabled=not poll).start()

    def rescan():
        changes = watcher.take()
        try:
            return run_scan(quiet=True, wait=interval, changes=changes)
        except BaseException:
            watcher.give_back(changes)
            raise

    if not quiet:
        click.echo(f"watching agent history every {interval:g}s (Ctrl-C to stop; {watcher.status})", err=True)
    meaning.start()
    try:
        keep_fresh(rescan, interval=interval, on_scan=on_scan, on_error=on_error)
    finally:
        meaning.stop()
        watcher.stop()


@cli.command()
@click.option("--keep", is_flag=True, help="Keep the temporary data dir and print its path.")
def demo(keep: bool) -> None:
    """Index the bundled sample corpus into a temporary data dir and run a few searches."""
    import shlex
    import shutil
    import tempfile

    from voyager_sessions import api
    from voyager_sessions.demo import CORPUS

    tmp = Path(tempfile.mkdtemp(prefix="voyager-demo-"))
    env = {
        "HOME": str(tmp / "home"),
        "VOYAGER_CLAUDE_HOME": str(CORPUS / "claude"),
        "VOYAGER_CODEX_HOME": str(CORPUS / "codex"),
    }
    ddir = tmp / "data"
    try:
        summary = run_scan(quiet=True, env=env, ddir=ddir, providers=["claude", "codex"])
        click.echo(
            f"Indexed the demo corpus: {count(summary.sessions, 'session')}, {count(summary.events_added, 'event')} "
            f"in {summary.seconds:.2f}s.\n"
        )
        color = use_color("auto")
        from voyager_sessions.cli.render import render_hit

        with api.reader(ddir) as reader:
            backend = api.LentBackend(reader)
            for q, flags, opts in DEMO_QUERIES:
                res = api.search(
                    api.SearchRequest(query=q, limit=3, refresh=False, **opts), data_dir=ddir, backend=backend
                )
                shown = f"$ voyager search {shlex.quote(q)} {flags}".rstrip()
                click.echo(click.style(shown, bold=True) if color else shown, color=color)
                for h in res.hits:
                    click.echo(render_hit(h, color=color, by_session=False), color=color)
                shown_of = f"{len(res.hits)} of " if len(res.hits) < res.total else ""  # the demo shows 3 at most
                click.echo(f"  ({shown_of}{res.total} {'hit' if res.total == 1 else 'hits'})\n")
        _demo_described(ddir, color)
        click.echo(
            "Now open your own history: `voyager ui` (it indexes what your agents wrote, then finds as you type;"
            ' `voyager search "…"` from the shell).'
        )
        if keep:
            click.echo(f"Demo data kept in {tmp} (VOYAGER_HOME={ddir})", err=True)
    finally:
        if not keep:
            shutil.rmtree(tmp, ignore_errors=True)


#: A session described in other words than its own (it says "export", "S3", "bucket", "timing out").
DEMO_DESCRIBED = "the data dump that broke when we relocated our cloud storage"


def _demo_described(ddir: Path, color: bool) -> None:
    """The described session found by meaning (`voyager search -m`), or the one line that says how to get it."""
    from voyager_sessions import api
    from voyager_sessions.cli.render import render_hit
    from voyager_sessions.api.meaning import INSTALL_HINT, embed_missing

    shown = f"$ voyager search -m {shlex_quote(DEMO_DESCRIBED)} --sessions"
    click.echo(click.style(shown, bold=True) if color else shown, color=color)
    if not api.meaning_available():
        click.echo(f"  (a session described in other words: {INSTALL_HINT})\n")
        return
    embed_missing(ddir)
    res = api.search(
        api.SearchRequest(query=DEMO_DESCRIBED, limit=1, refresh=False, sessions=True, meaning=True), data_dir=ddir
    )
    for h in res.hits:
        click.echo(render_hit(h, color=color, by_session=True), color=color)
    click.echo("  (found by what it is about, in any language: see `voyager search --help`)\n")


def shlex_quote(text: str) -> str:
    import shlex

    return shlex.quote(text)


#: (query, extra CLI flags as a user would type them, the same as SearchRequest fields)
DEMO_QUERIES: list[tuple[str, str, dict]] = [
    ("数据库", "", {}),
    ("データベース", "", {}),
    ("데이터베이스", "", {}),
    ("ERR_CONN_REFUSED_42", "", {}),
    ('"NoneType" subscriptable', "--kind tool", {"kinds": ["tool"]}),
]


# -- entry point --------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> None:
    """The click CLI on ``argv`` (default ``sys.argv[1:]``): what :func:`voyager_sessions.cli.main.main` hands over."""
    cli.main(args=argv, prog_name="voyager")
