"""``voyager mcp install AGENT`` / ``uninstall AGENT``: register ``voyager mcp`` in an agent's own MCP config.

Which agents, where each keeps its MCP server list and in what shape (Claude Code, Codex, Gemini CLI,
Qwen Code, OpenCode 1.x and 2.x, Cursor, Copilot CLI, Windsurf) are rows of the agent manifest, read
through the API (:func:`voyager_sessions.api.agents.mcp_agents`); the edit itself is
:mod:`voyager_sessions.mcp.configs`. The rules this module keeps:

* the entry runs the absolute path of the installed ``voyager`` with the environment
  that locates Voyager's data (``VOYAGER_HOME`` resolved to an absolute dir, and every
  agent-location variable set now): Codex, for one, passes a server only a short list
  of variables, and every agent must see the same data dir;
* nothing else in the file changes, and the result is parsed again and compared with what was meant
  before it replaces the file (:mod:`~voyager_sessions.mcp.configs` refuses, in one line, what it cannot
  edit safely); the file is replaced atomically, its mode kept, a backup of the previous one left beside it;
* a file the user cannot write (read-only, or not theirs to write) is never replaced: that is said, and
  nothing changes;
* it is idempotent: a file that already says what would be written is not touched.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from voyager_sessions.core.errors import UserError
from voyager_sessions.mcp import configs

SERVER_NAME = "voyager"
BACKUP_SUFFIX = ".voyager-backup"


@dataclass(frozen=True)
class Agent:
    """An agent ``voyager mcp install`` registers with: its manifest row's name, label and MCP facts."""

    name: str
    title: str
    mcp: Any  # the manifest's ``Mcp`` (voyager_sessions.api.agents)

    @property
    def fmt(self) -> str:
        return str(self.mcp.format)

    @property
    def doc(self) -> str:
        return str(self.mcp.doc)


def agents() -> dict[str, Agent]:
    """Provider name -> agent, for every agent the manifest gives an MCP config."""
    from voyager_sessions.api.agents import mcp_agents

    return {name: Agent(name, a.label, a.mcp) for name, a in mcp_agents().items()}


def agent(name: str) -> Agent:
    known = agents()
    key = name.lower()
    for a in known.values():
        if key in a.mcp.aliases:
            key = a.name
    if key not in known:
        raise UserError(f"unknown agent '{name}': one of {', '.join(known)}")
    return known[key]


# -- what to run ------------------------------------------------------------------------


def command(argv0: str | None = None) -> list[str]:
    """The absolute command that starts ``voyager mcp`` as installed (the console script, else ``python -m``)."""
    argv0 = sys.argv[0] if argv0 is None else argv0
    if argv0 and Path(argv0).name == "voyager" and Path(argv0).exists():
        return [os.path.abspath(argv0), "mcp"]  # the script's own path, not a symlink's target: stable across upgrades
    python_m = [os.path.abspath(sys.executable), "-m", "voyager_sessions", "mcp"]
    if argv0 and Path(argv0).name == "__main__.py":
        return python_m  # `python -m voyager_sessions`: this interpreter's install, not whatever PATH finds
    found = shutil.which("voyager")
    if found:
        return [os.path.abspath(found), "mcp"]
    return python_m


def server_env(environ: Mapping[str, str]) -> dict[str, str]:
    """The variables a registered server needs: where Voyager's data is, and where every agent keeps its sessions."""
    from voyager_sessions.api import agent_variables
    from voyager_sessions.core.paths import data_dir

    env = {"VOYAGER_HOME": os.path.abspath(data_dir(environ))}
    for var in sorted(set(agent_variables()) - {"HOME", "VOYAGER_HOME"}):
        value = environ.get(var)
        if value:
            # Each path made absolute (a variable may hold several, VOYAGER_AIDER_ROOTS does): the agent
            # starts the server in a directory of its own choosing.
            parts = (os.path.abspath(os.path.expanduser(p)) for p in value.split(os.pathsep) if p)
            env[var] = os.pathsep.join(parts)
    return env


# -- where and what ---------------------------------------------------------------------


def config_path(a: Agent, environ: Mapping[str, str]) -> Path:
    """Where agent ``a`` keeps its MCP config (the manifest's entries: the first variable set wins)."""
    from voyager_sessions.core.paths import resolve_home

    found = resolve_home(a.mcp.config, environ)
    assert found is not None  # every config's entries end with HOME
    sibling = found.with_suffix(".jsonc")
    if a.mcp.jsonc_sibling and not found.exists() and sibling.exists():
        return sibling  # the one the user keeps (OpenCode reads both)
    return found


def entry(a: Agent, cmd: list[str], env: dict[str, str]) -> dict[str, Any]:
    """The server's entry in agent ``a``'s own vocabulary (the manifest's ``Mcp.entry``)."""
    shape = a.mcp.entry
    if shape == "opencode":
        return {"type": "local", "command": cmd, "enabled": True, "environment": env}
    base: dict[str, Any] = {"command": cmd[0], "args": cmd[1:], "env": env}
    if shape == "claude":
        return {"type": "stdio", **base}
    if shape == "copilot":
        return {"type": "local", **base, "tools": ["*"]}
    if shape == "codex":
        # Codex gives an optional server about a second to start, then goes on without its tools.
        return {"command": cmd[0], "args": cmd[1:], "required": True, "env": env}
    return base


def container(a: Agent, text: str | None) -> list[str]:
    """The keys down to agent ``a``'s server list in this file (OpenCode 2.x nests them under ``mcp.servers``)."""
    nested = list(a.mcp.servers_nested)
    if nested and text:
        try:
            node: Any = configs.parse_json(text, comments=_comments(a)).value
        except ValueError:
            node = None
        for k in nested:
            node = node.get(k) if isinstance(node, dict) else None
        if isinstance(node, dict):
            return nested
    return list(a.mcp.servers)


def _comments(a: Agent) -> bool:
    """Whether the agent reads ``//`` and ``/* */`` comments in its JSON config (and so may keep them)."""
    return bool(a.mcp.format == "jsonc")


# -- the operations -----------------------------------------------------------------------


@dataclass
class Plan:
    path: Path
    old: str | None  # None: the file does not exist
    new: str | None  # None: remove the file's entry left nothing to do
    entry_text: str  # what the entry is, as written

    @property
    def changes(self) -> bool:
        return self.new is not None and self.new != self.old


def plan_install(name: str, environ: Mapping[str, str], argv0: str | None = None) -> Plan:
    a = agent(name)
    path = config_path(a, environ)
    old = _read(path)
    cmd, env = command(argv0), server_env(environ)
    value = entry(a, cmd, env)
    keys = [*container(a, old), SERVER_NAME]
    if a.fmt == "toml":
        block = toml_block(keys, value)
        return Plan(path, old, _edit(path, lambda: configs.toml_set(old or "", keys, value, block)), block)
    new = _edit(path, lambda: configs.json_set(old, keys, value, comments=_comments(a)))
    return Plan(path, old, new, json.dumps({SERVER_NAME: value}, indent=2, ensure_ascii=False))


def plan_uninstall(name: str, environ: Mapping[str, str]) -> Plan:
    a = agent(name)
    path = config_path(a, environ)
    old = _read(path)
    if old is None:
        return Plan(path, None, None, "")
    keys = [*container(a, old), SERVER_NAME]
    if a.fmt == "toml":
        return Plan(path, old, _edit(path, lambda: configs.toml_remove(old, keys)), "")
    return Plan(path, old, _edit(path, lambda: configs.json_remove(old, keys, comments=_comments(a))), "")


def _edit(path: Path, run: Any) -> str:
    try:
        return str(run())
    except configs.Unsafe as exc:
        raise UserError(f"{path} {exc}; nothing changed") from None


def apply(plan: Plan) -> Path | None:
    """Write ``plan`` (atomically, keeping the file's mode); the backup's path, None when nothing changed."""
    if not plan.changes:
        return None
    assert plan.new is not None
    # A config kept elsewhere and linked (dotfiles) is edited where it lives: the link stays a link.
    path = plan.path.resolve() if plan.path.is_symlink() else plan.path
    mode = 0o600
    if plan.old is not None:
        mode = path.stat().st_mode & 0o777
        _writable(path, mode)
    try:
        data = plan.new.encode("utf-8")  # before anything is created: a path that is not text creates nothing
        path.parent.mkdir(parents=True, exist_ok=True)
    except UnicodeEncodeError:
        raise UserError(
            f"cannot write {path}: a path in the entry is not valid text (UTF-8); nothing changed"
        ) from None
    except OSError as exc:
        raise UserError(f"cannot write {path}: {exc.strerror or exc}; nothing changed") from None
    backup = None
    tmp = path.with_name(f".{path.name}.voyager-{os.getpid()}")
    try:
        if plan.old is not None:
            backup = path.with_name(path.name + BACKUP_SUFFIX)
            shutil.copy2(path, backup)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise UserError(f"cannot write {path}: {exc.strerror or exc}; nothing changed") from None
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return backup or path


def _writable(path: Path, mode: int) -> None:
    """Refuse to replace a config its owner has made read-only, or one this user may not write.

    Replacing a file needs only its folder to be writable, so the file's own permission is checked: a
    read-only settings file says "leave me alone" (root too is held to it: ``os.access`` says yes to root)."""
    if not mode & stat.S_IWUSR or not os.access(path, os.W_OK):
        raise UserError(
            f"{path} is read-only (mode {mode:04o}): make it writable to register voyager, or add the "
            "entry by hand (--print shows it); nothing changed"
        )


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except UnicodeDecodeError:
        raise UserError(f"cannot read {path}: it is not UTF-8 text; nothing changed") from None
    except OSError as exc:
        raise UserError(f"cannot read {path}: {exc.strerror or exc}; nothing changed") from None


# -- TOML's entry (Codex) -----------------------------------------------------------------------


def _toml_str(value: str) -> str:
    # JSON's escapes are TOML basic-string escapes, once non-ASCII stays literal (no surrogate pairs) and DEL is escaped.
    return json.dumps(value, ensure_ascii=False).replace("\x7f", "\\u007F")


def toml_block(keys: list[str], value: dict[str, Any]) -> str:
    """The entry as TOML tables (``[mcp_servers.voyager]`` and its ``env``), as appended to a config."""
    name = ".".join(keys)
    lines = [f"[{name}]"]
    subtables = []
    for key, v in value.items():
        if isinstance(v, dict):
            subtables.append((key, v))
        elif isinstance(v, bool):
            lines.append(f"{key} = {'true' if v else 'false'}")
        elif isinstance(v, list):
            lines.append(f"{key} = [" + ", ".join(_toml_str(x) for x in v) + "]")
        else:
            lines.append(f"{key} = {_toml_str(v)}")
    for key, sub in subtables:
        lines += ["", f"[{name}.{key}]"]
        lines += [f"{_toml_key(k)} = {_toml_str(v)}" for k, v in sub.items()]
    return "\n".join(lines) + "\n"


def _toml_key(key: str) -> str:
    return key if key and all(c.isalnum() or c in "_-" for c in key) and key.isascii() else _toml_str(key)
