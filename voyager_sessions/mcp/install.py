"""``voyager mcp install AGENT`` / ``uninstall AGENT``: register ``voyager mcp`` in an agent's own MCP config.

This module owns the knowledge of where each agent keeps its MCP server list and in
what shape (Claude Code, Codex, Gemini CLI, Qwen Code, OpenCode 1.x and 2.x, Cursor,
Copilot CLI, Windsurf), and the edit itself. The rules it keeps:

* the entry runs the absolute path of the installed ``voyager`` with the environment
  that locates Voyager's data (``VOYAGER_HOME`` resolved to an absolute dir, and every
  agent-location variable set now): Codex, for one, passes a server only a short list
  of variables, and every agent must see the same data dir;
* nothing else in the file changes: the edit is textual (the member's value is replaced,
  inserted or removed; every other byte stays), so key order, comments in TOML and
  formatting survive; a backup of the previous file is left beside it;
* it is idempotent: a file that already says what would be written is not touched.

JSON is edited through the spans :func:`json.JSONDecoder.raw_decode` gives; TOML (Codex)
as lines, since the standard library has no TOML writer.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from voyager_sessions.core.errors import UserError

SERVER_NAME = "voyager"
BACKUP_SUFFIX = ".voyager-backup"


@dataclass(frozen=True)
class Agent:
    name: str
    title: str
    fmt: str  # "json" or "toml"
    doc: str  # where the format is documented, for the README and --print


AGENTS: dict[str, Agent] = {
    a.name: a
    for a in (
        Agent("claude", "Claude Code", "json", "~/.claude.json mcpServers (user scope; CLAUDE_CONFIG_DIR moves it)"),
        Agent("codex", "Codex", "toml", "~/.codex/config.toml [mcp_servers.voyager] (CODEX_HOME moves it)"),
        Agent("gemini", "Gemini CLI", "json", "~/.gemini/settings.json mcpServers (GEMINI_CLI_HOME moves it)"),
        Agent("qwen", "Qwen Code", "json", "~/.qwen/settings.json mcpServers"),
        Agent(
            "opencode",
            "OpenCode",
            "json",
            "~/.config/opencode/opencode.json mcp (1.x) or mcp.servers (2.x); XDG_CONFIG_HOME moves it",
        ),
        Agent("cursor", "Cursor", "json", "~/.cursor/mcp.json mcpServers"),
        Agent("copilot", "Copilot CLI", "json", "~/.copilot/mcp-config.json mcpServers (COPILOT_HOME moves it)"),
        Agent("windsurf", "Windsurf", "json", "~/.codeium/windsurf/mcp_config.json mcpServers"),
    )
}

ALIASES = {
    "claude-code": "claude",
    "gemini-cli": "gemini",
    "qwen-code": "qwen",
    "copilot-cli": "copilot",
    "cursor-agent": "cursor",
    "codex-cli": "codex",
}


def agent(name: str) -> Agent:
    key = ALIASES.get(name.lower(), name.lower())
    if key not in AGENTS:
        raise UserError(f"unknown agent '{name}': one of {', '.join(AGENTS)}")
    return AGENTS[key]


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
    from voyager_sessions.core.paths import home

    h = home(environ)
    e = environ.get
    if a.name == "claude":
        return Path(e("CLAUDE_CONFIG_DIR") or h) / ".claude.json"
    if a.name == "codex":
        return Path(e("CODEX_HOME") or h / ".codex") / "config.toml"
    if a.name == "gemini":
        return Path(e("GEMINI_CLI_HOME") or h) / ".gemini" / "settings.json"
    if a.name == "qwen":
        return Path(e("QWEN_HOME") or h / ".qwen") / "settings.json"
    if a.name == "opencode":
        return Path(e("XDG_CONFIG_HOME") or h / ".config") / "opencode" / "opencode.json"
    if a.name == "cursor":
        return h / ".cursor" / "mcp.json"
    if a.name == "copilot":
        return Path(e("COPILOT_HOME") or h / ".copilot") / "mcp-config.json"
    return h / ".codeium" / "windsurf" / "mcp_config.json"


def entry(a: Agent, cmd: list[str], env: dict[str, str]) -> dict[str, Any]:
    """The server's entry in agent ``a``'s own vocabulary."""
    if a.name == "opencode":
        return {"type": "local", "command": cmd, "enabled": True, "environment": env}
    base: dict[str, Any] = {"command": cmd[0], "args": cmd[1:], "env": env}
    if a.name == "claude":
        return {"type": "stdio", **base}
    if a.name == "copilot":
        return {"type": "local", **base, "tools": ["*"]}
    return base


def container(a: Agent, text: str | None) -> list[str]:
    """The keys under which agent ``a`` lists servers; OpenCode 2.x nests them under ``mcp.servers``."""
    if a.name != "opencode":
        return ["mcpServers"]
    if text:
        try:
            mcp = json.loads(text).get("mcp")
        except (ValueError, AttributeError):
            mcp = None
        if isinstance(mcp, dict) and isinstance(mcp.get("servers"), dict):
            return ["mcp", "servers"]
    return ["mcp"]


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
    old = _read(path, a)
    cmd, env = command(argv0), server_env(environ)
    value = entry(a, cmd, env)
    if a.fmt == "toml":
        block = toml_block(value)
        return Plan(path, old, toml_set(old or "", block), block)
    keys = [*container(a, old), SERVER_NAME]
    if old is None and a.name == "opencode" and path.with_suffix(".jsonc").exists():
        raise UserError(
            f"{path.with_suffix('.jsonc')} has comments Voyager will not rewrite: add "
            f'"mcp": {{"voyager": {json.dumps(value, ensure_ascii=False)}}} to it by hand'
        )
    return Plan(path, old, json_set(old, keys, value), json.dumps({SERVER_NAME: value}, indent=2, ensure_ascii=False))


def plan_uninstall(name: str, environ: Mapping[str, str]) -> Plan:
    a = agent(name)
    path = config_path(a, environ)
    old = _read(path, a)
    if old is None:
        return Plan(path, None, None, "")
    if a.fmt == "toml":
        return Plan(path, old, toml_remove(old), "")
    return Plan(path, old, json_remove(old, [*container(a, old), SERVER_NAME]), "")


def apply(plan: Plan) -> Path | None:
    """Write ``plan`` (atomically, keeping the file's mode); the backup's path, None when nothing changed."""
    if not plan.changes:
        return None
    assert plan.new is not None
    # A config kept elsewhere and linked (dotfiles) is edited where it lives: the link stays a link.
    path = plan.path.resolve() if plan.path.is_symlink() else plan.path
    path.parent.mkdir(parents=True, exist_ok=True)
    backup = None
    mode = 0o600
    if plan.old is not None:
        mode = path.stat().st_mode & 0o777
        backup = path.with_name(path.name + BACKUP_SUFFIX)
        shutil.copy2(path, backup)
    tmp = path.with_name(f".{path.name}.voyager-{os.getpid()}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            f.write(plan.new)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise UserError(f"cannot write {path}: {exc.strerror or exc}; nothing changed") from None
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return backup or path


def _read(path: Path, a: Agent) -> str | None:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"cannot read {path}: {exc}") from None
    if a.fmt == "json" and text.strip():
        try:
            doc = json.loads(text)
        except ValueError as exc:
            raise UserError(f"{path} is not valid JSON ({exc}); nothing changed") from None
        if not isinstance(doc, dict):
            raise UserError(f"{path} does not hold a JSON object; nothing changed")
    return text


# -- JSON, textually ----------------------------------------------------------------------

_WS = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()


@dataclass
class _Member:
    key: str
    start: int  # where the key's string starts
    value_start: int
    value_end: int


def _skip(text: str, pos: int) -> int:
    return _WS.match(text, pos).end()  # type: ignore[union-attr]


def _object(text: str, pos: int) -> tuple[list[_Member], int]:
    """The members of the object whose ``{`` is at ``pos``, and the position of its ``}``."""
    assert text[pos] == "{"
    members: list[_Member] = []
    pos = _skip(text, pos + 1)
    if text[pos] == "}":
        return members, pos
    while True:
        start = pos
        key, pos = _DECODER.raw_decode(text, pos)
        pos = _skip(text, pos)
        assert text[pos] == ":"
        value_start = _skip(text, pos + 1)
        _, value_end = _DECODER.raw_decode(text, value_start)
        members.append(_Member(key, start, value_start, value_end))
        pos = _skip(text, value_end)
        if text[pos] == "}":
            return members, pos
        assert text[pos] == ","
        pos = _skip(text, pos + 1)


def _indent_of(text: str, pos: int) -> str:
    line_start = text.rfind("\n", 0, pos) + 1
    lead = text[line_start:pos]
    return lead if not lead.strip() else ""


def _dump(value: Any, indent: str | None) -> str:
    """``value`` as JSON: indented from ``indent``, or on one line when the file is (``indent`` None)."""
    if indent is None:
        return json.dumps(value, ensure_ascii=False)
    return json.dumps(value, indent=2, ensure_ascii=False).replace("\n", "\n" + indent)


def json_set(text: str | None, keys: list[str], value: Any) -> str:
    """``text`` with the member at ``keys`` set to ``value``; every other byte unchanged."""
    if text is None or not text.strip():
        nested: Any = value
        for k in reversed(keys):
            nested = {k: nested}
        return json.dumps(nested, indent=2, ensure_ascii=False) + "\n"
    pos = _skip(text, 0)
    for depth, key in enumerate(keys):
        members, close = _object(text, pos)
        found = next((m for m in members if m.key == key), None)
        rest: Any = value
        for k in reversed(keys[depth + 1 :]):
            rest = {k: rest}
        if found is None:
            return _insert(text, pos, members, close, key, rest)
        if depth == len(keys) - 1 or text[found.value_start] != "{":
            indent = None if _one_line(text) else _indent_of(text, found.start)
            return text[: found.value_start] + _dump(rest, indent) + text[found.value_end :]
        pos = found.value_start
    raise AssertionError("unreachable")


def _one_line(text: str) -> bool:
    return "\n" not in text.strip()


def _insert(text: str, open_pos: int, members: list[_Member], close: int, key: str, value: Any) -> str:
    if _one_line(text):
        piece = f"{json.dumps(key)}: {_dump(value, None)}"
        if members:
            return text[: members[-1].value_end] + ", " + piece + text[members[-1].value_end :]
        return text[:open_pos] + "{" + piece + "}" + text[close + 1 :]
    if members:
        last = members[-1]
        indent = _indent_of(text, last.start)
        sep = ",\n" + indent if "\n" in text[open_pos : last.start] else ", "
        piece = f"{sep}{json.dumps(key)}: {_dump(value, indent)}"
        return text[: last.value_end] + piece + text[last.value_end :]
    outer = _indent_of(text, open_pos)
    inner = outer + "  "
    body = f"{{\n{inner}{json.dumps(key)}: {_dump(value, inner)}\n{outer}}}"
    return text[:open_pos] + body + text[close + 1 :]


def json_remove(text: str, keys: list[str]) -> str:
    """``text`` without the member at ``keys`` (unchanged when there is none)."""
    if not text.strip():
        return text
    pos = _skip(text, 0)
    for depth, key in enumerate(keys):
        members, close = _object(text, pos)
        idx = next((i for i, m in enumerate(members) if m.key == key), None)
        if idx is None:
            return text
        m = members[idx]
        if depth < len(keys) - 1:
            if text[m.value_start] != "{":
                return text
            pos = m.value_start
            continue
        if len(members) == 1:  # the list is empty again: written as an empty list is, `{}`
            return text[:pos] + "{}" + text[close + 1 :]
        if idx == 0:  # drop through the next member's start
            return text[: m.start] + text[members[1].start :]
        return text[: members[idx - 1].value_end] + text[m.value_end :]
    return text


# -- TOML, textually (Codex) ------------------------------------------------------------------

_HEADER = re.compile(r"^[ \t]*\[\[?[ \t]*([^\]\n]+?)[ \t]*\]\]?[ \t]*(#.*)?$")


def _table_name(raw: str) -> str:
    return ".".join(part.strip().strip('"').strip("'") for part in raw.split("."))


def _ours(name: str) -> bool:
    return name == f"mcp_servers.{SERVER_NAME}" or name.startswith(f"mcp_servers.{SERVER_NAME}.")


def _toml_str(value: str) -> str:
    # JSON's escapes are TOML basic-string escapes, once non-ASCII stays literal (no surrogate pairs) and DEL is escaped.
    return json.dumps(value, ensure_ascii=False).replace("\x7f", "\\u007F")


def toml_block(value: dict[str, Any]) -> str:
    lines = [
        f"[mcp_servers.{SERVER_NAME}]",
        f"command = {_toml_str(value['command'])}",
        "args = [" + ", ".join(_toml_str(a) for a in value["args"]) + "]",
        # Codex gives an optional server about a second to start, then goes on without its tools.
        "required = true",
    ]
    lines += ["", f"[mcp_servers.{SERVER_NAME}.env]"]
    lines += [f"{k} = {_toml_str(v)}" for k, v in value["env"].items()]
    return "\n".join(lines) + "\n"


def _is_value_line(line: str) -> bool:
    stripped = line.strip()
    return bool(stripped) and not stripped.startswith("#")


def _blocks(text: str) -> tuple[list[str], list[tuple[int, int]]]:
    """The lines of ``text`` and the [start, end) line spans of our tables.

    A span ends at its last key line: blank lines and comments before the next table
    belong to what follows.
    """
    lines = text.splitlines(keepends=True)
    spans: list[tuple[int, int]] = []
    start: int | None = None

    def close(end: int) -> None:
        assert start is not None
        while end > start + 1 and not _is_value_line(lines[end - 1]):
            end -= 1
        spans.append((start, end))

    for i, line in enumerate(lines):
        m = _HEADER.match(line.rstrip("\r\n"))
        if not m:
            continue
        ours = _ours(_table_name(m.group(1)))
        if start is not None and not ours:
            close(i)
            start = None
        elif start is None and ours:
            start = i
    if start is not None:
        close(len(lines))
    return lines, spans


def _check_no_inline(lines: list[str]) -> None:
    table = ""
    for line in lines:
        m = _HEADER.match(line.rstrip("\r\n"))
        if m:
            table = _table_name(m.group(1))
            continue
        key = line.split("=", 1)[0].strip().strip('"') if "=" in line else ""
        if (table == "mcp_servers" and key == SERVER_NAME) or (table == "" and key.startswith("mcp_servers")):
            raise UserError(
                "config.toml defines mcp_servers outside of tables; edit it by hand "
                "(`voyager mcp install codex --print` shows the entry)"
            )


def toml_set(text: str, block: str) -> str:
    """``text`` with our tables replaced by ``block`` (appended when absent); every other line unchanged."""
    lines, spans = _blocks(text)
    _check_no_inline(lines)
    if not spans:
        if not text:
            return block
        sep = "" if text.endswith("\n\n") else ("\n" if text.endswith("\n") else "\n\n")
        return text + sep + block
    out = lines[: spans[0][0]] + [block]
    prev = spans[0][1]
    for s, e in spans[1:]:  # a duplicate of ours further down goes: the file then names one server once
        out += lines[prev:s]
        prev = e
    return "".join(out + lines[prev:])


def toml_remove(text: str) -> str:
    """``text`` without our tables (and the blank line install put before them at the end)."""
    lines, spans = _blocks(text)
    if not spans:
        return text
    out: list[str] = []
    prev = 0
    for s, e in spans:
        out += lines[prev:s]
        prev = e
    rest = lines[prev:]
    if not "".join(rest).strip() and out and not out[-1].strip():
        out.pop()  # the separator install appended
    return "".join(out + rest)
