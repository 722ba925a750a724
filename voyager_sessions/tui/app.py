"""``voyager ui``: find a past session as you type, read it, and go back to work in it.

A Textual app on :class:`~voyager_sessions.tui.backend.Backend`: a search box (the query
language of ``voyager search``), the matching sessions beside a preview of the selected one
around its best hit. Searches run in a worker thread, debounced; a keystroke supersedes the
search in flight (its answer is dropped), so typing never waits. ``Enter`` leaves the UI and
hands the terminal to the session's agent (see :func:`voyager_sessions.tui.run`).

Every string from a session is drawn by :mod:`voyager_sessions.tui.view` as plain text.
"""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path

from rich.text import Text
from textual import on, work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import Footer, Input, OptionList, Static
from textual.widgets.option_list import Option
from textual.worker import get_current_worker

from voyager_sessions.core.errors import VoyagerError
from voyager_sessions.core.textsafe import printable
from voyager_sessions.tui import view
from voyager_sessions.tui.backend import Answer, Backend, SessionHit

#: Seconds between a keystroke and the search it starts (another keystroke restarts the wait).
DEBOUNCE = 0.12

#: Seconds between refreshes that pick up sessions written while the UI is open.
LIVE_EVERY = 3.0

#: The times ``t`` offers: a ``since:`` value and how the status line says it.
TIMES: list[tuple[str, str]] = [("1d", "today"), ("7d", "this week"), ("30d", "this month"), ("365d", "this year")]

PLACEHOLDER = 'search your sessions: words, "a phrase", provider:codex, kind:user, since:7d …'

HELP = """\
Type to search (the query language of `voyager search`; empty: recent sessions).

  ↑ ↓  ctrl+p ctrl+n   move in the results (j k when the results have focus)
  Enter                resume the session in its agent, in its directory
  Tab / shift+Tab      move between the search box, the results and the preview
  /                    back to the search box
  n  N                 next / previous match inside the selected session
  f                    the whole session, full screen (Esc: back)
  s                    sort: relevance ↔ newest first
  a  p  t              only one agent, one project, one time span (a list each; Esc: no filter)
  c                    copy the resume command (OSC 52; also shown)
  e  h                 export the session as Markdown / HTML into the current directory
  o                    export HTML and open it in the browser
  ?                    this help
  Esc  ctrl+q          quit (Esc first leaves a full-screen session)
"""


def probe(event: str, **facts: object) -> None:
    """Append a timing event to ``$VOYAGER_UI_PROBE`` when set (the bench measures the picker from outside)."""
    path = os.environ.get("VOYAGER_UI_PROBE")
    if path:
        with open(path, "a", encoding="utf-8") as f:
            f.write(json.dumps({"event": event, "t": time.time(), **facts}, ensure_ascii=False) + "\n")


class HelpScreen(ModalScreen[None]):
    """Every key, one screen."""

    BINDINGS = [Binding("escape,q,question_mark", "dismiss", "close")]
    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > Static { width: auto; max-width: 90%; padding: 1 2; border: round $accent; background: $surface; }
    """

    def compose(self) -> ComposeResult:
        yield Static(Text(HELP))


class PickScreen(ModalScreen[str | None]):
    """Pick one value to narrow the search by (an agent, a project, a time), or none of them (Esc)."""

    BINDINGS = [Binding("escape", "all", "no filter")]
    DEFAULT_CSS = """
    PickScreen { align: center middle; }
    PickScreen > OptionList { width: auto; min-width: 40; max-width: 90%; max-height: 80%; border: round $accent; }
    """

    def __init__(self, everything: str, choices: list[tuple[str, str]]) -> None:
        """``everything``: the first line (no filter); ``choices``: (label, value), labels already printable."""
        super().__init__()
        self.everything = everything
        self.choices = choices

    def compose(self) -> ComposeResult:
        options = [Option(Text(self.everything), id="")]
        options += [Option(Text(label), id=f"v{i}") for i, (label, _) in enumerate(self.choices)]
        yield OptionList(*options)

    @on(OptionList.OptionSelected)
    def chosen(self, event: OptionList.OptionSelected) -> None:
        key = event.option.id or ""
        self.dismiss(self.choices[int(key[1:])][1] if key else None)

    def action_all(self) -> None:
        self.dismiss(None)


class SessionScreen(Screen[None]):
    """One whole session, full screen, with the query's matches marked and ``n``/``N`` between them."""

    BINDINGS = [
        Binding("escape,q", "app.pop_screen", "back"),
        Binding("n", "jump(1)", "next match"),
        Binding("N", "jump(-1)", "previous match"),
        Binding("j", "scroll(1)", show=False),
        Binding("k", "scroll(-1)", show=False),
    ]

    def __init__(self, backend: Backend, row: SessionHit, query: str, pattern: re.Pattern[str] | None) -> None:
        super().__init__()
        self.backend, self.row, self.words, self.pattern = backend, row, query, pattern
        self.matches: list[int] = []
        self.at = -1

    def compose(self) -> ComposeResult:
        yield VerticalScroll(Static(Text("loading …"), id="whole"), id="whole-scroll")
        yield Footer()

    def on_mount(self) -> None:
        self.load()

    @work(thread=True, exclusive=True, group="whole")
    def load(self) -> None:
        tl = self.backend.timeline(self.row.session_id)
        matches = self.backend.matches(self.row.session_id, self.words)
        self.app.call_from_thread(self.show, tl, matches)

    def show(self, tl, matches: list[int]) -> None:  # noqa: ANN001
        self.matches = matches
        body = Text("\n\n").join(
            [view.header(tl.session)]
            + [view.event_block(ev, self.pattern, fold=False, current=ev.seq == self.row.seq) for ev in tl.events]
        )
        self.events = [ev.seq for ev in tl.events]
        self.query_one("#whole", Static).update(body)
        if self.row.seq is not None and self.row.seq in matches:
            self.at = matches.index(self.row.seq)
            self.call_after_refresh(self.scroll_to_seq, self.row.seq)

    def scroll_to_seq(self, seq: int) -> None:
        """Scroll so event ``seq`` is near the top (its line is found in the rendered text)."""
        whole = self.query_one("#whole", Static)
        rendered = str(whole.render())
        m = re.search(rf"^. #{seq} ", rendered, re.M)
        if m:
            line = rendered.count("\n", 0, m.start())
            self.query_one("#whole-scroll", VerticalScroll).scroll_to(y=max(line - 1, 0), animate=False)

    def action_jump(self, step: int) -> None:
        if not self.matches:
            self.notify("no match of the query in this session", timeout=2)
            return
        self.at = (self.at + step) % len(self.matches)
        self.scroll_to_seq(self.matches[self.at])
        self.notify(f"match {self.at + 1} of {len(self.matches)}", timeout=1.5)

    def action_scroll(self, lines: int) -> None:
        self.query_one("#whole-scroll", VerticalScroll).scroll_relative(y=lines, animate=False)


class VoyagerApp(App[tuple[str, str] | None]):
    """The picker. Its return value is what to do after it closes: ``("resume", session_id)`` or None."""

    TITLE = "voyager"
    CSS = """
    #query { margin: 0 0; }
    #status { height: 1; color: $text-muted; padding: 0 1; }
    #status.error { color: $error; text-style: bold; }
    #panes { height: 1fr; }
    #results { width: 45%; min-width: 30; border: none; }
    #preview { width: 1fr; border-left: vkey $primary; padding: 0 1; }
    """
    BINDINGS = [
        Binding("ctrl+q", "quit", "quit", show=False),
        Binding("escape", "quit", "quit"),
        Binding("enter", "resume", "resume"),
        Binding("down,ctrl+n", "move(1)", show=False, priority=True),
        Binding("up,ctrl+p", "move(-1)", show=False, priority=True),
        Binding("j", "move_keys(1)", show=False),
        Binding("k", "move_keys(-1)", show=False),
        Binding("n", "jump(1)", "next match"),
        Binding("N", "jump(-1)", "prev match", show=False),
        Binding("f", "whole", "full session"),
        Binding("s", "sort", "sort"),
        Binding("a", "agent", "agent"),
        Binding("p", "project", "project", show=False),
        Binding("t", "time", "time", show=False),
        Binding("c", "copy", "copy cmd"),
        Binding("e", "export('md')", "export md", show=False),
        Binding("h", "export('html')", "export html", show=False),
        Binding("o", "open_html", "open html", show=False),
        Binding("slash", "focus_query", show=False),
        Binding("question_mark", "help", "keys"),
    ]

    def __init__(self, backend: Backend, query: str = "", *, live: bool = True) -> None:
        super().__init__()
        self.backend = backend
        self.initial = query
        self.live = live
        self.sort = "relevance"
        self.agent: str | None = None
        self.project: str | None = None
        self.since: str | None = None
        self.answer = Answer(query="")
        self.rows: list[SessionHit] = []
        self.matches: list[int] = []
        self.match_at = -1
        self.shown: str | None = None
        self._timer = None
        self.searches = 0  # answers applied (tests wait on it)

    # -- layout ----------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield Input(value=self.initial, placeholder=PLACEHOLDER, id="query")
        yield Static("", id="status")
        with Horizontal(id="panes"):
            yield OptionList(id="results")
            with VerticalScroll(id="preview"):
                yield Static(Text(""), id="preview-body")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#query", Input).focus()
        self.status("opening the index …")
        self.call_after_refresh(self.first_frame)

    def first_frame(self) -> None:
        """The screen is drawn: only now start opening the index (a worker holding the GIL would delay the frame)."""
        probe("frame")
        self.start()
        if self.live:
            self.set_interval(LIVE_EVERY, self.keep_fresh)

    @work(thread=True, exclusive=True, group="search")
    def start(self) -> None:
        """The first refresh and search, off the UI thread (the first frame never waits for the index)."""
        problem = self.backend.refresh()
        if problem:
            self.call_from_thread(self.notify, f"not refreshed: {printable(problem)}", severity="warning")
        self.run_search(self.initial)

    # -- searching -------------------------------------------------------------------------------

    @on(Input.Changed, "#query")
    def typed(self, event: Input.Changed) -> None:
        probe("typed", value=event.value)
        if self._timer is not None:
            self._timer.stop()
        self._timer = self.set_timer(DEBOUNCE, lambda: self.debounced(event.value))

    def debounced(self, query: str) -> None:
        probe("search", query=query)
        self.search(query)

    @work(thread=True, exclusive=True, group="search")
    def search(self, query: str) -> None:
        self.run_search(query)

    def run_search(self, query: str) -> None:
        """Ask the backend (in a worker) and hand the answer to the UI thread unless a newer search replaced it."""
        providers = (self.agent,) if self.agent else ()
        answer = self.backend.search(query, sort=self.sort, providers=providers, project=self.project, since=self.since)
        if get_current_worker().is_cancelled:
            return
        self.call_from_thread(self.show_answer, answer)

    def show_answer(self, answer: Answer) -> None:
        current = self.query_one("#query", Input).value
        if answer.query.strip() != current.strip() and not (answer.query == self.initial and not current):
            return  # the box changed since: the search for what it says now is on its way
        self.answer = answer
        self.searches += 1
        probe("answer", query=answer.query, rows=len(answer.rows), error=answer.error)
        results = self.query_one("#results", OptionList)
        keep = self.selected().session_id if self.selected() else None
        if answer.error:
            self.status(answer.error, error=True)
            return
        self.rows = answer.rows
        results.clear_options()
        width = max(results.size.width - 2, 20)
        results.add_options([Option(view.session_row(r, width=width), id=str(i)) for i, r in enumerate(self.rows)])
        self.status(self.describe(answer))
        if not self.rows:
            self.preview(None)
            return
        index = next((i for i, r in enumerate(self.rows) if r.session_id == keep), 0)
        results.highlighted = index
        self.preview(self.rows[index])

    def describe(self, answer: Answer) -> str:
        agent = self.narrowed()
        order = "newest first" if self.sort == "recent" else "best match first"
        building = view.indexing(answer.indexing)
        if not answer.query.strip():
            return f"{answer.total} session{'s' if answer.total != 1 else ''}, newest first{agent}{building} · ? keys"
        if not answer.rows:
            # While the index is built, no match is no answer yet: the session may be in what is still to come.
            return f"no session matches yet{agent}{building}" if building else f"no session matches{agent}"
        found = f"{answer.total} session{'s' if answer.total != 1 else ''}"
        if answer.partial:
            found += f" hold some of the {len(answer.terms)} terms (none holds all), most first"
        return f"{found} · {order}{agent}{building} · ? keys"

    def narrowed(self) -> str:
        """The filters picked from the lists, as the status line names them."""
        parts = [f"{self.agent} only"] if self.agent else []
        if self.project:
            parts.append(f"in {view.place(self.project, 40)}")
        if self.since:
            parts.append(dict(TIMES).get(self.since, f"since {self.since}"))
        return "".join(f" · {p}" for p in parts)

    def status(self, text: str, *, error: bool = False) -> None:
        line = self.query_one("#status", Static)
        line.update(Text(printable(text)))
        line.set_class(error, "error")

    def keep_fresh(self) -> None:
        self.refresh_worker()

    @work(thread=True, exclusive=True, group="live")
    def refresh_worker(self) -> None:
        try:
            before = self.backend.generation()
            self.backend.refresh()
            if self.backend.generation() == before:
                return
        except Exception:  # noqa: BLE001 - no index yet, or a scan mid-way: the next tick looks again
            return
        query = self.query_one("#query", Input).value
        self.call_from_thread(self.search, query)

    # -- the selection and its preview -----------------------------------------------------------

    def selected(self) -> SessionHit | None:
        results = self.query_one("#results", OptionList)
        i = results.highlighted
        return self.rows[i] if i is not None and 0 <= i < len(self.rows) else None

    @on(OptionList.OptionHighlighted, "#results")
    def highlighted(self, event: OptionList.OptionHighlighted) -> None:
        row = self.selected()
        if row is not None and row.session_id != self.shown:
            self.preview(row)

    @on(Input.Submitted, "#query")
    def submitted(self, event: Input.Submitted) -> None:
        self.action_resume()

    @on(OptionList.OptionSelected, "#results")
    def clicked(self, event: OptionList.OptionSelected) -> None:
        self.action_resume()

    def preview(self, row: SessionHit | None) -> None:
        self.shown = row.session_id if row else None
        if row is None:
            self.query_one("#preview-body", Static).update(Text(""))
            return
        self.load_preview(row, self.query_one("#query", Input).value)

    @work(thread=True, exclusive=True, group="preview")
    def load_preview(self, row: SessionHit, query: str) -> None:
        try:
            tl = self.backend.timeline(row.session_id, around=row.seq)
        except Exception as exc:  # noqa: BLE001 - a vanished session is a line in the preview, never a crash
            self.call_from_thread(self.query_one("#preview-body", Static).update, Text(printable(str(exc))))
            return
        matches = self.backend.matches(row.session_id, query) if query.strip() else []
        if get_current_worker().is_cancelled:
            return
        self.call_from_thread(self.show_preview, row, tl, matches)

    def show_preview(self, row: SessionHit, tl, matches: list[int]) -> None:  # noqa: ANN001
        if self.shown != row.session_id:
            return
        self.matches = matches
        self.match_at = matches.index(row.seq) if row.seq in matches else -1
        pattern = self.pattern()
        blocks = [view.header(tl.session)]
        blocks += [view.event_block(ev, pattern, current=ev.seq == row.seq) for ev in tl.events]
        if matches:
            blocks.append(
                Text(
                    f"{len(matches)} matching event{'s' if len(matches) != 1 else ''} in this session "
                    "· n / N to jump · f: the whole session",
                    style="dim italic",
                )
            )
        self.query_one("#preview-body", Static).update(Text("\n\n").join(blocks))
        self.query_one("#preview", VerticalScroll).scroll_home(animate=False)

    def pattern(self) -> re.Pattern[str] | None:
        """The query's words, for marking matches in the preview: the terms the engine matched the query by
        (quotes, groups and ``OR`` taken apart; filters are not terms)."""
        words: list[str] = []
        for term in self.answer.terms:
            words += [w for w in re.sub(r'[()"]', " ", term).split() if w not in ("OR", "NOT", "AND")]
        return view.terms_pattern([w.lstrip("-").rstrip("*") for w in words])

    # -- actions -----------------------------------------------------------------------------------

    def action_move(self, step: int) -> None:
        if isinstance(self.screen, (SessionScreen, ModalScreen)):
            return
        results = self.query_one("#results", OptionList)
        if results.option_count:
            if step > 0:
                results.action_cursor_down()
            else:
                results.action_cursor_up()

    def action_move_keys(self, step: int) -> None:
        if self.focused is not None and self.focused.id == "query":
            return
        self.action_move(step)

    def action_focus_query(self) -> None:
        self.query_one("#query", Input).focus()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Letter keys type into the search box while it has focus; they act everywhere else."""
        letters = {
            "jump",
            "whole",
            "sort",
            "agent",
            "project",
            "time",
            "copy",
            "export",
            "open_html",
            "move_keys",
            "help",
            "focus_query",
        }
        if action in letters and self.focused is not None and self.focused.id == "query":
            return False
        if self.screen is not self.screen_stack[0] and action not in ("copy", "export", "open_html", "help", "quit"):
            return False  # a pushed screen (the agent list, a whole session) keeps its own keys
        return True

    def action_jump(self, step: int) -> None:
        row = self.selected()
        if row is None or not self.matches:
            self.notify("no match of the query in this session", timeout=2)
            return
        self.match_at = (self.match_at + step) % len(self.matches)
        seq = self.matches[self.match_at]
        self.notify(f"match {self.match_at + 1} of {len(self.matches)} (#{seq})", timeout=1.5)
        moved = SessionHit(**{**{f: getattr(row, f) for f in row.__struct_fields__}, "seq": seq})
        self.shown = row.session_id
        self.load_preview(moved, self.query_one("#query", Input).value)

    def action_whole(self) -> None:
        row = self.selected()
        if row is not None:
            self.push_screen(SessionScreen(self.backend, row, self.query_one("#query", Input).value, self.pattern()))

    def action_sort(self) -> None:
        self.sort = "recent" if self.sort == "relevance" else "relevance"
        self.notify(f"sorted by {'newest first' if self.sort == 'recent' else 'best match'}", timeout=1.5)
        self.search(self.query_one("#query", Input).value)

    def action_agent(self) -> None:
        self.pick_agent()

    @work(thread=True, exclusive=True, group="agents")
    def pick_agent(self) -> None:
        choices = [(f"{p:<16} {n:>6} session{'s' if n != 1 else ''}", p) for p, n in self.backend.providers()]
        self.call_from_thread(self.push_screen, PickScreen("all agents", choices), self.agent_chosen)

    def agent_chosen(self, agent: str | None) -> None:
        self.agent = agent
        self.search(self.query_one("#query", Input).value)

    def action_project(self) -> None:
        self.pick_project()

    @work(thread=True, exclusive=True, group="agents")
    def pick_project(self) -> None:
        choices = [(f"{n:>6}  {view.place(project, 70)}", project) for project, n in self.backend.projects()]
        self.call_from_thread(self.push_screen, PickScreen("every project", choices), self.project_chosen)

    def project_chosen(self, project: str | None) -> None:
        self.project = project
        self.search(self.query_one("#query", Input).value)

    def action_time(self) -> None:
        self.push_screen(PickScreen("any time", [(label, since) for since, label in TIMES]), self.time_chosen)

    def time_chosen(self, since: str | None) -> None:
        self.since = since
        self.search(self.query_one("#query", Input).value)

    def action_copy(self) -> None:
        row = self.selected()
        if row is None:
            return
        command = self.resume_command(row)
        if command is None:
            self.notify(f"{row.provider} has no command that reopens a session; export it instead (e, h)", timeout=4)
            return
        self.copy_to_clipboard(command)  # OSC 52: terminals that allow it put it on the clipboard
        self.notify(f"copied (if your terminal allows OSC 52): {printable(command)}", timeout=6)

    def resume_command(self, row: SessionHit) -> str | None:
        try:
            return self.backend.resume_command(row.session_id)
        except VoyagerError:
            return None

    def action_export(self, fmt: str) -> None:
        row = self.selected()
        if row is not None:
            self.export_worker(row, fmt, False)

    def action_open_html(self) -> None:
        row = self.selected()
        if row is not None:
            self.export_worker(row, "html", True)

    @work(thread=True, group="export")
    def export_worker(self, row: SessionHit, fmt: str, open_it: bool) -> None:
        try:
            path = self.backend.export(row.session_id, fmt, Path.cwd())
        except Exception as exc:  # noqa: BLE001 - shown as a notice: the UI stays up
            self.call_from_thread(self.notify, f"export failed: {printable(str(exc))}", severity="error")
            return
        self.call_from_thread(self.notify, f"wrote {printable(str(path))}", timeout=5)
        if open_it:
            import webbrowser

            webbrowser.open(path.resolve().as_uri())

    def action_help(self) -> None:
        self.push_screen(HelpScreen())

    def action_resume(self) -> None:
        if isinstance(self.screen, (SessionScreen, ModalScreen)):
            return
        row = self.selected()
        if row is not None:
            self.exit(("resume", row.session_id))
