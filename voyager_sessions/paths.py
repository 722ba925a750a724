"""Where things live: Voyager's private data dir and each agent's session store.

Every location is derived from an environment mapping (``os.environ`` by default) so
tests and the demo can point Voyager at a fake HOME without touching the real one.
For each agent, ``VOYAGER_<AGENT>_…`` is an explicit override and is authoritative
when set (no other place is probed); then the agent's own variable; then its default.
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
    """Voyager's data dir: ``VOYAGER_HOME``, else ``$XDG_DATA_HOME/voyager``, else ``~/.local/share/voyager``."""
    e = _env(env)
    if e.get("VOYAGER_HOME"):
        return Path(e["VOYAGER_HOME"]).expanduser()
    if e.get("XDG_DATA_HOME"):
        return Path(e["XDG_DATA_HOME"]).expanduser() / "voyager"
    return home(e) / ".local" / "share" / "voyager"


class DataDir:
    """The one owner of the data dir's layout: every file Voyager keeps is named here and nowhere else.

    ``index/`` (Tantivy), ``state.db`` (scan state and sessions), ``checkpoints.db``
    (checkpoints: not derived from the sources, so never reset with the index),
    ``checkpoints/`` (Markdown hand-offs, derived output), ``scan.lock`` (the one-writer
    lock), ``last-search.json`` (the first hit of the last ``voyager search``, which
    ``voyager resume -`` reopens), and the resident server's ``serve.sock`` (its socket),
    ``serve.lock`` (held while it runs: one server per data dir) and ``serve.log`` (its
    stderr when detached).
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
    def state_db(self) -> Path:
        return self.root / "state.db"

    @property
    def checkpoints_db(self) -> Path:
        return self.root / "checkpoints.db"

    @property
    def handoffs(self) -> Path:
        return self.root / "checkpoints"

    @property
    def lock(self) -> Path:
        return self.root / "scan.lock"

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
        from voyager_sessions.errors import DiskFull, UserError, no_space

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
        from voyager_sessions.errors import UserError

        raise UserError(f"{path} is not a directory: point VOYAGER_HOME at a directory of your own")
    mode = stat.S_IMODE(st.st_mode)
    if mode & 0o022:
        from voyager_sessions.errors import UserError

        raise UserError(f"refusing to keep Voyager's data in {path}: others can write into it (mode {mode:04o}); "
                        "point VOYAGER_HOME at a directory of your own")
    if mode & 0o044 and str(path) not in _warned:
        _warned.add(str(path))
        sys.stderr.write(f"voyager: warning: {path} is readable by others (mode {mode:04o}); the index holds your "
                         f"conversations: `chmod 700 {shlex.quote(str(path))}` makes it private\n")
    return path


#: Where each agent keeps its sessions: for each *home* (an agent, or one surface of an agent
#: that has several), the variables that name it, in order, each with the path below it.
#: The first variable that is set wins; ``HOME`` is always set, so the last entry is the
#: default. Every home's first variable is Voyager's own override (``VOYAGER_<…>``): when it
#: is set it is authoritative, nothing else is probed for that home. Adapters, the tests'
#: fake HOME and the bench all read this one table (see ``docs/agents.md``).
AGENT_HOMES: dict[str, tuple[tuple[str, str], ...]] = {
    "claude": (("VOYAGER_CLAUDE_HOME", ""), ("CLAUDE_CONFIG_DIR", ""), ("HOME", ".claude")),
    "codex": (("VOYAGER_CODEX_HOME", ""), ("CODEX_HOME", ""), ("HOME", ".codex")),
    "opencode": (("VOYAGER_OPENCODE_HOME", ""), ("XDG_DATA_HOME", "opencode"), ("HOME", ".local/share/opencode")),
    # A database named outright: authoritative, no directory is probed (an empty path means "not named").
    "opencode.db": (("VOYAGER_OPENCODE_DB", ""), ("OPENCODE_DB", "")),
    # Pi's agent dir (sessions in ``sessions/`` below it); PI_CODING_AGENT_SESSION_DIR names the
    # sessions dir itself and is read beside it unless VOYAGER_PI_HOME is set.
    "pi": (("VOYAGER_PI_HOME", ""), ("PI_CODING_AGENT_DIR", ""), ("HOME", ".pi/agent")),
    "pi.sessions": (("PI_CODING_AGENT_SESSION_DIR", ""),),
    # Oh My Pi, a fork of Pi writing the same session format under its own agent dir.
    "omp": (("VOYAGER_OMP_HOME", ""), ("OMP_CODING_AGENT_DIR", ""), ("HOME", ".omp/agent")),
    # Kimi CLI (the Python CLI, up to 1.x) keeps everything in its "share dir".
    "kimi": (("VOYAGER_KIMI_HOME", ""), ("KIMI_SHARE_DIR", ""), ("HOME", ".kimi")),
    # Kimi Code, the CLI that replaced it.
    "kimi.code": (("VOYAGER_KIMI_CODE_HOME", ""), ("KIMI_CODE_HOME", ""), ("HOME", ".kimi-code")),
    "hermes": (("VOYAGER_HERMES_HOME", ""), ("HERMES_HOME", ""), ("HOME", ".hermes")),
    # The `.gemini` dir itself; GEMINI_CLI_HOME replaces HOME for Gemini CLI (it keeps `.gemini` below it).
    "gemini": (("VOYAGER_GEMINI_HOME", ""), ("GEMINI_CLI_HOME", ".gemini"), ("HOME", ".gemini")),
    # Qwen Code keeps `projects/` under its runtime dir, which defaults to its config dir (`QWEN_HOME`).
    "qwen": (("VOYAGER_QWEN_HOME", ""), ("QWEN_RUNTIME_DIR", ""), ("QWEN_HOME", ""), ("HOME", ".qwen")),
    # Cursor CLI's home (chats/, projects/*/agent-transcripts/); CURSOR_CONFIG_DIR moves the CLI's
    # config dir (Cursor's CLI docs; deja-vu reads its chats there too: *verify*).
    "cursor": (("VOYAGER_CURSOR_HOME", ""), ("CURSOR_CONFIG_DIR", ""), ("HOME", ".cursor")),
    # VS Code-style user dirs (``…/<App>/User``): only Voyager's override here; unset, the
    # adapter probes ``vscode_user_dirs(env, app)`` (the default differs by platform).
    "cursor.app": (("VOYAGER_CURSOR_APP_DIR", ""),),
    "copilot-vscode.app": (("VOYAGER_COPILOT_VSCODE_HOME", ""),),
    # Windsurf's own home (cascade/), and its editor's user dir.
    "windsurf": (("VOYAGER_WINDSURF_HOME", ""), ("HOME", ".codeium/windsurf")),
    "windsurf.app": (("VOYAGER_WINDSURF_APP_DIR", ""),),
    # GitHub Copilot CLI moves its whole config dir with COPILOT_HOME (as --config-dir does).
    "copilot": (("VOYAGER_COPILOT_HOME", ""), ("COPILOT_HOME", ""), ("HOME", ".copilot")),
    # Factory documents no variable that moves ~/.factory (FACTORY_API_KEY is a key, not a place).
    "droid": (("VOYAGER_DROID_HOME", ""), ("HOME", ".factory")),
    # Mistral Vibe's home (``VIBE_HOME``, else ~/.vibe); sessions live in its logs/session/.
    "vibe": (("VOYAGER_VIBE_HOME", ""), ("VIBE_HOME", ""), ("HOME", ".vibe")),
    # OpenHands' persistence dir (OpenHands CLI: ``OPENHANDS_PERSISTENCE_DIR``, else ~/.openhands):
    # V0 sessions live in its sessions/ ...
    "openhands": (("VOYAGER_OPENHANDS_HOME", ""), ("OPENHANDS_PERSISTENCE_DIR", ""), ("HOME", ".openhands")),
    # ... and V1 conversations in its conversations/, which ``OPENHANDS_CONVERSATIONS_DIR`` can move.
    "openhands.conversations": (("VOYAGER_OPENHANDS_HOME", "conversations"), ("OPENHANDS_CONVERSATIONS_DIR", ""),
                                ("OPENHANDS_PERSISTENCE_DIR", "conversations"), ("HOME", ".openhands/conversations")),
    # Aider keeps its history in each project: this is the directory searched with its children
    # (see ingest/adapters/aider.py for the other places: known cwds, VOYAGER_AIDER_ROOTS).
    "aider": (("VOYAGER_AIDER_HOME", ""), ("HOME", "")),
    # The Cline CLI's data dir (sessions/, db/); CLINE_DIR is the config dir that holds data/.
    "cline": (("VOYAGER_CLINE_HOME", ""), ("CLINE_DATA_DIR", ""), ("CLINE_DIR", "data"), ("HOME", ".cline/data")),
    # CLINE_SESSION_DATA_DIR moves sessions/ out of the data dir (unset: <cline>/sessions).
    "cline.sessions": (("CLINE_SESSION_DATA_DIR", ""),),
    # The VS Code extension's storage dir (globalStorage/saoudrizwan.claude-dev) named outright;
    # unset: that folder under every VS Code-family user dir (vscode_user_dirs).
    "cline.vscode": (("VOYAGER_CLINE_VSCODE_HOME", ""),),
    # Roo Code's storage dir (globalStorage/rooveterinaryinc.roo-cline), likewise.
    "roo": (("VOYAGER_ROO_HOME", ""),),
    # Kilo Code CLI, OpenCode's fork: the same layout in its own data dir (kilo.db).
    "kilo": (("VOYAGER_KILO_HOME", ""), ("XDG_DATA_HOME", "kilo"), ("HOME", ".local/share/kilo")),
    "kilo.db": (("VOYAGER_KILO_DB", ""),),
    # DeepSeek Harness: its own DSH_HOME, then the other roots its PyPI companion probes. With
    # VOYAGER_DSH_HOME set every entry names the same directory (the override is authoritative).
    "dsh": (("VOYAGER_DSH_HOME", "sessions"), ("DSH_HOME", "sessions"), ("HOME", ".dsh/sessions")),
    "dsh.alt": (("VOYAGER_DSH_HOME", "sessions"), ("HOME", ".deepseek-harness/sessions")),
    "dsh.config": (("VOYAGER_DSH_HOME", "sessions"), ("XDG_CONFIG_HOME", "dsh/sessions"), ("HOME", ".config/dsh/sessions")),
    # Zed's data dir on Linux (Flatpak first, as Zed itself does), then macOS's.
    "zed": (("VOYAGER_ZED_HOME", ""), ("FLATPAK_XDG_DATA_HOME", "zed"), ("XDG_DATA_HOME", "zed"), ("HOME", ".local/share/zed")),
    "zed.mac": (("VOYAGER_ZED_HOME", ""), ("HOME", "Library/Application Support/Zed")),
    # Goose: the directory of sessions.db (and legacy *.jsonl); GOOSE_PATH_ROOT is Goose's own root.
    "goose": (("VOYAGER_GOOSE_HOME", "sessions"), ("GOOSE_PATH_ROOT", "data/sessions"), ("XDG_DATA_HOME", "goose/sessions"),
              ("HOME", ".local/share/goose/sessions")),
    "goose.legacy": (("VOYAGER_GOOSE_HOME", "sessions"), ("HOME", ".goose/sessions")),
    # Crush: its global data dir (projects.json lists every project's data dir), then ~/.crush.
    "crush": (("VOYAGER_CRUSH_HOME", ""), ("CRUSH_GLOBAL_DATA", ""), ("XDG_DATA_HOME", "crush"), ("HOME", ".local/share/crush")),
    "crush.home": (("VOYAGER_CRUSH_HOME", ""), ("HOME", ".crush")),
    # Kiro has three homes and no variable of its own for any (none documented): ~/.kiro (the
    # CLI's JSONL sessions), the IDE's VS Code-style user dir (unset: vscode_user_dirs(env, "Kiro"),
    # and the macOS one beside it wherever Voyager runs), and kiro-cli's data dir (data.sqlite3).
    "kiro": (("VOYAGER_KIRO_HOME", ""), ("HOME", ".kiro")),
    "kiro.app": (("VOYAGER_KIRO_APP_DIR", ""),),
    "kiro.cli": (("VOYAGER_KIRO_CLI_HOME", ""), ("XDG_DATA_HOME", "kiro-cli"), ("HOME", ".local/share/kiro-cli")),
    # The folder holding Antigravity's ``antigravity*`` dirs (CLI, IDE, desktop); no variable of its own.
    "antigravity": (("VOYAGER_ANTIGRAVITY_HOME", ""), ("HOME", ".gemini")),
    "zcode": (("VOYAGER_ZCODE_HOME", ""), ("HOME", ".zcode")),
    # xAI's Grok Build; GROK_HOME relocates its whole tree (sessions/, grok.db).
    "grok": (("VOYAGER_GROK_HOME", ""), ("GROK_HOME", ""), ("HOME", ".grok")),
    # gptme's logs dir (one folder a conversation); GPTME_LOGS_HOME moves it, else XDG's data dir.
    "gptme": (("VOYAGER_GPTME_HOME", ""), ("GPTME_LOGS_HOME", ""), ("XDG_DATA_HOME", "gptme/logs"),
              ("HOME", ".local/share/gptme/logs")),
    "gptme.mac": (("VOYAGER_GPTME_HOME", ""), ("HOME", "Library/Application Support/gptme/logs")),
    # Continue's global dir (sessions/ below it), shared by the CLI (cn) and the IDE extensions.
    "continue": (("VOYAGER_CONTINUE_HOME", ""), ("CONTINUE_GLOBAL_DIR", ""), ("HOME", ".continue")),
    # Nanocoder's data dir (sessions/ below it): NANOCODER_DATA_DIR, else XDG's data dir; then macOS's.
    "nanocoder": (("VOYAGER_NANOCODER_HOME", ""), ("NANOCODER_DATA_DIR", ""), ("XDG_DATA_HOME", "nanocoder"),
                  ("HOME", ".local/share/nanocoder")),
    "nanocoder.mac": (("VOYAGER_NANOCODER_HOME", ""), ("HOME", "Library/Application Support/nanocoder")),
}


def agent_home(name: str, env: Env | None = None) -> Path | None:
    """The directory (or file) of home ``name`` in ``AGENT_HOMES``: the first of its variables that is set.

    None when none of its variables is set (only for homes without a ``HOME`` default).
    """
    e = _env(env)
    for var, sub in AGENT_HOMES[name]:
        value = home(e) if var == "HOME" else e.get(var)
        if value:
            base = Path(value).expanduser()
            return base / sub if sub else base
    return None


#: Variables that steer where agents' sessions are found without naming a home (lists of roots,
#: a file name): adapters read them directly; tests clear them with the others.
AGENT_EXTRA_VARIABLES: tuple[str, ...] = ("VOYAGER_AIDER_ROOTS", "AIDER_CHAT_HISTORY_FILE")


def agent_variables() -> list[str]:
    """Every variable ``AGENT_HOMES`` reads but ``HOME``, and ``AGENT_EXTRA_VARIABLES`` (tests clear them all for a fake HOME)."""
    homes = {var for entries in AGENT_HOMES.values() for var, _ in entries if var != "HOME"}
    return sorted(homes | set(AGENT_EXTRA_VARIABLES))


#: VS Code and the forks whose user dirs extensions keep their data in, by the app's folder name.
VSCODE_APPS: tuple[str, ...] = ("Code", "Code - Insiders", "VSCodium", "Cursor")


def vscode_user_dirs(env: Env | None = None, apps: str | Sequence[str] = VSCODE_APPS, *,
                     platform: str | None = None) -> list[Path]:
    """The ``User`` dir of each VS Code-family app in ``apps`` (existing or not), in ``apps`` order.

    An extension's global data lives in ``<User>/globalStorage/<publisher.extension>/`` and a
    workspace's in ``<User>/workspaceStorage/<hash>/``. Where the app keeps ``User``:
    Linux and the BSDs ``$XDG_CONFIG_HOME/<App>/User``, else ``~/.config/<App>/User``; macOS
    ``~/Library/Application Support/<App>/User``; Windows ``%APPDATA%\\<App>\\User``. Shared by every
    adapter that reads an editor extension's store (Cline, Roo Code, Cursor, Copilot Chat, …).
    """
    e = _env(env)
    if isinstance(apps, str):  # one app by name: ``vscode_user_dirs(env, "Cursor")``
        apps = (apps,)
    plat = sys.platform if platform is None else platform
    if plat == "darwin":
        base = home(e) / "Library" / "Application Support"
    elif plat.startswith("win"):
        base = Path(e["APPDATA"]) if e.get("APPDATA") else home(e) / "AppData" / "Roaming"
    else:
        base = Path(e["XDG_CONFIG_HOME"]).expanduser() if e.get("XDG_CONFIG_HOME") else home(e) / ".config"
    return [base / app / "User" for app in apps]


def vscode_extension_dirs(extension: str, env: Env | None = None, apps: Sequence[str] = VSCODE_APPS) -> list[Path]:
    """``<User>/globalStorage/<extension>`` for every VS Code-family app (``extension`` = ``publisher.name``, lower case)."""
    return [user / "globalStorage" / extension for user in vscode_user_dirs(env, apps)]
