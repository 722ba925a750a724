"""``voyager ui``: the terminal picker (Textual). Imported only by that command, never by ``voyager search``.

:func:`run` opens the app on a data dir and, when the person pressed Enter on a session,
hands the terminal to that session's agent with the same checks and quoting as
``voyager resume`` once the app has given the screen back.
"""

from __future__ import annotations

from pathlib import Path


def run(ddir: Path, query: str = "") -> None:
    """Open the picker on ``ddir``; resume the chosen session afterwards (raises UserError as ``voyager resume``)."""
    from voyager_sessions.tui.app import VoyagerApp
    from voyager_sessions.tui.backend import Backend

    backend = Backend(ddir)
    try:
        outcome = VoyagerApp(backend, query).run()
    finally:
        backend.close()
    if outcome and outcome[0] == "resume":
        resume(ddir, outcome[1])


def resume(ddir: Path, session_id: str) -> None:
    """Hand the terminal to the session's agent, as ``voyager resume SESSION`` does (the same checks and words)."""
    import sys

    from voyager_sessions.api import SessionRequest
    from voyager_sessions.api.resume import hand_over
    from voyager_sessions.api.sessions import require_resumable
    from voyager_sessions.api.sessions import resume as plan_of
    from voyager_sessions.core.textsafe import printable

    plan = plan_of(SessionRequest(session=session_id), data_dir=ddir)
    how = require_resumable(plan)
    where = f" in {printable(how.cwd)}" if how.cwd else ""
    print(f"voyager: resuming {plan.agent} session {printable(plan.session.native_id)}{where}", file=sys.stderr)
    hand_over(how)
