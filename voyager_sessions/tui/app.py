"""``voyager ui``: find a past session as you type, read it, and go back to work in it.

A Textual app on :class:`~voyager_sessions.tui.backend.Backend`: a search box (the query
language of ``voyager search``), the matching sessions beside (or, below 100 columns, above) a
preview of the selected one, opened at its first match. Searches run in a worker thread,
debounced; a keystroke supersedes the search in flight (its answer is dropped), so typing never
waits. ``Enter`` leaves the UI and hands the terminal to the session's agent (see
:func:`voyager_sessions.tui.run`).

The keys follow where the cursor is, and the footer always shows the ones that work there:

* in the **search box** every printable key types; ``↓`` (or Tab) goes down into the results,
  ``Enter`` resumes the selected session, ``Esc`` clears the box (an empty box: clears the
  filters, then quits);
* in the **results** letters act on the selected session (``f`` the whole session, ``n``/``N``
  its matches, ``s`` sort, ``a``/``p``/``t`` filters, ``c`` copy, ``e``/``h``/``o`` export,
  ``?`` every key); ``↑`` on the first row, ``/`` or ``Esc`` go back to the box, query kept;
* the **whole session** (``f``): ``Esc`` or ``q`` goes back to the results;
* anywhere: ``Ctrl-C`` (or ``Ctrl-Q``) quits, ``F1`` lists every key, ``Ctrl-N``/``Ctrl-P`` move
  the selection. Textual's command palette is off: ``Ctrl-P`` is the app's.

Every string from a session is drawn by :mod:`voyager_sessions.tui.view` as plain text.
"""

from __future__ import annotations

import functools
import json
import os
import re
import time
from pathlib import Path
from typing import Any

from rich.text import Text
from textual import events, on, work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Container, VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.timer import Timer
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

#: Rows found by their title whose prompt is asked for (more than a screen holds: the rest keep their title).
PROMPTS = 20

#: Below this many columns the results stack over the preview (as fast-resume does) instead of beside it.
STACK_BELOW = 100

#: The times ``t`` offers: a ``since:`` value and how the status line says it.
TIMES: list[tuple[str, str]] = [("1d", "today"), ("7d", "this week"), ("30d", "this month"), ("365d", "this year")]

PLACEHOLDER = 'search your sessions: words, "a phrase", provider:codex, kind:user, since:7d …'

HELP = """\
Type to search: the query language of `voyager search` (empty: the newest sessions).
The footer always shows the keys that work where the cursor is.

In the search box (every other key types)
  ↓  Tab               down into the results
  Enter                resume the selected session in its agent, in its directory
  Esc                  clear the box; in an empty box, clear the filters, then quit

In the results
  ↑ ↓  j k             move (↑ on the first row: back to the box)
  Enter                resume the session in its agent, in its directory
  f                    the whole session, full screen
  n  N                 next / previous match inside the session
  s                    sort: best match ↔ newest first
  a  p  t              only one agent, one project, one time span (a list each; Esc: no filter)
  c                    copy the resume command (OSC 52; also shown)
  e  h                 export the session as Markdown / HTML into the current directory
  o                    export HTML and open it in the browser
  /  Esc               back to the search box (the query is kept)
  ?                    this help

In the whole session (f)
  n  N                 next / previous match
  ↑ ↓  j k  PgUp PgDn  scroll
  Esc  q               back to the results

Anywhere
  ctrl+n  ctrl+p       move the selection
  F1                   this help
  ctrl+c  ctrl+q       quit
"""


def probe(event: str, **facts: object) -> None:
    """Append a timing event to ``$VOYAGER_UI_PROBE`` when set (the bench measures the picker from outside): the
    wall clock and this process's CPU time (which a busy machine does not stretch)."""
    path = os.environ.get("VOYAGER_UI_PROBE")
    if path:
        line = {"event": event, "t": time.time(), "cpu": round(time.process_time(), 4), **facts}
        with open(path, "a", encoding="utf-8") as f:
            f.write(json.dumps(line, ensure_ascii=False) + "\n")


def _listing(answer: Answer) -> tuple[int, list[tuple[str, int | None, str]]]:
    """What an answer lists: its total, and each row's session, event and how it matched (two answers that list
    the same need not be drawn twice). Taken before the rows are shown: a row found by its title is then given
    its prompt's event in place (``show_prompt``)."""
    return answer.total, [(r.session_id, r.seq, r.match) for r in answer.rows]


class HelpScreen(ModalScreen[None]):
    """Every key, one screen; it scrolls when the terminal is short."""

    BINDINGS = [
        Binding("escape,q,question_mark,f1", "dismiss", "close"),
        Binding("ctrl+c,ctrl+q", "app.quit", "quit", priority=True),
    ]
    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > VerticalScroll { width: 104; max-width: 96%; height: auto; max-height: 90%;
        border: round $accent; background: $surface; padding: 0 2; }
    HelpScreen Static { width: 100%; }
    """

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help"):
            yield Static(Text(HELP))
        yield Footer(show_command_palette=False, compact=True)

    def on_mount(self) -> None:
        self.query_one("#help").focus()


class PickScreen(ModalScreen[str | None]):
    """Pick one value to narrow the search by (an agent, a project, a time), or none of them (Esc)."""

    BINDINGS = [
        Binding("escape", "all", "no filter"),
        Binding("ctrl+c,ctrl+q", "app.quit", "quit", priority=True),
    ]
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
        yield Footer(show_command_palette=False, compact=True)

    @on(OptionList.OptionSelected)
    def chosen(self, event: OptionList.OptionSelected) -> None:
        key = event.option.id or ""
        self.dismiss(self.choices[int(key[1:])][1] if key else None)

    def action_all(self) -> None:
        self.dismiss(None)


class Rendered:
    """Blocks of text shown one under another (a blank line between), and where each starts on screen.

    The preview and the whole session are one ``Static`` each; to open them at a match, the row a block
    starts on at the current width is needed: counted (:func:`view.rows`) up to the block asked for, once
    per width.
    """

    def __init__(self, blocks: list[Text], seqs: list[int | None]) -> None:
        self.blocks, self.seqs = blocks, seqs
        self.text = Text("\n\n").join(blocks)
        self._width = 0
        self._starts: list[int] = []

    def start(self, index: int, width: int) -> int:
        """The screen row block ``index`` starts on, wrapped to ``width`` cells."""
        if width != self._width:
            self._width, self._starts = width, [0]
        while len(self._starts) <= index:
            i = len(self._starts) - 1
            self._starts.append(self._starts[-1] + view.rows(self.blocks[i].plain, width) + 1)
        return self._starts[index]

    def row_of(self, seq: int, width: int) -> int | None:
        """The row of the first marked match in event ``seq`` (its first line when nothing in it is marked)."""
        if seq not in self.seqs:
            return None
        i = self.seqs.index(seq)
        return self.start(i, width) + view.first_match_row(self.blocks[i], 0, width)

    def event_row(self, seq: int, width: int) -> int | None:
        return self.start(self.seqs.index(seq), width) if seq in self.seqs else None


def scroll_to_match(scroll: VerticalScroll, body: Static, shown: Rendered, seq: int | None) -> None:
    """Scroll so that event ``seq``'s first match is on screen: with the event's header above it when both fit,
    else with two lines of what comes before it."""
    width = body.content_size.width or body.size.width
    if seq is None or width <= 0:
        scroll.scroll_home(animate=False)
        return
    match = shown.row_of(seq, width)
    start = shown.event_row(seq, width)
    if match is None or start is None:
        scroll.scroll_home(animate=False)
        return
    height = max(scroll.content_size.height or scroll.size.height, 4)
    y = start - 1 if match - start < height // 2 else match - 2
    scroll.scroll_to(y=max(y, 0), animate=False)


class QueryBox(Input):
    """The search box: every printable key types; ``Enter`` resumes the selected session (said in the footer)."""

    BINDINGS = [Binding("enter", "submit", "resume", key_display="⏎")]

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "submit":
            return bool(getattr(self.app, "rows", None))
        return True


class ResultList(OptionList):
    """The matching sessions. With the cursor here, letters act on the selected session (the footer shows
    them); ``↑`` on the first row, ``/`` and ``Esc`` go back to the search box."""

    BINDINGS = [
        Binding("enter", "select", "resume", key_display="⏎"),
        Binding("f", "app.whole", "full"),
        Binding("n", "app.jump(1)", "match", group=Binding.Group("match")),
        Binding("N", "app.jump(-1)", "match", group=Binding.Group("match")),
        Binding("s", "app.sort", "sort"),
        Binding("a", "app.agent", "filter", group=Binding.Group("filter")),
        Binding("p", "app.project", "filter", group=Binding.Group("filter")),
        Binding("t", "app.time", "filter", group=Binding.Group("filter")),
        Binding("c", "app.copy", "copy"),
        # In the help, not the footer (80 columns hold the rest).
        Binding("e", "app.export('md')", "export", show=False),
        Binding("h", "app.export('html')", "export", show=False),
        Binding("o", "app.open_html", "export", show=False),
        Binding("slash", "app.focus_query", "search", show=False),
        Binding("escape", "app.focus_query", "back"),
        Binding("question_mark", "app.help", "keys", key_display="?"),
        Binding("j", "cursor_down", show=False),
        Binding("k", "cursor_up", show=False),
    ]

    def action_cursor_up(self) -> None:
        if not self.highlighted:
            self.app.query_one("#query", Input).focus()
            return
        super().action_cursor_up()

    def on_resize(self, event: events.Resize) -> None:
        app = self.app
        if isinstance(app, VoyagerApp):
            app.call_after_refresh(app.relayout)  # once the new layout is final


class SessionScreen(Screen[None]):
    """One whole session, full screen, opened at the selected match, with ``n``/``N`` between matches."""

    BINDINGS = [
        Binding("escape,q", "back", "back"),
        Binding("n", "jump(1)", "match", group=Binding.Group("match")),
        Binding("N", "jump(-1)", "match", group=Binding.Group("match")),
        Binding("j", "scroll(1)", "scroll", group=Binding.Group("scroll")),
        Binding("k", "scroll(-1)", "scroll", group=Binding.Group("scroll")),
        Binding("question_mark,f1", "app.help", "keys"),
        Binding("ctrl+c,ctrl+q", "app.quit", "quit", key_display="^c", priority=True),
    ]

    def __init__(self, backend: Backend, row: SessionHit, query: str, pattern: re.Pattern[str] | None) -> None:
        super().__init__()
        self.backend, self.row, self.words, self.pattern = backend, row, query, pattern
        self.matches: list[int] = []
        self.at = -1
        self.shown: Rendered | None = None

    def compose(self) -> ComposeResult:
        yield VerticalScroll(Static(Text("loading …"), id="whole"), id="whole-scroll")
        yield Footer(show_command_palette=False, compact=True)

    def on_mount(self) -> None:
        self.query_one("#whole-scroll").focus()
        self.load()

    def action_back(self) -> None:
        self.app.pop_screen()

    @work(thread=True, exclusive=True, group="whole")
    def load(self) -> None:
        tl = self.backend.timeline(self.row.session_id)
        matches = self.backend.matches(self.row.session_id, self.words)
        # Drawn here, in the worker: a long session costs the UI thread nothing.
        blocks = [view.header(tl.session)]
        blocks += [view.event_block(ev, self.pattern, fold=False, current=ev.seq == self.row.seq) for ev in tl.events]
        self.app.call_from_thread(self.show, Rendered(blocks, [None, *(ev.seq for ev in tl.events)]), matches)

    def show(self, shown: Rendered, matches: list[int]) -> None:
        self.matches = matches
        self.shown = shown
        self.query_one("#whole", Static).update(shown.text)
        seq = self.row.seq if self.row.seq in matches else (matches[0] if matches else None)
        if seq is not None:
            self.at = matches.index(seq)
            self.call_after_refresh(self.goto, seq)

    def goto(self, seq: int) -> None:
        if self.shown is not None:
            scroll_to_match(
                self.query_one("#whole-scroll", VerticalScroll), self.query_one("#whole", Static), self.shown, seq
            )

    def action_jump(self, step: int) -> None:
        if not self.matches:
            self.notify("no match of the query in this session", timeout=2)
            return
        self.at = (self.at + step) % len(self.matches)
        self.goto(self.matches[self.at])
        self.notify(f"match {self.at + 1} of {len(self.matches)}", timeout=1.5)

    def action_scroll(self, lines: int) -> None:
        self.query_one("#whole-scroll", VerticalScroll).scroll_relative(y=lines, animate=False)


class VoyagerApp(App[tuple[str, str] | None]):
    """The picker. Its return value is what to do after it closes: ``("resume", session_id)`` or None."""

    TITLE = "voyager"
    #: Below :data:`STACK_BELOW` columns the screen has the class ``-stacked``: the list over the preview.
    HORIZONTAL_BREAKPOINTS = [(0, "-stacked"), (STACK_BELOW, "-beside")]
    ENABLE_COMMAND_PALETTE = False  # its ctrl+p is the app's "up"; every action has a key of its own
    CSS = """
    #query { margin: 0 0; }
    #query.-textual-compact { margin: 0 1; }
    #status { height: 1; color: $text-muted; padding: 0 1; }
    #status.error { color: $error; text-style: bold; }
    #panes { height: 1fr; layout: horizontal; }
    #results { width: 50%; min-width: 30; border: none; scrollbar-gutter: stable; }
    #preview { width: 1fr; border-left: vkey $primary; padding: 0 1; }
    Screen.-stacked #panes { layout: vertical; }
    Screen.-stacked #results { width: 100%; height: 45%; min-width: 0; }
    Screen.-stacked #preview { width: 100%; height: 1fr; border-left: none; border-top: hkey $primary; }
    Footer.-compact FooterLabel { margin: 0 1 0 0; }
    Footer.-compact KeyGroup.-compact { margin: 0; }
    """
    BINDINGS = [
        Binding("ctrl+n", "move(1)", show=False, priority=True),
        Binding("ctrl+p", "move(-1)", show=False, priority=True),
        # In the box (the list has keys of its own for these): ↓ goes down into the results.
        Binding("down,tab", "into_results", "results", key_display="↓", priority=True),
        # Esc goes back one level; which level the footer says (check_action picks the one that applies).
        Binding("escape", "clear_query", "clear"),
        Binding("escape", "clear_filters", "no filters"),
        Binding("escape", "leave", "quit"),
        Binding("escape", "focus_query", "back"),
        Binding("f1", "app.help", "keys"),
        Binding("ctrl+c", "quit", "quit", key_display="^c", priority=True),
        Binding("ctrl+q", "quit", show=False, priority=True),
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
        self.preview_text: Rendered | None = None
        self._timer: Timer | None = None
        self._width = 0
        self._footer = (bool(query), False)
        self.searches = 0  # answers applied (tests wait on it)

    # -- layout ----------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        # Fitted to the terminal from the start (the breakpoint class as the screen's resize will set it, the box
        # as ``fit`` will): below 100 columns or 30 lines the screen was otherwise styled and laid out twice before
        # its first frame (at 80x24, 8% of the Python calls from App.run to it; 21% with the class set by the
        # screen's first resize).
        width, height = self.size
        self.screen.add_class("-stacked" if width < STACK_BELOW else "-beside")
        yield QueryBox(value=self.initial, placeholder=PLACEHOLDER, id="query", compact=height < 30)
        yield Static("opening the index …", id="status")
        with Container(id="panes"):
            yield ResultList(id="results")
            with VerticalScroll(id="preview"):
                yield Static(Text(""), id="preview-body")
        yield Footer(show_command_palette=False, compact=True)

    def on_mount(self) -> None:
        self.query_one("#query", Input).focus()
        self.fit(self.size.width, self.size.height)
        self.call_after_refresh(self.first_frame)

    def on_resize(self, event: events.Resize) -> None:
        self.fit(event.size.width, event.size.height)
        self.call_after_refresh(self.relayout)

    def fit(self, width: int, height: int) -> None:
        """A box without borders on short screens. (The list goes over the preview below :data:`STACK_BELOW`
        columns by the screen's breakpoint class, set when the screen itself is resized: set here, on the app's
        resize, it laid the screen out stacked at its old width first, rows and all, for a frame or more.)"""
        self.query_one("#query", Input).compact = height < 30

    def relayout(self) -> None:
        """Draw the rows again for the list's width (the terminal was resized)."""
        results = self.query_one("#results", ResultList)
        width = results.scrollable_content_region.width
        if width == self._width or not self.rows:
            self._width = width
            return
        self._width = width
        keep = results.highlighted
        results.clear_options()
        results.add_options(self._options(width))
        if keep is not None and keep < len(self.rows):
            results.highlighted = keep

    def _options(self, width: int) -> list[Option]:
        agents = view.agent_width(r.provider for r in self.rows)
        now = time.time()
        return [
            Option(view.session_row(r, width=max(width - 1, 20), agent_width=agents, now=now), id=str(i))
            for i, r in enumerate(self.rows)
        ]

    def first_frame(self) -> None:
        """The screen is drawn: only now start opening the index (a worker holding the GIL would delay the frame)."""
        probe("frame")
        self.start()
        if self.live:
            self.set_interval(LIVE_EVERY, self.keep_fresh)

    @work(thread=True, exclusive=True, group="search")
    def start(self) -> None:
        """The first search and refresh, off the UI thread (the first frame never waits for the index).

        Where there is an index, the rows come from it at once and the refresh (a stat of every source, the
        scan's imports: tens to hundreds of milliseconds) runs behind them; the box is searched again if it
        brought something. Without one, the refresh builds it first (searchable while it is built)."""
        indexed = self.backend.has_index()
        if indexed:
            self.run_search(self.initial)
        try:
            before = self.backend.generation() if indexed else None
        except Exception:  # noqa: BLE001 - an index mid-way: the refresh and the search behind it say what is wrong
            before = None
        problem = self.backend.refresh()
        if problem:
            self.call_from_thread(self.notify, f"not refreshed: {printable(problem)}", severity="warning")
        if not indexed:
            self.run_search(self.initial)
            return
        try:
            changed = before is None or self.backend.generation() != before
        except Exception:  # noqa: BLE001 - as above
            changed = True
        if changed:
            # Whatever the box says by now (a keystroke since cancelled this worker, not what the refresh brought).
            self.call_from_thread(lambda: self.search(self.query_one("#query", Input).value))

    # -- keys: what works where ------------------------------------------------------------------

    def in_box(self) -> bool:
        return self.screen is self.screen_stack[0] and self.focused is not None and self.focused.id == "query"

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Which of the app's bindings apply now (the footer shows those; a key whose binding does not apply
        goes on to the next one bound to it, or to the focused widget)."""
        main = self.screen is self.screen_stack[0]
        box = self.in_box()
        value = self.query_one("#query", Input).value if box else ""
        filtered = bool(self.agent or self.project or self.since)
        if action == "into_results":
            return box and bool(self.rows)
        if action == "clear_query":
            return box and bool(value)
        if action == "clear_filters":
            return box and not value and filtered
        if action == "leave":
            return box and not value and not filtered
        if action == "focus_query":
            return main and not box
        return True

    def on_descendant_focus(self, event: events.DescendantFocus) -> None:
        self.refresh_bindings()

    # -- searching -------------------------------------------------------------------------------

    @on(Input.Changed, "#query")
    def typed(self, event: Input.Changed) -> None:
        probe("typed", value=event.value)
        self.workers.cancel_group(self, "prompts")  # the title rows' prompts wait: this keystroke's search first
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
        """Ask the backend (in a worker) and hand the answer to the UI thread unless a newer search replaced it.

        Words first, meaning fused in when ready: where the meaning model is installed, the words' rows are shown
        as soon as they are found, then the same query ranked by words and meaning replaces them if it differs
        (embedding the query, and loading the model for the first one, never holds up the rows). Where every
        word is in some session, the words' rows keep their places and meaning's follow them (``search.fusion``).
        """
        providers = (self.agent,) if self.agent else ()
        sort, project, since = self.sort, self.project, self.since

        def ask(meaning: bool) -> Answer:
            return self.backend.search(
                query, sort=sort, providers=providers, project=project, since=since, meaning=meaning
            )

        answer = ask(False)
        if get_current_worker().is_cancelled:
            return
        listed = _listing(answer)
        self.call_from_thread(self.show_answer, answer)
        if answer.error or not self.backend.fuses(query, sort):
            return
        fused = ask(True)
        if get_current_worker().is_cancelled or fused.error or _listing(fused) == listed:
            return
        self.call_from_thread(functools.partial(self.show_answer, fused, fused=True))

    def show_answer(self, answer: Answer, *, fused: bool = False) -> None:
        """Put ``answer``'s rows on the screen (``fused``: the same query's rows with meaning, after its words')."""
        current = self.query_one("#query", Input).value
        if answer.query.strip() != current.strip() and not (answer.query == self.initial and not current):
            return  # the box changed since: the search for what it says now is on its way
        same = answer.query.strip() == self.answer.query.strip()
        chosen = self.selected()
        results = self.query_one("#results", ResultList)
        # The same query again (a refresh, another sort or filter) keeps the selected session; a new one starts
        # at its best match, and so does meaning fused in while the best word row is still the one selected.
        keep = chosen.session_id if chosen and same and not (fused and results.highlighted == 0) else None
        self.answer = answer
        self.searches += 1
        probe("answer", query=answer.query, rows=len(answer.rows), error=answer.error, fused=fused)
        if answer.error:
            self.status(answer.error, error=True)
            return
        self.rows = answer.rows
        results.clear_options()
        self._width = results.scrollable_content_region.width
        results.add_options(self._options(self._width))
        self.call_after_refresh(self.relayout)  # the list's width may not be final yet (a resize on its way)
        self.status(self.describe(answer))
        footer = (bool(answer.query), bool(self.rows))
        if footer != self._footer:
            # What Esc and ↓ do changed (clear or quit; rows to go down to or none): the footer says so once the rows
            # are drawn (redrawing it costs milliseconds the answer must not wait for, nor the search's start).
            self._footer = footer
            self.call_after_refresh(self.refresh_bindings)
        if not self.rows:
            self.preview(None)
            return
        index = next((i for i, r in enumerate(self.rows) if r.session_id == keep), 0)
        results.highlighted = index
        row = self.rows[index]
        if not (fused and chosen and (chosen.session_id, chosen.seq) == (row.session_id, row.seq)):
            self.preview(row)  # (meaning fused in around the row shown: its preview stays as it is)
        # The rows one can see first; a keystroke cancels it (typing.cancel_group) before it asks again.
        titled = [r for r in self.rows[:PROMPTS] if r.kind == "title"]
        if titled and answer.query.strip():
            self.fill_prompts(titled, answer.query)

    @work(thread=True, exclusive=True, group="prompts")
    def fill_prompts(self, rows: list[SessionHit], query: str) -> None:
        """A row found by its title shows what the session's prompt says instead of the title again."""
        for row in rows:
            if get_current_worker().is_cancelled:
                return
            found = self.backend.prompt(row.session_id, query)
            if found is not None:
                self.call_from_thread(self.show_prompt, row, query, found)

    def show_prompt(self, row: SessionHit, query: str, found: dict[str, Any]) -> None:
        if row not in self.rows or self.answer.query != query:
            return
        for key, value in found.items():
            setattr(row, key, value)
        i = self.rows.index(row)
        agents = view.agent_width(r.provider for r in self.rows)
        self.query_one("#results", ResultList).replace_option_prompt_at_index(
            i, view.session_row(row, width=max(self._width - 1, 20), agent_width=agents)
        )
        if self.shown == row.session_id:
            self.preview(row)

    def describe(self, answer: Answer) -> str:
        agent = self.narrowed()
        order = "newest first" if self.sort == "recent" else "best match first"
        building = view.indexing(answer.indexing)
        if not answer.query.strip():
            return f"{answer.total} session{'s' if answer.total != 1 else ''}, newest first{agent}{building}"
        if not answer.rows:
            # While the index is built, no match is no answer yet: the session may be in what is still to come.
            return f"no session matches yet{agent}{building}" if building else f"no session matches{agent}"
        found = f"{answer.total} session{'s' if answer.total != 1 else ''}"
        if answer.partial:
            found += f" hold some of the {len(answer.terms)} terms (none holds all), most first"
        return f"{found} · {order}{agent}{building}"

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
        results = self.query_one("#results", ResultList)
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
            self.preview_text = None
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
        # Drawn here, in the worker: a session of long tool calls costs the UI thread (and the next keystroke's
        # answer) nothing.
        shown = self.draw_preview(row, tl, matches)
        if get_current_worker().is_cancelled:
            return
        self.call_from_thread(self.show_preview, row, shown, matches)

    def draw_preview(self, row: SessionHit, tl: Any, matches: list[int]) -> Rendered:
        pattern = self.pattern()
        blocks = [view.header(tl.session)]
        blocks += [view.event_block(ev, pattern, current=ev.seq == row.seq) for ev in tl.events]
        seqs: list[int | None] = [None, *(ev.seq for ev in tl.events)]
        if matches:
            blocks.append(
                Text(
                    f"{len(matches)} matching event{'s' if len(matches) != 1 else ''} in this session "
                    "· n / N to jump · f: the whole session",
                    style="dim italic",
                )
            )
            seqs.append(None)
        return Rendered(blocks, seqs)

    def show_preview(self, row: SessionHit, shown: Rendered, matches: list[int]) -> None:
        if self.shown != row.session_id:
            return
        self.matches = matches
        self.match_at = matches.index(row.seq) if row.seq in matches else -1
        self.preview_text = shown
        self.query_one("#preview-body", Static).update(shown.text)
        target = row.seq if row.seq is not None and row.seq in shown.seqs and row.seq >= 0 else None
        self.call_after_refresh(self.preview_at, row.session_id, target)

    def preview_at(self, session_id: str, seq: int | None) -> None:
        """Scroll the preview to event ``seq``'s first match (its top when there is none)."""
        if self.shown != session_id or self.preview_text is None:
            return
        scroll_to_match(
            self.query_one("#preview", VerticalScroll), self.query_one("#preview-body", Static), self.preview_text, seq
        )

    def pattern(self) -> re.Pattern[str] | None:
        """The query's words, for marking matches in the preview: the terms the engine matched the query by
        (quotes, groups and ``OR`` taken apart; filters are not terms)."""
        words: list[str] = []
        for term in self.answer.terms:
            words += [w for w in re.sub(r'[()"]', " ", term).split() if w not in ("OR", "NOT", "AND")]
        return view.terms_pattern([w.lstrip("-").rstrip("*") for w in words])

    # -- actions -----------------------------------------------------------------------------------

    def action_move(self, step: int) -> None:
        if self.screen is not self.screen_stack[0]:
            return
        results = self.query_one("#results", ResultList)
        if results.option_count:
            if step > 0:
                results.action_cursor_down()
            elif results.highlighted:
                results.action_cursor_up()

    def action_into_results(self) -> None:
        results = self.query_one("#results", ResultList)
        if results.option_count:
            results.focus()
            if results.highlighted is None:
                results.highlighted = 0

    def action_focus_query(self) -> None:
        self.query_one("#query", Input).focus()

    def action_leave(self) -> None:
        self.exit(None)

    def action_clear_query(self) -> None:
        self.query_one("#query", Input).value = ""

    def action_clear_filters(self) -> None:
        self.agent = self.project = self.since = None
        self.notify("filters cleared", timeout=1.5)
        self.search(self.query_one("#query", Input).value)
        self.refresh_bindings()

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
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen())

    def action_resume(self) -> None:
        if self.screen is not self.screen_stack[0]:
            return
        row = self.selected()
        if row is not None:
            self.exit(("resume", row.session_id))
