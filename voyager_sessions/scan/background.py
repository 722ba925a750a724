"""The refresh before a search has a budget; a scan in the background goes on with what it left.

A search refreshes the index first, and the first search on a big history would wait for
the whole first index. Instead its refresh is a scan with a budget
(:func:`refresh_budget`): newest sessions first, it reads until the budget is spent and
commits (the rest of a plan that small is read anyway, see ``scan.run``), and the search
answers from what is committed, saying how far the index is (``indexing`` in its JSON).
:func:`continue_scan` then starts ``voyager scan`` as a process of its own, detached from
the terminal, which takes the writer lock once the budgeted scan has let it go and reads
the rest, committing as it goes, so every later search sees more. Its progress is
committed with the index (:mod:`.progress`); its stderr goes to ``scan.log`` in the data
dir (private, like every file there).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path

#: Seconds a search's refresh may read before it hands the rest to a scan in the background
#: (``VOYAGER_REFRESH_BUDGET``: seconds, ``0`` hands any large plan over at once, ``none`` never does).
REFRESH_BUDGET_S = 0.6

#: The background scan waits this long for the lock (the search that started it may still hold it).
WAIT_S = 30

#: ``scan.log`` is started afresh when it has grown past this.
LOG_MAX_BYTES = 1 << 20


def refresh_budget(env: Mapping[str, str] | None = None) -> float | None:
    """The budget of the refresh before a search, in seconds (None: no budget)."""
    raw = (os.environ if env is None else env).get("VOYAGER_REFRESH_BUDGET", "")
    if not raw.strip():
        return REFRESH_BUDGET_S
    if raw.strip().lower() in ("none", "off", "inf"):
        return None
    try:
        return max(0.0, float(raw))
    except ValueError:
        return REFRESH_BUDGET_S


def continue_scan(data_dir: Path, env: Mapping[str, str] | None = None) -> int | None:
    """Start ``voyager scan`` in the background for ``data_dir`` (with ``env``'s agent locations); its pid.

    None when it could not be started (the next search's refresh goes on instead).
    """
    from voyager_sessions.core.paths import DataDir, open_private

    child_env = dict(os.environ if env is None else env)
    child_env["VOYAGER_HOME"] = str(data_dir)
    child_env.pop("VOYAGER_REFRESH_BUDGET", None)
    log_path = DataDir(data_dir).scan_log
    try:
        if log_path.stat().st_size > LOG_MAX_BYTES:
            log_path.unlink()
    except OSError:
        pass
    try:
        log = open_private(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    except Exception:  # noqa: BLE001 - a data dir that cannot take a log cannot take a scan either
        return None
    import subprocess  # here, not at the top: a refresh that finds nothing to continue never starts one (~4 ms)

    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "voyager_sessions", "scan", "-q", "--wait", str(WAIT_S)],
            env=child_env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=log,
            start_new_session=True,  # not the terminal's: Ctrl-C on the search leaves it be
            close_fds=True,
        )
    except OSError:
        return None
    finally:
        os.close(log)
    _hand_over(data_dir, proc.pid)
    return proc.pid


def _hand_over(data_dir: Path, pid: int) -> None:
    """Name ``pid`` as the scan building the index in its committed record (searches meanwhile say it runs)."""
    from voyager_sessions.core.errors import VoyagerError
    from voyager_sessions.core.paths import DataDir
    from voyager_sessions.scan import progress
    from voyager_sessions.store.state import StateStore

    try:
        store = StateStore(DataDir(data_dir).state_db)
    except VoyagerError:
        return
    try:
        record = progress.decode(store.get_meta(progress.META_KEY))
        if record is not None:
            import msgspec

            record = msgspec.structs.replace(record, pid=pid)
            store.set_meta(progress.META_KEY, progress.encode(record).decode())
    except VoyagerError:
        pass
    finally:
        store.close()
