"""Where things live: Voyager's private data dir, and the rules that find agents' homes.

Every location is derived from an environment mapping (``os.environ`` by default) so
tests and the demo can point Voyager at a fake HOME without touching the real one.
Which agent lives where is declared in the agent manifest (``voyager_sessions.ingest.manifest``);
here is only the rule its entries follow (:func:`resolve_home`: for each agent,
``VOYAGER_<AGENT>_…`` is an explicit override, authoritative when set; then the agent's own
variable; then its default) and the VS Code-family user dirs several agents share.
"""

from __future__ import annotations

import os
import shlex
import stat
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

Env = Mapping[str, str]


def _env(env: Env | None) -> Env:
    return os.environ if env is None else env


def home(env: Env | None = None) -> Path:
    e = _env(env)
    return Path(e.get("HOME") or os.path.expanduser("~"))


def data_dir(env: Env | None = None) -> Path:
    """Voyager's data dir: ``VOYAGER_HOME``, else ``$XDG_DATA_HOME/voyager``, else ``~/.local/share/voyager``.

    A name the index and the databases cannot open (bytes that are not UTF-8, a NUL) is a one-line UserError
    naming the variable to change, here, before anything is written there."""
    e = _env(env)
    if e.get("VOYAGER_HOME"):
        return usable(Path(e["VOYAGER_HOME"]).expanduser(), "VOYAGER_HOME")
    if e.get("XDG_DATA_HOME"):
        return usable(Path(e["XDG_DATA_HOME"]).expanduser() / "voyager", "XDG_DATA_HOME")
    return usable(home(e) / ".local" / "share" / "voyager", "HOME")


def usable(path: Path, variable: str) -> Path:
    """``path`` when SQLite and Tantivy can open files under it (a UTF-8 name without NUL), else a UserError."""
    from voyager_sessions.core.errors import UserError

    text = os.fspath(path)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        shown = os.fsencode(text).decode("utf-8", "backslashreplace")
        raise UserError(
            f"the data dir {shown} is not a name Voyager can use: it holds bytes that are not UTF-8, and the "
            f"index and databases need a UTF-8 path; set "
            f"{'VOYAGER_HOME' if variable == 'VOYAGER_HOME' else f'{variable}, or VOYAGER_HOME,'} to another folder"
        ) from None
    if "\0" in text:
        raise UserError(f"the data dir named by {variable} holds a NUL byte; set VOYAGER_HOME to another folder")
    return path


class DataDir:
    """The one owner of the data dir's layout: every file Voyager keeps is named here and nowhere else.

    ``index/`` (Tantivy), ``state.db`` (scan state and sessions), ``checkpoints.db``
    (checkpoints: not derived from the sources, so never reset with the index),
    ``checkpoints/`` (Markdown hand-offs, derived output), ``meaning.db`` (meaning vectors,
    derived from the index by the optional embedding model), ``scan.lock`` (the one-writer
    lock), ``scan-spool`` (a long scan's tool output while it indexes what was said first),
    ``scan.log`` (the stderr of a scan a search left running in the background), ``last-search.json`` (the first hit of the last ``voyager search``, which
    ``voyager resume -`` reopens), and the resident server's ``serve.sock`` (its socket),
    ``serve.lock`` (held while it runs: one server per data dir), ``serve.log`` (its
    stderr when detached) and ``watch-fence/`` (the file its file-system watcher touches to
    know it has seen every change made before a refresh).
    """

    __slots__ = ("root",)

    def __init__(self, root: Path | str) -> None:
        self.root = Path(root)

    def __repr__(self) -> str:
        return f"DataDir({str(self.root)!r})"

    def __fspath__(self) -> str:
        return str(self.root)

    @property
    def index(self) -> Path:
        return self.root / "index"

    @property
    def watch_fence(self) -> Path:
        return self.root / "watch-fence"

    @property
    def state_db(self) -> Path:
        return self.root / "state.db"

    @property
    def checkpoints_db(self) -> Path:
        return self.root / "checkpoints.db"

    @property
    def meaning_db(self) -> Path:
        return self.root / "meaning.db"

    @property
    def handoffs(self) -> Path:
        return self.root / "checkpoints"

    @property
    def lock(self) -> Path:
        return self.root / "scan.lock"

    @property
    def spool(self) -> Path:
        return self.root / "scan-spool"

    @property
    def scan_log(self) -> Path:
        return self.root / "scan.log"

    @property
    def socket(self) -> Path:
        return self.root / "serve.sock"

    @property
    def last_search(self) -> Path:
        return self.root / "last-search.json"

    @property
    def serve_lock(self) -> Path:
        return self.root / "serve.lock"

    @property
    def serve_log(self) -> Path:
        return self.root / "serve.log"

    def has_index(self) -> bool:
        """True once a scan has written an index and its state (what every reading command needs)."""
        return (self.index / "meta.json").exists() and self.state_db.exists()


def open_private(path: Path, flags: int) -> int:
    """A descriptor of one of the data dir's own files (created 0600 when ``flags`` say ``O_CREAT``).

    A file that cannot be opened (a directory in its place, a read-only or full disk) is a
    one-line error naming it, never an internal error: it is the data dir, not a bug.
    """
    try:
        return os.open(path, flags, 0o600)
    except OSError as exc:
        from voyager_sessions.core.errors import DiskFull, UserError, no_space

        if no_space(exc):
            raise DiskFull.at(path) from None
        raise UserError(f"cannot open {path}: {exc.strerror or exc}") from None


#: Below this much free space a write error is taken for a full disk (a WAL frame, a page of
#: ``-shm``, a segment's first block and the filesystem's own metadata need more than that).
LOW_SPACE_BYTES = 1 << 20


def free_bytes(path: Path) -> int:
    """Bytes this process may still write on the file system holding ``path`` (huge if unknown)."""
    for candidate in (path, *path.parents):
        try:
            st = os.statvfs(candidate)
        except OSError:
            continue
        # Root may use the blocks reserved for it; everyone else only the available ones.
        return (st.f_bfree if os.geteuid() == 0 else st.f_bavail) * st.f_frsize
    return 1 << 62


_warned: set[str] = set()


def ensure_private_dir(path: Path) -> Path:
    """Make ``path`` ready to hold Voyager's private data, never changing a directory Voyager did not create.

    A directory Voyager creates is 0700. An existing one is used as it is: one that others
    can read is used with a warning (once per process) naming its mode; one that others can
    write into (``/tmp`` and other shared, world-writable directories) is refused with a
    ``UserError``, because anyone could then plant or swap the index, the state or the socket.
    """
    try:
        st = os.stat(path)
    except FileNotFoundError:
        if path.parent != path:
            path.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.mkdir(path, 0o700)
        except FileExistsError:  # another process made it meanwhile: judge it below
            st = os.stat(path)
        else:
            os.chmod(path, 0o700)  # the umask may have narrowed it further, never widened: be exact
            return path
    if not stat.S_ISDIR(st.st_mode):
        from voyager_sessions.core.errors import UserError

        raise UserError(f"{path} is not a directory: point VOYAGER_HOME at a directory of your own")
    mode = stat.S_IMODE(st.st_mode)
    if mode & 0o022:
        from voyager_sessions.core.errors import UserError

        raise UserError(
            f"refusing to keep Voyager's data in {path}: others can write into it (mode {mode:04o}); "
            "point VOYAGER_HOME at a directory of your own"
        )
    if mode & 0o044 and str(path) not in _warned:
        _warned.add(str(path))
        sys.stderr.write(
            f"voyager: warning: {path} is readable by others (mode {mode:04o}); the index holds your "
            f"conversations: `chmod 700 {shlex.quote(str(path))}` makes it private\n"
        )
    return path


def resolve_home(entries: Sequence[tuple[str, str]], env: Env | None = None) -> Path | None:
    """The place ``entries`` name: the first ``(variable, path below it)`` whose variable is set.

    ``HOME`` is always set, so an entry ``("HOME", sub)`` is the default; None when none of the
    variables is set (only for places without a ``HOME`` entry). Which agent lives where is the
    agent manifest's business (``voyager_sessions.ingest.manifest``: each row's ``homes``); this is
    only the rule that turns one of its entries into a path.
    """
    e = _env(env)
    for var, sub in entries:
        value = home(e) if var == "HOME" else e.get(var)
        if value:
            base = Path(value).expanduser()
            return base / sub if sub else base
    return None


#: VS Code and the forks whose user dirs extensions keep their data in, by the app's folder name.
VSCODE_APPS: tuple[str, ...] = ("Code", "Code - Insiders", "VSCodium", "Cursor")


def vscode_user_dirs(
    env: Env | None = None, apps: str | Sequence[str] = VSCODE_APPS, *, platform: str | None = None
) -> list[Path]:
    """The ``User`` dir of each VS Code-family app in ``apps`` (existing or not), in ``apps`` order.

    An extension's global data lives in ``<User>/globalStorage/<publisher.extension>/`` and a
    workspace's in ``<User>/workspaceStorage/<hash>/``. Where the app keeps ``User``:
    Linux and the BSDs ``$XDG_CONFIG_HOME/<App>/User``, else ``~/.config/<App>/User``; macOS
    ``~/Library/Application Support/<App>/User``; Windows ``%APPDATA%\\<App>\\User``. Shared by every
    adapter that reads an editor extension's store (Cline, Roo Code, Cursor, Copilot Chat, …).
    """
    return [app / "User" for app in app_dirs(env, apps, platform=platform)]


def app_dirs(
    env: Env | None = None, apps: str | Sequence[str] = VSCODE_APPS, *, platform: str | None = None
) -> list[Path]:
    """The user-data dir of each desktop (Electron) app in ``apps`` (existing or not), in ``apps`` order.

    Linux and the BSDs ``$XDG_CONFIG_HOME/<App>``, else ``~/.config/<App>``; macOS
    ``~/Library/Application Support/<App>``; Windows ``%APPDATA%\\<App>``: where VS Code and its forks
    keep ``User/``, and where Claude Desktop, Kimi's desktop app and the like keep their data.
    """
    e = _env(env)
    if isinstance(apps, str):  # one app by name: ``app_dirs(env, "Claude")``
        apps = (apps,)
    plat = sys.platform if platform is None else platform
    if plat == "darwin":
        base = home(e) / "Library" / "Application Support"
    elif plat.startswith("win"):
        base = Path(e["APPDATA"]) if e.get("APPDATA") else home(e) / "AppData" / "Roaming"
    else:
        base = Path(e["XDG_CONFIG_HOME"]).expanduser() if e.get("XDG_CONFIG_HOME") else home(e) / ".config"
    return [base / app for app in apps]


def vscode_extension_dirs(extension: str, env: Env | None = None, apps: Sequence[str] = VSCODE_APPS) -> list[Path]:
    """``<User>/globalStorage/<extension>`` for every VS Code-family app (``extension`` = ``publisher.name``, lower case)."""
    return [user / "globalStorage" / extension for user in vscode_user_dirs(env, apps)]
