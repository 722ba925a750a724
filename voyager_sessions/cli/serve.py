"""``voyager serve`` (with ``status`` and ``stop``) and ``voyager mcp``: the click commands of the service.

Loaded only when one of them runs (see ``LAZY_COMMANDS`` in :mod:`voyager_sessions.cli.app`).
The work is in :mod:`voyager_sessions.serve`.
"""

from __future__ import annotations

import os
import sys
import time

import click

from voyager_sessions.cli.app import Interval
from voyager_sessions.cli.common import EXIT_BUSY, EXIT_NONE, UserError, data_dir, emit_json
from voyager_sessions.core.paths import DataDir


@click.group(invoke_without_command=True)
@click.option(
    "--interval",
    type=Interval(),
    default=5.0,
    show_default=True,
    help="Seconds between background rescans (a search still refreshes first).",
)
@click.option("--detach", is_flag=True, help="Run in the background; its log goes to serve.log in the data dir.")
@click.option("-q", "--quiet", is_flag=True, help="Log only errors.")
@click.option(
    "--web",
    is_flag=True,
    help="Serve `voyager web`'s page too, on loopback (the URL with its token is printed); in the foreground only.",
)
@click.option(
    "--web-port",
    type=click.IntRange(0, 65535),
    default=0,
    show_default="a free port",
    help="The page's port (with --web).",
)
@click.pass_context
def serve(ctx: click.Context, interval: float, detach: bool, quiet: bool, web: bool, web_port: int) -> None:
    """Keep the index open and fresh in one resident process for this data dir.

    While it runs, `voyager search`, `list`, `show` and `stats` (and `voyager mcp`) answer
    through it: the same output, without starting the search engine each time. It listens
    on a Unix socket in the data dir, private to you; it stops on SIGTERM or Ctrl-C.

    \b
      voyager serve              run in the foreground (for systemd, launchd, a terminal)
      voyager serve --detach     run in the background
      voyager serve --web        run in the foreground and serve the web page too
      voyager serve status       is one running, and what has it done
      voyager serve stop         stop it
    """
    if ctx.invoked_subcommand is not None:
        return
    from voyager_sessions.serve import control

    ddir = DataDir(data_dir())
    if web:
        if detach:
            raise UserError("--web runs in the foreground (its URL holds a token only this terminal should see)")
        from voyager_sessions.cli.web import announce, require_stack

        require_stack()
        control.run_foreground(
            ddir, interval=interval, verbose=not quiet, web_port=web_port, on_web=lambda url: announce(url, ddir.root)
        )
        return
    if detach:
        pid, log = control.detach(ddir, interval=interval, verbose=not quiet)
        click.echo(f"voyager: serving {ddir.root} (pid {pid}; log: {log})", err=True)
        return
    control.run_foreground(ddir, interval=interval, verbose=not quiet)


@serve.command("status")
@click.option("--json", "as_json", is_flag=True)
def serve_status(as_json: bool) -> None:
    """Whether a server runs for this data dir, and what it has done. Exit 1 when none runs."""
    import os

    from voyager_sessions.core.model import SCHEMA_VERSION
    from voyager_sessions.serve import control
    from voyager_sessions.core.textsafe import printable

    ddir = DataDir(data_dir())
    doc = control.status(ddir)
    if doc is None:
        pid = control.holder(ddir)
        if as_json:
            emit_json(
                {
                    "schema_version": SCHEMA_VERSION,
                    "running": False,
                    "data_dir": str(ddir.root),
                    "pid": pid if pid and pid > 0 else None,
                }
            )
        elif pid is not None:
            click.echo(
                f"voyager: a server (pid {pid if pid > 0 else 'unknown'}) holds {ddir.root} but does not answer",
                err=True,
            )
        else:
            stale = (
                " (a socket left by a stopped server is replaced by the next one)"
                if os.path.lexists(ddir.socket)
                else ""
            )
            click.echo(f"voyager: no server is running on {ddir.root}{stale}", err=True)
        sys.exit(EXIT_BUSY if pid is not None else EXIT_NONE)
    if as_json:
        emit_json({"schema_version": SCHEMA_VERSION, "running": True, **doc})
        return
    click.echo(
        f"serving {doc['data_dir']} (pid {doc['pid']}, up {_duration(doc['uptime_s'])}, "
        f"voyager {doc['version']}, protocol {doc['protocol']})"
    )
    click.echo(f"  socket     {doc['socket']}")
    click.echo(
        f"  requests   {doc['requests']}: {doc['answered']} answered, {doc['fallbacks']} left to their "
        f"client, {doc['errors']} refused"
    )
    last = doc.get("last_scan")
    scans = f"{doc['scans']} (every {doc['interval_s']:g}s and before each search)"
    if last:
        scans += f"; last at {last['started']}, {last['seconds']:.3f}s"
        if last.get("error"):
            scans += f", failed: {last['error']}"
    click.echo(f"  scans      {scans}")
    if "watcher" in doc:
        r = doc.get("refreshes") or {}
        click.echo(
            f"  watcher    {printable(str(doc['watcher']))} (refreshes: {r.get('watched', 0)} told what changed, "
            f"{r.get('quiet', 0)} of them with nothing to do; {r.get('full', 0)} full stat passes, "
            f"{r.get('late', 0)} after a late fence"
            + (f"; the last one: {printable(str(doc['last_full_pass']))}" if doc.get("last_full_pass") else "")
            + ")"
        )
    pages = [p for p in doc.get("web_pages") or [] if isinstance(p, int)]
    if pages:
        click.echo(f"  web pages  {', '.join(f'127.0.0.1:{p}' for p in pages)} (for `voyager web`, while it runs)")
    if doc.get("stale"):
        click.echo(f"  note       {doc['stale']}")
    if doc.get("env_differs"):
        click.echo(
            f"  note       this shell's {', '.join(doc['env_differs'])} differ(s) from the server's: "
            "commands run from here do not use it"
        )


def _duration(seconds: float) -> str:
    s = int(seconds)
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m {s % 60}s"
    return f"{s // 3600}h {s % 3600 // 60}m"


@serve.command("stop")
def serve_stop() -> None:
    """Stop the server of this data dir (exit 1 when none runs)."""
    from voyager_sessions.serve import control

    ddir = DataDir(data_dir())
    t0 = time.monotonic()
    pid = control.stop(ddir)
    if pid is None:
        click.echo(f"voyager: no server is running on {ddir.root}", err=True)
        sys.exit(EXIT_NONE)
    click.echo(f"voyager: stopped the server (pid {pid}) in {time.monotonic() - t0:.2f}s", err=True)


@click.group(invoke_without_command=True)
@click.pass_context
def mcp(ctx: click.Context) -> None:
    """An MCP server on stdio: lets agents search their own past sessions.

    Tools: search (the query language and its filters), show (a session's timeline, or
    the events around a hit), list_sessions, and checkpoint_save, _status, _list,
    _snapshots, _restore, _undo, _handoff (the calling session's task state). Uses
    `voyager serve` when one runs.
    Register it with `voyager mcp install AGENT` (claude, codex, gemini, qwen, opencode,
    cursor, copilot, windsurf).
    """
    if ctx.invoked_subcommand is None:
        from voyager_sessions.mcp.server import run_stdio

        run_stdio()


@mcp.command("install")
@click.argument("agent_name", metavar="AGENT")
@click.option("--print", "print_only", is_flag=True, help="Show what would be written; change nothing.")
def mcp_install(agent_name: str, print_only: bool) -> None:
    """Register `voyager mcp` in AGENT's MCP config (a backup is left beside it)."""
    from voyager_sessions.mcp import install as inst

    a = inst.agent(agent_name)
    plan = inst.plan_install(agent_name, os.environ)
    if print_only:
        click.echo(f"# {a.title}: {plan.path}")
        click.echo(plan.entry_text, nl=not plan.entry_text.endswith("\n"))
        if not plan.changes:
            click.echo("voyager: already registered exactly so; nothing would change", err=True)
        return
    backup = inst.apply(plan)
    if backup is None:
        click.echo(f"voyager: {a.title} already runs voyager mcp ({plan.path}); nothing changed", err=True)
    elif plan.old is None:
        click.echo(f"voyager: registered voyager mcp for {a.title} in {plan.path}", err=True)
    else:
        click.echo(f"voyager: registered voyager mcp for {a.title} in {plan.path} (previous file: {backup})", err=True)


@mcp.command("uninstall")
@click.argument("agent_name", metavar="AGENT")
def mcp_uninstall(agent_name: str) -> None:
    """Remove `voyager mcp` from AGENT's MCP config (a backup is left beside it)."""
    from voyager_sessions.mcp import install as inst

    a = inst.agent(agent_name)
    plan = inst.plan_uninstall(agent_name, os.environ)
    backup = inst.apply(plan)
    if backup is None:
        click.echo(f"voyager: {a.title} has no voyager server in {plan.path}; nothing changed", err=True)
        sys.exit(EXIT_NONE)
    click.echo(f"voyager: removed voyager mcp from {plan.path} (previous file: {backup})", err=True)
