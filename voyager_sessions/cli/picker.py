"""Opening the terminal picker, without click: ``voyager ui``'s click command and its fast path both come here.

``voyager ui [QUERY]`` (and ``voyager`` alone on a terminal) skips click (:mod:`voyager_sessions.cli.main`):
importing it and building the command tree is time the picker's first frame would wait for.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence

from voyager_sessions.cli.common import UserError, data_dir


def open_picker(query: Sequence[str], *, loaded: Callable[[], None] = lambda: None) -> None:
    """Open the picker with ``query`` typed in (a UserError when there is no terminal or no Textual); ``loaded``
    is called once Textual and the app are imported (the fast path's start-up ends there: ``cli.main``)."""
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        raise UserError("voyager ui needs a terminal (for scripts: voyager search … --json)")
    try:
        import textual  # noqa: F401
    except ImportError:
        raise UserError("voyager ui needs Textual: pip install textual (it comes with voyager-sessions)") from None
    from voyager_sessions import tui
    from voyager_sessions.tui import app  # noqa: F401  (what the first frame needs, imported here: see ``loaded``)

    loaded()
    tui.run(data_dir(), " ".join(query))
