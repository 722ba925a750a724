"""The Gemini Apps adapter: a Google Takeout of Gemini Apps' activity, imported (documented, not yet observed).

Gemini's web and mobile apps keep no history on disk; Google Takeout exports it as a "My Activity"
page, ``Takeout/My Activity/Gemini Apps/MyActivity.html``. Like the ChatGPT and Claude.ai exports it
is found through ``voyager import PATH`` (the page, the unpacked ``Takeout`` folder or the Takeout
``.zip``, read in place) and the imports folder (``_exports``). As agentsview's
``gemini_apps_takeout.go`` reads it, the page is a list of cells::

    <div class="outer-cell …">
      <div class="header-cell …"><h3>Gemini Apps</h3><p>Prompted</p><p>Jan 2, 2025, 3:04:05 PM EDT</p></div>
      <div class="content-cell …"><p>the prompt</p><p>the answer …</p></div>
    </div>

A ``Prompted`` record is one exchange: the content cell's first block is what the person asked, the
blocks after it the answer (in the peer's sanitized sample; the page links no exchange to another,
so each is a session of its own). Other records (``Canvas``, ``Feedback``, …) are not exchanges: they
are counted in one notice. Scripts and styles in the page are never text. Times are English
``Mon D, YYYY, H:MM:SS AM/PM <zone>``; a zone Voyager cannot place leaves the time unknown. The page
is parsed as a stream (a record at a time; :mod:`._takeout`, imported only to read a page), and a re-read
reports ``Unchanged`` for every exchange it saw before. A web chat has no resume command.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import ClassVar, Final

from voyager_sessions.ingest.adapters import _exports
from voyager_sessions.ingest.adapters.base import Cursor, Hints, Item, Notice, Source

PROVIDER: Final = "gemini-apps"
LABEL = "Gemini Apps Takeout"


def read_takeout(source: Source, cursor: Cursor | None) -> Iterator[Item]:
    from voyager_sessions.ingest.adapters import _takeout  # the HTML parser: only when a page is read

    return _takeout.read_takeout(source, cursor)


class GeminiAppsAdapter:
    """Gemini Apps' Takeout activity pages, found as the other exports are (``voyager import``, the imports folder)."""

    name: ClassVar[_exports.ExportKind] = PROVIDER

    def roots(self, env: Mapping[str, str]) -> list[Path]:
        return [_exports.imports_dir(env, PROVIDER)]

    def discover(self, env: Mapping[str, str], hints: Hints | None = None) -> Iterator[Source | Notice]:
        # The recorded imports come as hints (the scan reads them from Voyager's state).
        return _exports.discover(PROVIDER, env, hints or Hints())

    def read(self, source: Source, cursor: Cursor | None = None) -> Iterator[Item]:
        return read_takeout(source, cursor)


ADAPTER = GeminiAppsAdapter()
