"""The refresh before a search, run in a process of its own: what the picker refreshes with.

A refresh (the stat pass ``voyager search`` makes, a budgeted scan when something changed)
is Python work from start to end. Run on a thread of the picker, it held the interpreter's
lock while the person typed, and each keystroke's search, whose calls into Tantivy let the
lock go and take it again, waited behind it: in the bench's ``ui`` scenario the first query
typed after the first frame took 200–520 ms instead of ~15 ms, and none did once the refresh
was gone. In a process of its own the refresh runs on another core; the picker's worker only
waits for it to exit, then reloads its reader.

The child runs exactly :meth:`voyager_sessions.api.LocalBackend.refresh` (so a large plan is
read for the refresh budget and handed to a background ``voyager scan`` as a search does), in
a session of its own (Ctrl-C in the picker's terminal is not sent to it: a refresh cut short
costs a re-read, and it ends within its budget anyway). It answers by exit code: 0 done,
3 another scan holds the index (:class:`Busy`), anything else one line on stderr.
"""

from __future__ import annotations

import sys
from pathlib import Path

from voyager_sessions.core.errors import EXIT_BUSY, Busy, VoyagerError


def refresh_apart(data_dir: Path) -> None:
    """Refresh ``data_dir``'s index in a child process and wait for it; raise as the refresh would."""
    import subprocess  # here: only a picker that refreshes by itself needs it

    proc = subprocess.run(
        [sys.executable, "-m", "voyager_sessions.api.apart", str(data_dir)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
        close_fds=True,
        check=False,
    )
    if proc.returncode == 0:
        return
    if proc.returncode == EXIT_BUSY:
        raise Busy("another scan is writing the index")
    lines = proc.stderr.decode("utf-8", errors="replace").strip().splitlines()
    raise VoyagerError(lines[-1] if lines else f"the refresh ended with exit code {proc.returncode}")


def main(argv: list[str]) -> int:
    """The child: one refresh of the data dir named in ``argv``; its outcome as an exit code."""
    from voyager_sessions.api import LocalBackend

    if len(argv) != 2:
        print("usage: python -m voyager_sessions.api.apart DATA_DIR", file=sys.stderr)
        return 2
    try:
        LocalBackend().refresh(Path(argv[1]), lambda text, quiet_ok: None)  # skipped pieces: `voyager doctor`
    except VoyagerError as exc:
        print(exc, file=sys.stderr)
        return exc.exit_code
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
