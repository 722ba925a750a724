"""The agent manifest: one declaration per agent, from which everything else about "which agents" is derived.

Each agent Voyager reads is one ``Agent`` row below: its provider name, the label ``voyager doctor`` shows,
how Voyager knows its format (evidence, versions), where it lives and which variables move it (its *homes*),
the kind of store it keeps, how it is resumed (for the docs: the adapter still builds the quoted command),
the adapter module, and the optional capabilities that adapter has. From these rows come the adapter
registry (``voyager_sessions.ingest.adapters.PROVIDERS`` and ``get``), every home lookup
(:func:`agent_home`, :func:`agent_dir`, :func:`agent_variables`), doctor's labels, evidence and versions, and the two agent
tables in ``docs/agents.md`` and ``README.md`` (``python -m voyager_sessions.ingest.manifest --tables``
rewrites them; a test fails when the committed ones differ).

Adding an agent is one adapter module, one row here and its captures (docs/contributing.md). Rows from
elsewhere (a test's fake agent, a plugin) come in through :func:`register`, the same table the built-in rows
live in, so nothing downstream tells the two apart.

This module imports no adapter (and nothing but the standard library and ``paths``): ``voyager search`` and every caller that only needs names or homes pay for
one small table, not for thirty parsers.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import Literal, NamedTuple

from voyager_sessions.core.paths import Env, resolve_home

#: How Voyager knows an agent's format: ``observed`` (tested on files the real CLI wrote,
#: ``tests/fixtures/agents/``) or ``documented`` (built from public descriptions and peers' test data;
#: not yet seen on a real install).
Evidence = Literal["observed", "documented"]

#: One place an agent keeps its sessions: the variables that name it, in order, each with the path below it.
#: The first variable that is set wins; ``HOME`` is always set, so an entry ``("HOME", sub)`` is the
#: default. The first variable is Voyager's own override (``VOYAGER_<…>``): when it is set it is
#: authoritative, nothing else is probed for that home. An empty path means the variable names it itself.
HomeEntries = tuple[tuple[str, str], ...]


#: The homes of an agent that names none.
_NO_HOMES: Mapping[str, HomeEntries] = MappingProxyType({})


class Agent(NamedTuple):
    """One agent Voyager reads. Only ``name``, ``label`` and ``module`` are required (give the rest by name).

    A named tuple, not a msgspec Struct: the manifest is read by ``voyager --help`` (the ``--provider``
    choices), which must load no engine (tests/test_cli.py), and it is never encoded or decoded. Nor a
    dataclass: every ``voyager search`` reads the manifest, and ``dataclasses`` imports ``inspect`` (with
    ``ast`` and ``dis``), a sixth of a search's start-up (tests/cli/test_startup_imports.py).
    """

    #: The provider name: ``provider:`` in queries, ``--provider``, the ``provider`` of every session.
    name: str
    #: What people call it (doctor, the docs' tables, exports).
    label: str
    #: The module whose ``ADAPTER`` reads it (imported only when the agent is asked for).
    module: str
    evidence: Evidence = "documented"
    #: The agent versions whose real files the adapter was tested on (empty when documented).
    versions: tuple[str, ...] = ()
    #: A qualifier of the evidence for the docs, e.g. "CLI; VS Code extension documented".
    evidence_note: str = ""
    #: Home name -> its entries (see ``HomeEntries``). Home names are global: ``<agent>`` or ``<agent>.<surface>``.
    homes: Mapping[str, HomeEntries] = _NO_HOMES
    #: Variables the adapter reads that name no home (lists of roots, a file name): cleared for a fake HOME.
    variables: tuple[str, ...] = ()
    #: The kinds of store it keeps: ``jsonl``, ``json``, ``sqlite``, ``markdown``, ``html``, ``…+zstd``, ``encrypted``.
    stores: tuple[str, ...] = ()
    #: Where it keeps its sessions, for the docs' tables (Markdown).
    where: str = ""
    #: How a session is reopened, for the docs' tables (Markdown; ``none (IDE)`` when there is no command). The
    #: options its code spans name are the only ones a resume command may hold (:func:`foreign_option`).
    resume: str = "none"
    #: The program the resume command runs (None: the agent has no command Voyager knows).
    binary: str | None = None
    #: Capability: the module has ``probe(path) -> str``, the shape of one source (``voyager doctor`` shows it).
    probe: bool = False
    #: Capability: ``discover(env, hints)`` takes ``base.Hints`` (agents with no fixed place, like Aider).
    uses_hints: bool = False
    #: How it runs MCP servers (where ``voyager mcp install`` registers Voyager, what it tells a server); None
    #: when Voyager does not register itself with it.
    mcp: Mcp | None = None

    def evidence_text(self) -> str:
        """``observed 3.0.3, 2.26.1 (note)`` / ``documented``: the docs' evidence cell."""
        text = " ".join([self.evidence, ", ".join(self.versions)]).strip()
        return f"{text} ({self.evidence_note})" if self.evidence_note else text


#: How an agent tells an MCP server which of its sessions is calling, one way a string, tried in order:
#: ``env:VAR`` (the server's environment holds the session id), ``meta:KEY.KEY`` (a ``tools/call``'s ``_meta`` holds
#: it; a string value holding JSON is looked into), ``running-tool`` (the adapter's ``calling_session`` finds the
#: session whose store shows this very call running: the agent writes it before it calls).
Caller = tuple[str, ...]


class Mcp(NamedTuple):
    """An agent as an MCP client: where ``voyager mcp install`` registers Voyager, and what it tells the server.

    A named tuple, as ``Agent`` is (give the fields by name): no ``dataclasses`` on a search's start-up.

    ``voyager mcp install`` edits the file ``config`` names; ``voyager mcp`` reads ``client`` and ``caller`` to
    say only what is true to the agent connected (docs/serve.md: the caller's own session).
    """

    #: The config file that lists its MCP servers: ``(variable, path below it)`` entries, as a home's.
    config: HomeEntries
    #: The config's format: ``json``, ``jsonc`` (JSON the agent reads with ``//`` and ``/* */`` comments: the
    #: edit keeps them) or ``toml``.
    format: Literal["json", "jsonc", "toml"] = "json"
    #: The agent also reads the file with the suffix ``.jsonc`` (edited when it is the one there).
    jsonc_sibling: bool = False
    #: The keys down to the object of servers in that file.
    servers: tuple[str, ...] = ("mcpServers",)
    #: The keys used instead when the file already has them as an object (OpenCode 2.x: ``mcp.servers``).
    servers_nested: tuple[str, ...] = ()
    #: The shape of Voyager's entry: ``stdio`` (command, args, env), ``claude`` (+ ``type: stdio``), ``copilot``
    #: (+ ``type: local``, ``tools``), ``opencode`` (``type: local``, one command list, ``environment``), ``codex``
    #: (a TOML table with ``required = true``: Codex gives an optional server about a second, then goes on).
    entry: Literal["stdio", "claude", "copilot", "opencode", "codex"] = "stdio"
    #: Where the file and its shape are documented (``--print``, the README).
    doc: str = ""
    #: Other names ``voyager mcp install`` takes for the agent.
    aliases: tuple[str, ...] = ()
    #: The ``clientInfo.name`` it sends in ``initialize`` (as observed); empty when not seen.
    client: str = ""
    #: How it says which of its sessions is calling (see ``Caller``); empty: it does not.
    caller: Caller = ()
    #: The agent version whose handshake and calls were observed (``client``, ``caller``).
    observed: str = ""


#: Every built-in agent, in the order scans and ``doctor`` report them.
BUILTIN: tuple[Agent, ...] = (
    Agent(
        name="claude",
        label="Claude Code",
        module="voyager_sessions.ingest.adapters.claude",
        evidence="observed",
        versions=("2.1.328", "2.1.332"),
        homes={
            "claude": (("VOYAGER_CLAUDE_HOME", ""), ("CLAUDE_CONFIG_DIR", ""), ("HOME", ".claude")),
        },
        where="`~/.claude/projects/`",
        resume="`claude --resume <id>` in cwd",
        binary="claude",
        stores=("jsonl",),
        mcp=Mcp(
            config=(("CLAUDE_CONFIG_DIR", ".claude.json"), ("HOME", ".claude.json")),
            entry="claude",
            doc="~/.claude.json mcpServers (user scope; CLAUDE_CONFIG_DIR moves it)",
            aliases=("claude-code",),
            client="claude-code",
            # Every server it starts gets the session's id in its environment (2.1.332); _meta holds only
            # claudecode/toolUseId and progressToken.
            caller=("env:CLAUDE_CODE_SESSION_ID",),
            observed="2.1.332",
        ),
    ),
    Agent(
        name="codex",
        label="Codex CLI",
        module="voyager_sessions.ingest.adapters.codex",
        evidence="observed",
        versions=("0.169.0", "0.171.0"),
        homes={
            "codex": (("VOYAGER_CODEX_HOME", ""), ("CODEX_HOME", ""), ("HOME", ".codex")),
        },
        where="`~/.codex/sessions/`, `archived_sessions/`",
        resume="`codex resume <id>`",
        binary="codex",
        stores=("jsonl",),
        mcp=Mcp(
            config=(("CODEX_HOME", "config.toml"), ("HOME", ".codex/config.toml")),
            format="toml",
            servers=("mcp_servers",),
            entry="codex",
            doc="~/.codex/config.toml [mcp_servers.voyager] (CODEX_HOME moves it)",
            aliases=("codex-cli",),
            client="codex-mcp-client",
            # Each tools/call's _meta (0.171.0): x-codex-turn-metadata {session_id, thread_id, …}, threadId,
            # sessionId; the environment it passes a server is a short fixed list.
            caller=(
                "meta:x-codex-turn-metadata.thread_id",
                "meta:x-codex-turn-metadata.session_id",
                "meta:threadId",
                "meta:sessionId",
            ),
            observed="0.171.0",
        ),
    ),
    Agent(
        name="gemini",
        label="Gemini CLI",
        module="voyager_sessions.ingest.adapters.gemini",
        evidence="observed",
        versions=("0.61.0",),
        homes={
            # The `.gemini` dir itself; GEMINI_CLI_HOME replaces HOME for Gemini CLI (it keeps `.gemini` below it).
            "gemini": (("VOYAGER_GEMINI_HOME", ""), ("GEMINI_CLI_HOME", ".gemini"), ("HOME", ".gemini")),
        },
        where="`~/.gemini/tmp/*/chats/`",
        resume="`gemini --resume <id>` in cwd",
        binary="gemini",
        stores=("json", "jsonl"),
        probe=True,
        mcp=Mcp(
            config=(("GEMINI_CLI_HOME", ".gemini/settings.json"), ("HOME", ".gemini/settings.json")),
            format="jsonc",  # 0.61.0 reads comments (not trailing commas)
            doc="~/.gemini/settings.json mcpServers (GEMINI_CLI_HOME moves it)",
            aliases=("gemini-cli",),
            client="gemini-cli-mcp-client",
            # 0.61.0 sends only a random progressToken in _meta and GEMINI_CLI=1 in the environment, and writes a
            # tool call to its session file only once it has an answer: nothing names the calling session.
            observed="0.61.0",
        ),
    ),
    Agent(
        name="qwen",
        label="Qwen Code",
        module="voyager_sessions.ingest.adapters.qwen",
        evidence="observed",
        versions=("0.24.4",),
        homes={
            # Qwen Code keeps projects/ under its runtime dir, which defaults to its config dir (QWEN_HOME).
            "qwen": (("VOYAGER_QWEN_HOME", ""), ("QWEN_RUNTIME_DIR", ""), ("QWEN_HOME", ""), ("HOME", ".qwen")),
        },
        where="`~/.qwen/projects/*/chats/`",
        resume="`qwen --resume <id>` in cwd",
        binary="qwen",
        stores=("jsonl",),
        probe=True,
        mcp=Mcp(
            config=(("QWEN_HOME", "settings.json"), ("HOME", ".qwen/settings.json")),
            format="jsonc",  # Gemini CLI's settings reader
            doc="~/.qwen/settings.json mcpServers",
            aliases=("qwen-code",),
        ),
    ),
    Agent(
        name="pi",
        label="Pi",
        module="voyager_sessions.ingest.adapters.pi",
        evidence="observed",
        versions=("0.73.1",),
        evidence_note="Prime Agent documented",
        homes={
            # Pi's agent dir (sessions/ below it); PI_CODING_AGENT_SESSION_DIR names the sessions dir itself and
            # is read beside it unless VOYAGER_PI_HOME is set; Oh My Pi, a fork, writes the same format in ~/.omp.
            "pi": (("VOYAGER_PI_HOME", ""), ("PI_CODING_AGENT_DIR", ""), ("HOME", ".pi/agent")),
            "pi.sessions": (("PI_CODING_AGENT_SESSION_DIR", ""),),
            "omp": (("VOYAGER_OMP_HOME", ""), ("OMP_CODING_AGENT_DIR", ""), ("HOME", ".omp/agent")),
            # Prime Agent (Prime Intellect's fork; documented, agentsview `pi.go`): its sessions dir itself, flat.
            "pi.prime": (
                ("VOYAGER_PRIME_AGENT_HOME", ""),
                ("PRIME_AGENT_SESSION_DIR", ""),
                ("HOME", ".prime/agent/sessions"),
            ),
        },
        where="`~/.pi/agent/sessions/` (and Oh My Pi's `~/.omp/agent/sessions/`, Prime Agent's `~/.prime/agent/sessions/`)",
        resume="`pi --session <id>` in cwd (Oh My Pi: `omp --resume <id>`)",
        binary="pi",
        stores=("jsonl",),
    ),
    Agent(
        name="opencode",
        label="OpenCode",
        module="voyager_sessions.ingest.adapters.opencode",
        evidence="observed",
        versions=("1.18.33",),
        homes={
            "opencode": (
                ("VOYAGER_OPENCODE_HOME", ""),
                ("XDG_DATA_HOME", "opencode"),
                ("HOME", ".local/share/opencode"),
            ),
            # A database named outright: authoritative, no directory is probed.
            "opencode.db": (("VOYAGER_OPENCODE_DB", ""), ("OPENCODE_DB", "")),
        },
        where="`~/.local/share/opencode/opencode.db`",
        resume="`opencode <dir> --session <id>`",
        binary="opencode",
        stores=("sqlite", "json"),
        probe=True,
        mcp=Mcp(
            config=(("XDG_CONFIG_HOME", "opencode/opencode.json"), ("HOME", ".config/opencode/opencode.json")),
            format="jsonc",  # read with a JSONC parser, opencode.json as opencode.jsonc
            jsonc_sibling=True,
            servers=("mcp",),
            servers_nested=("mcp", "servers"),
            entry="opencode",
            doc="~/.config/opencode/opencode.json mcp (1.x) or mcp.servers (2.x); XDG_CONFIG_HOME moves it",
            client="opencode",
            # 1.18.33 sends only a progressToken in _meta (OPENCODE=1, OPENCODE_PID in the environment: one process
            # serves many sessions), but it writes the tool part, status running with its input, before it calls.
            caller=("running-tool",),
            observed="1.18.33",
        ),
    ),
    Agent(
        name="kilo",
        label="Kilo Code CLI",
        module="voyager_sessions.ingest.adapters.kilo",
        evidence="observed",
        versions=("7.7.9",),
        evidence_note="old VS Code extension documented",
        homes={
            # Kilo Code CLI, OpenCode's fork: the same layout in its own data dir (kilo.db).
            "kilo": (("VOYAGER_KILO_HOME", ""), ("XDG_DATA_HOME", "kilo"), ("HOME", ".local/share/kilo")),
            "kilo.db": (("VOYAGER_KILO_DB", ""),),
            # The VS Code extension before 2026-04 (a Roo Code fork; agentsview `kilo_legacy.go`): its storage
            # dir (globalStorage/kilocode.kilo-code) named outright; unset: every editor's.
            "kilo.vscode": (("VOYAGER_KILO_VSCODE_HOME", ""),),
        },
        where="`~/.local/share/kilo/kilo.db` (and the old extension's `<User>/globalStorage/kilocode.kilo-code/`)",
        resume="`kilo --session <id>` in cwd",
        binary="kilo",
        stores=("sqlite",),
        probe=True,
    ),
    Agent(
        name="copilot",
        label="GitHub Copilot CLI",
        module="voyager_sessions.ingest.adapters.copilot",
        evidence="observed",
        versions=("1.0.102",),
        homes={
            # COPILOT_HOME moves the whole config dir (as --config-dir does).
            "copilot": (("VOYAGER_COPILOT_HOME", ""), ("COPILOT_HOME", ""), ("HOME", ".copilot")),
        },
        where="`~/.copilot/session-state/`",
        resume="`copilot --resume <id>` in cwd",
        binary="copilot",
        stores=("jsonl",),
        mcp=Mcp(
            config=(("COPILOT_HOME", "mcp-config.json"), ("HOME", ".copilot/mcp-config.json")),
            entry="copilot",
            doc="~/.copilot/mcp-config.json mcpServers (COPILOT_HOME moves it)",
            aliases=("copilot-cli",),
        ),
    ),
    Agent(
        name="droid",
        label="Factory Droid",
        module="voyager_sessions.ingest.adapters.droid",
        evidence="observed",
        versions=("0.225.2",),
        homes={
            # Factory documents no variable that moves ~/.factory (FACTORY_API_KEY is a key, not a place).
            "droid": (("VOYAGER_DROID_HOME", ""), ("HOME", ".factory")),
        },
        where="`~/.factory/sessions/`",
        resume="`droid --resume <id>` in cwd",
        binary="droid",
        stores=("jsonl",),
    ),
    Agent(
        name="aider",
        label="Aider",
        module="voyager_sessions.ingest.adapters.aider",
        evidence="observed",
        versions=("0.86.2",),
        homes={
            # Aider keeps its history in each project: this dir is searched with its children (the adapter
            # also looks in known cwds and VOYAGER_AIDER_ROOTS).
            "aider": (("VOYAGER_AIDER_HOME", ""), ("HOME", "")),
        },
        where=(
            "`.aider.chat.history.md` in each project (found through your home, `VOYAGER_AIDER_ROOTS` and "
            "every indexed session's directory)"
        ),
        resume="`aider --restore-chat-history` in project (`aider --chat-history-file <file> --restore-chat-history` elsewhere)",
        binary="aider",
        variables=("VOYAGER_AIDER_ROOTS", "AIDER_CHAT_HISTORY_FILE"),
        stores=("markdown",),
        uses_hints=True,
    ),
    Agent(
        name="vibe",
        label="Mistral Vibe",
        module="voyager_sessions.ingest.adapters.vibe",
        evidence="observed",
        versions=("3.0.3", "2.26.1"),
        homes={
            "vibe": (("VOYAGER_VIBE_HOME", ""), ("VIBE_HOME", ""), ("HOME", ".vibe")),
        },
        where="`~/.vibe/logs/session/`",
        resume="`vibe --resume <id>` in cwd",
        binary="vibe",
        stores=("jsonl", "json"),
        probe=True,
    ),
    Agent(
        name="hermes",
        label="Hermes Agent",
        module="voyager_sessions.ingest.adapters.hermes",
        evidence="observed",
        versions=("0.19.0",),
        homes={
            "hermes": (("VOYAGER_HERMES_HOME", ""), ("HERMES_HOME", ""), ("HOME", ".hermes")),
        },
        where="`~/.hermes/state.db`",
        resume="`hermes chat --resume <id>` in cwd (`hermes --profile <name> chat …` for a profile)",
        binary="hermes",
        stores=("sqlite",),
        probe=True,
    ),
    Agent(
        name="openhands",
        label="OpenHands CLI",
        module="voyager_sessions.ingest.adapters.openhands",
        evidence="observed",
        versions=("1.16.0",),
        homes={
            # The persistence dir: V0 sessions in its sessions/, V1 conversations in its conversations/
            # (which OPENHANDS_CONVERSATIONS_DIR can move).
            "openhands": (("VOYAGER_OPENHANDS_HOME", ""), ("OPENHANDS_PERSISTENCE_DIR", ""), ("HOME", ".openhands")),
            "openhands.conversations": (
                ("VOYAGER_OPENHANDS_HOME", "conversations"),
                ("OPENHANDS_CONVERSATIONS_DIR", ""),
                ("OPENHANDS_PERSISTENCE_DIR", "conversations"),
                ("HOME", ".openhands/conversations"),
            ),
        },
        where="`~/.openhands/conversations/`",
        resume="`openhands --resume <uuid>` in cwd",
        binary="openhands",
        stores=("json",),
        probe=True,
    ),
    Agent(
        name="kimi",
        label="Kimi CLI / Kimi Code",
        module="voyager_sessions.ingest.adapters.kimi",
        evidence="observed",
        versions=("1.52.0",),
        evidence_note="Kimi Code, Kimi Work documented",
        homes={
            # Kimi CLI (the Python CLI, up to 1.x) keeps everything in its share dir; Kimi Code replaced it.
            "kimi": (("VOYAGER_KIMI_HOME", ""), ("KIMI_SHARE_DIR", ""), ("HOME", ".kimi")),
            "kimi.code": (("VOYAGER_KIMI_CODE_HOME", ""), ("KIMI_CODE_HOME", ""), ("HOME", ".kimi-code")),
            # Kimi Work (the desktop app, agentsview `kimi_work_provider.go`): its sessions dir named outright;
            # unset: the one below the app's data dir (kimi.work_dirs, per platform).
            "kimi.work": (("VOYAGER_KIMI_WORK_HOME", ""),),
        },
        where="`~/.kimi/sessions/`, `~/.kimi-code/sessions/`, Kimi Work's `<kimi-desktop>/daimon-share/…/sessions/`",
        resume="`kimi -r <id>` / `kimi --session <id>` in cwd",
        binary="kimi",
        stores=("jsonl",),
    ),
    Agent(
        name="cline",
        label="Cline",
        module="voyager_sessions.ingest.adapters.cline",
        evidence="observed",
        versions=("3.0.65",),
        evidence_note="CLI; VS Code extension documented",
        homes={
            # The CLI's data dir (sessions/, db/); CLINE_DIR is the config dir holding data/; CLINE_SESSION_DATA_DIR
            # moves sessions/ out of it. The VS Code extension's storage dir named outright; unset: that folder
            # under every VS Code-family user dir.
            "cline": (
                ("VOYAGER_CLINE_HOME", ""),
                ("CLINE_DATA_DIR", ""),
                ("CLINE_DIR", "data"),
                ("HOME", ".cline/data"),
            ),
            "cline.sessions": (("CLINE_SESSION_DATA_DIR", ""),),
            "cline.vscode": (("VOYAGER_CLINE_VSCODE_HOME", ""),),
        },
        where="`~/.cline/data/sessions/`, `<User>/globalStorage/saoudrizwan.claude-dev/`",
        resume="`cline --id <id>` (CLI)",
        binary="cline",
        stores=("json",),
        probe=True,
    ),
    Agent(
        name="roo",
        label="Roo Code / Zoo Code",
        module="voyager_sessions.ingest.adapters.roo",
        evidence="documented",
        homes={
            # Roo Code's storage dir (globalStorage/rooveterinaryinc.roo-cline) named outright; unset: every editor's.
            "roo": (("VOYAGER_ROO_HOME", ""),),
            # Zoo Code's (globalStorage/zoocodeorganization.zoo-code; splitrail `zoo_code.rs`), likewise.
            "roo.zoo": (("VOYAGER_ZOO_CODE_HOME", ""),),
        },
        where="`<User>/globalStorage/rooveterinaryinc.roo-cline/` (and Zoo Code's `zoocodeorganization.zoo-code/`)",
        resume="none (IDE)",
        binary=None,
        stores=("json",),
        probe=True,
    ),
    Agent(
        name="cursor",
        label="Cursor",
        module="voyager_sessions.ingest.adapters.cursor",
        evidence="documented",
        homes={
            # The CLI's home (chats/, projects/*/agent-transcripts/); CURSOR_CONFIG_DIR moves its config dir
            # (Cursor's CLI docs: *verify*). The editor's user dir: only the override here; unset, the adapter
            # probes vscode_user_dirs(env, "Cursor") (the default differs by platform).
            "cursor": (("VOYAGER_CURSOR_HOME", ""), ("CURSOR_CONFIG_DIR", ""), ("HOME", ".cursor")),
            "cursor.app": (("VOYAGER_CURSOR_APP_DIR", ""),),
        },
        where="`<User>/…/state.vscdb`, `~/.cursor/chats/`, `~/.cursor/projects/*/agent-transcripts/`",
        resume="`cursor-agent --resume <id>` (CLI)",
        binary="cursor-agent",
        stores=("sqlite", "jsonl"),
        probe=True,
        mcp=Mcp(
            config=(("HOME", ".cursor/mcp.json"),),
            doc="~/.cursor/mcp.json mcpServers",
            aliases=("cursor-agent",),
        ),
    ),
    Agent(
        name="copilot-vscode",
        label="Copilot Chat in VS Code",
        module="voyager_sessions.ingest.adapters.copilot_vscode",
        evidence="documented",
        homes={
            # Unset: the adapter probes every VS Code-family user dir (paths.vscode_user_dirs).
            "copilot-vscode.app": (("VOYAGER_COPILOT_VSCODE_HOME", ""),),
        },
        where="`<User>/workspaceStorage/*/chatSessions/`",
        resume="none (IDE)",
        binary=None,
        stores=("json",),
        probe=True,
    ),
    Agent(
        name="windsurf",
        label="Windsurf",
        module="voyager_sessions.ingest.adapters.windsurf",
        evidence="documented",
        homes={
            # Windsurf's own home (cascade/), and its editor's user dir.
            "windsurf": (("VOYAGER_WINDSURF_HOME", ""), ("HOME", ".codeium/windsurf")),
            "windsurf.app": (("VOYAGER_WINDSURF_APP_DIR", ""),),
        },
        where="`~/.codeium/windsurf/cascade/` (encrypted: reported, not read), legacy `<User>` chat",
        resume="none (IDE)",
        binary=None,
        stores=("encrypted", "sqlite"),
        probe=True,
        mcp=Mcp(
            config=(("HOME", ".codeium/windsurf/mcp_config.json"),),
            doc="~/.codeium/windsurf/mcp_config.json mcpServers",
        ),
    ),
    Agent(
        name="kiro",
        label="Kiro",
        module="voyager_sessions.ingest.adapters.kiro",
        evidence="documented",
        homes={
            # No variable of Kiro's own for any home: ~/.kiro (the CLI's JSONL sessions), the IDE's user dir
            # (unset: vscode_user_dirs(env, "Kiro") and the macOS one), kiro-cli's data dir (data.sqlite3).
            "kiro": (("VOYAGER_KIRO_HOME", ""), ("HOME", ".kiro")),
            "kiro.app": (("VOYAGER_KIRO_APP_DIR", ""),),
            "kiro.cli": (
                ("VOYAGER_KIRO_CLI_HOME", ""),
                ("XDG_DATA_HOME", "kiro-cli"),
                ("HOME", ".local/share/kiro-cli"),
            ),
        },
        where="`~/.kiro/sessions/`, kiro-cli `data.sqlite3`, the IDE's `<User>`",
        resume="`kiro-cli chat --resume-id <id>` (CLI)",
        binary="kiro-cli",
        stores=("jsonl", "sqlite", "json"),
        probe=True,
    ),
    Agent(
        name="antigravity",
        label="Antigravity",
        module="voyager_sessions.ingest.adapters.antigravity",
        evidence="documented",
        homes={
            # The folder holding Antigravity's antigravity* dirs (CLI, IDE, desktop); no variable of its own.
            "antigravity": (("VOYAGER_ANTIGRAVITY_HOME", ""), ("HOME", ".gemini")),
        },
        where="`~/.gemini/antigravity-cli/brain/`",
        resume="none known",
        binary=None,
        stores=("jsonl",),
        probe=True,
    ),
    Agent(
        name="zcode",
        label="ZCode",
        module="voyager_sessions.ingest.adapters.zcode",
        evidence="documented",
        homes={
            "zcode": (("VOYAGER_ZCODE_HOME", ""), ("HOME", ".zcode")),
        },
        where="`~/.zcode/cli/db/db.sqlite`",
        resume="none (desktop)",
        binary=None,
        stores=("sqlite",),
        probe=True,
    ),
    Agent(
        name="dsh",
        label="DeepSeek Harness",
        module="voyager_sessions.ingest.adapters.dsh",
        evidence="documented",
        homes={
            # DSH_HOME, then the other roots its PyPI companion probes. With VOYAGER_DSH_HOME set every entry
            # names the same directory (the override is authoritative).
            "dsh": (("VOYAGER_DSH_HOME", "sessions"), ("DSH_HOME", "sessions"), ("HOME", ".dsh/sessions")),
            "dsh.alt": (("VOYAGER_DSH_HOME", "sessions"), ("HOME", ".deepseek-harness/sessions")),
            "dsh.config": (
                ("VOYAGER_DSH_HOME", "sessions"),
                ("XDG_CONFIG_HOME", "dsh/sessions"),
                ("HOME", ".config/dsh/sessions"),
            ),
        },
        where="`~/.dsh/sessions/` (zstd)",
        resume="none",
        binary=None,
        stores=("jsonl+zstd",),
        uses_hints=True,
    ),
    Agent(
        name="grok",
        label="Grok Build (xAI)",
        module="voyager_sessions.ingest.adapters.grok",
        evidence="documented",
        homes={
            # GROK_HOME relocates its whole tree (sessions/, grok.db).
            "grok": (("VOYAGER_GROK_HOME", ""), ("GROK_HOME", ""), ("HOME", ".grok")),
        },
        where="`~/.grok/sessions/`",
        resume="`grok --resume <id>` in cwd",
        binary="grok",
        stores=("jsonl",),
        probe=True,
    ),
    Agent(
        name="crush",
        label="Crush",
        module="voyager_sessions.ingest.adapters.crush",
        evidence="documented",
        homes={
            # Its global data dir (projects.json lists every project's data dir), then ~/.crush.
            "crush": (
                ("VOYAGER_CRUSH_HOME", ""),
                ("CRUSH_GLOBAL_DATA", ""),
                ("XDG_DATA_HOME", "crush"),
                ("HOME", ".local/share/crush"),
            ),
            "crush.home": (("VOYAGER_CRUSH_HOME", ""), ("HOME", ".crush")),
        },
        where="`~/.local/share/crush/projects.json` → `crush.db`",
        resume="`crush --cwd <dir> --session <id>` (`crush --data-dir <dir> --session <id>` without a project)",
        binary="crush",
        stores=("sqlite",),
        probe=True,
        uses_hints=True,
    ),
    Agent(
        name="goose",
        label="Goose",
        module="voyager_sessions.ingest.adapters.goose",
        evidence="documented",
        homes={
            # The directory of sessions.db (and legacy *.jsonl); GOOSE_PATH_ROOT is Goose's own root.
            "goose": (
                ("VOYAGER_GOOSE_HOME", "sessions"),
                ("GOOSE_PATH_ROOT", "data/sessions"),
                ("XDG_DATA_HOME", "goose/sessions"),
                ("HOME", ".local/share/goose/sessions"),
            ),
            "goose.legacy": (("VOYAGER_GOOSE_HOME", "sessions"), ("HOME", ".goose/sessions")),
        },
        where="`~/.local/share/goose/sessions/sessions.db`",
        resume="`goose session --resume --session-id <id>` in cwd",
        binary="goose",
        stores=("sqlite", "jsonl"),
        probe=True,
    ),
    Agent(
        name="zed",
        label="Zed",
        module="voyager_sessions.ingest.adapters.zed",
        evidence="documented",
        homes={
            # Zed's data dir on Linux (Flatpak first, as Zed itself does), then macOS's.
            "zed": (
                ("VOYAGER_ZED_HOME", ""),
                ("FLATPAK_XDG_DATA_HOME", "zed"),
                ("XDG_DATA_HOME", "zed"),
                ("HOME", ".local/share/zed"),
            ),
            "zed.mac": (("VOYAGER_ZED_HOME", ""), ("HOME", "Library/Application Support/Zed")),
        },
        where="`~/.local/share/zed/threads/threads.db` (zstd)",
        resume="none (IDE)",
        binary=None,
        stores=("sqlite+zstd",),
        probe=True,
    ),
    Agent(
        name="gptme",
        label="gptme",
        module="voyager_sessions.ingest.adapters.gptme",
        evidence="observed",
        versions=("0.35.1",),
        homes={
            # Its logs dir (one folder a conversation); GPTME_LOGS_HOME moves it, else XDG's data dir.
            "gptme": (
                ("VOYAGER_GPTME_HOME", ""),
                ("GPTME_LOGS_HOME", ""),
                ("XDG_DATA_HOME", "gptme/logs"),
                ("HOME", ".local/share/gptme/logs"),
            ),
            "gptme.mac": (("VOYAGER_GPTME_HOME", ""), ("HOME", "Library/Application Support/gptme/logs")),
        },
        where="`~/.local/share/gptme/logs/*/conversation.jsonl`",
        resume="`gptme --name <id>` in cwd",
        binary="gptme",
        stores=("jsonl",),
    ),
    Agent(
        name="continue",
        label="Continue",
        module="voyager_sessions.ingest.adapters.continue_cli",
        evidence="observed",
        versions=("1.5.47",),
        evidence_note="CLI `cn`; IDE extensions documented",
        homes={
            # The global dir (sessions/ below it), shared by the CLI (cn) and the IDE extensions.
            "continue": (("VOYAGER_CONTINUE_HOME", ""), ("CONTINUE_GLOBAL_DIR", ""), ("HOME", ".continue")),
        },
        where="`~/.continue/sessions/*.json`",
        resume="`cn --fork <id>` in cwd",
        binary="cn",
        stores=("json",),
    ),
    Agent(
        name="nanocoder",
        label="Nanocoder",
        module="voyager_sessions.ingest.adapters.nanocoder",
        evidence="observed",
        versions=("1.30.0",),
        homes={
            # NANOCODER_DATA_DIR, else XDG's data dir; then macOS's.
            "nanocoder": (
                ("VOYAGER_NANOCODER_HOME", ""),
                ("NANOCODER_DATA_DIR", ""),
                ("XDG_DATA_HOME", "nanocoder"),
                ("HOME", ".local/share/nanocoder"),
            ),
            "nanocoder.mac": (("VOYAGER_NANOCODER_HOME", ""), ("HOME", "Library/Application Support/nanocoder")),
        },
        where="`~/.local/share/nanocoder/sessions/*.json`",
        resume="`nanocoder --resume <id>` in cwd",
        binary="nanocoder",
        stores=("json",),
    ),
    Agent(
        name="open-interpreter",
        label="Open Interpreter",
        module="voyager_sessions.ingest.adapters.open_interpreter",
        evidence="observed",
        versions=("0.4.3",),
        homes={
            # Its config dir (platformdirs' user_config_dir: conversations/ below it), then macOS's.
            "open-interpreter": (
                ("VOYAGER_OPEN_INTERPRETER_HOME", ""),
                ("XDG_CONFIG_HOME", "open-interpreter"),
                ("HOME", ".config/open-interpreter"),
            ),
            "open-interpreter.mac": (
                ("VOYAGER_OPEN_INTERPRETER_HOME", ""),
                ("HOME", "Library/Application Support/open-interpreter"),
            ),
        },
        where="`~/.config/open-interpreter/conversations/`",
        resume="none by id (a picker)",
        stores=("json",),
    ),
    Agent(
        name="mini-swe-agent",
        label="mini-swe-agent",
        module="voyager_sessions.ingest.adapters.mini_swe_agent",
        evidence="observed",
        versions=("2.4.6",),
        homes={
            # Its global config dir (last_mini_run.traj.json): MSWEA_GLOBAL_CONFIG_DIR, else XDG's config dir.
            "mini-swe-agent": (
                ("VOYAGER_MINI_SWE_AGENT_HOME", ""),
                ("MSWEA_GLOBAL_CONFIG_DIR", ""),
                ("XDG_CONFIG_HOME", "mini-swe-agent"),
                ("HOME", ".config/mini-swe-agent"),
            ),
            "mini-swe-agent.mac": (
                ("VOYAGER_MINI_SWE_AGENT_HOME", ""),
                ("MSWEA_GLOBAL_CONFIG_DIR", ""),
                ("HOME", "Library/Application Support/mini-swe-agent"),
            ),
        },
        where="`~/.config/mini-swe-agent/last_mini_run.traj.json` (each run overwrites it; earlier runs Voyager indexed stay findable)",
        resume="none",
        stores=("json",),
    ),
    # -- documented agents from peers' parsers and test data (#27); no real capture yet --------------------------
    Agent(
        name="amp",
        label="Amp",
        module="voyager_sessions.ingest.adapters.amp",
        evidence="documented",
        homes={
            # Amp's data dir (threads/ below it), XDG's on every platform per peers.
            "amp": (("VOYAGER_AMP_HOME", ""), ("XDG_DATA_HOME", "amp"), ("HOME", ".local/share/amp")),
        },
        where="`~/.local/share/amp/threads/T-*.json`",
        resume="`amp threads continue <id>` in cwd (*verify*)",
        binary="amp",
        stores=("json",),
    ),
    Agent(
        name="devin",
        label="Devin CLI",
        module="voyager_sessions.ingest.adapters.devin",
        evidence="documented",
        homes={
            # Devin CLI's data dir (cli/sessions.db below it); then macOS's.
            "devin": (("VOYAGER_DEVIN_HOME", ""), ("XDG_DATA_HOME", "devin"), ("HOME", ".local/share/devin")),
            "devin.mac": (("VOYAGER_DEVIN_HOME", ""), ("HOME", "Library/Application Support/devin")),
        },
        where="`~/.local/share/devin/cli/sessions.db`",
        resume="`devin -r <id>` in cwd (*verify*)",
        binary="devin",
        stores=("sqlite",),
        probe=True,
    ),
    Agent(
        name="chatgpt",
        label="ChatGPT export",
        module="voyager_sessions.ingest.adapters.chatgpt",
        evidence="documented",
        homes={
            # The imports folder (unset: <data dir>/imports), shared with claude-ai: one folder holds both kinds;
            # recorded `voyager import` paths come as hints.
            "chatgpt": (("VOYAGER_IMPORTS", ""),),
        },
        where="`voyager import PATH`; `$VOYAGER_IMPORTS` or `<data dir>/imports/`",
        resume="none (web chat)",
        stores=("json",),
        uses_hints=True,
    ),
    Agent(
        name="claude-ai",
        label="Claude.ai export",
        module="voyager_sessions.ingest.adapters.claude_ai",
        evidence="documented",
        homes={
            # The same imports folder as chatgpt's (each adapter keeps the exports of its own kind).
            "claude-ai": (("VOYAGER_IMPORTS", ""),),
        },
        where="`voyager import PATH`; `$VOYAGER_IMPORTS` or `<data dir>/imports/`",
        resume="none (web chat)",
        stores=("json",),
        uses_hints=True,
    ),
    Agent(
        name="commandcode",
        label="Command Code",
        module="voyager_sessions.ingest.adapters.commandcode",
        evidence="documented",
        homes={
            # Command Code's home (projects/ below it); peers name no variable of the agent's own.
            "commandcode": (("VOYAGER_COMMANDCODE_HOME", ""), ("HOME", ".commandcode")),
        },
        where="`~/.commandcode/projects/*/<id>.jsonl`",
        resume="none known",
        stores=("jsonl", "json"),
    ),
    Agent(
        name="iflow",
        label="iFlow CLI",
        module="voyager_sessions.ingest.adapters.iflow",
        evidence="documented",
        homes={
            # iFlow CLI's home (projects/ below it); no variable of the agent's own is documented.
            "iflow": (("VOYAGER_IFLOW_HOME", ""), ("HOME", ".iflow")),
        },
        where="`~/.iflow/projects/*/session-<uuid>.jsonl`",
        resume="`iflow --resume <id>` in cwd",
        binary="iflow",
        stores=("jsonl",),
    ),
    Agent(
        name="qoder",
        label="Qoder CLI",
        module="voyager_sessions.ingest.adapters.qoder",
        evidence="documented",
        homes={
            # Qoder CLI's home and QoderWork's (projects/ below each); VOYAGER_QODER_HOME names the one place.
            "qoder": (("VOYAGER_QODER_HOME", ""), ("HOME", ".qoder")),
            "qoder.work": (("HOME", ".qoderwork"),),
        },
        where="`~/.qoder/projects/*/<id>.jsonl`, `~/.qoderwork/projects/`",
        resume="`qodercli -r <id>` in cwd",
        binary="qodercli",
        stores=("jsonl",),
    ),
    Agent(
        name="zencoder",
        label="Zencoder",
        module="voyager_sessions.ingest.adapters.zencoder",
        evidence="documented",
        homes={
            # Zencoder's home (sessions/ below it); peers name no variable of the agent's own.
            "zencoder": (("VOYAGER_ZENCODER_HOME", ""), ("HOME", ".zencoder")),
        },
        where="`~/.zencoder/sessions/<id>.jsonl`",
        resume="none known",
        stores=("jsonl",),
    ),
    Agent(
        name="warp",
        label="Warp",
        module="voyager_sessions.ingest.adapters.warp",
        evidence="documented",
        evidence_note="agent prompts only",
        homes={
            # Warp's data dirs (warp.sqlite in each): XDG's state dir on Linux, then the two macOS places.
            "warp": (
                ("VOYAGER_WARP_HOME", ""),
                ("XDG_STATE_HOME", "warp-terminal"),
                ("HOME", ".local/state/warp-terminal"),
            ),
            "warp.mac": (
                ("VOYAGER_WARP_HOME", ""),
                (
                    "HOME",
                    "Library/Group Containers/2BBY89MBSN.dev.warp/Library/Application Support/dev.warp.Warp-Stable",
                ),
            ),
            "warp.mac-legacy": (
                ("VOYAGER_WARP_HOME", ""),
                ("HOME", "Library/Application Support/dev.warp.Warp-Stable"),
            ),
        },
        where="`~/.local/state/warp-terminal/warp.sqlite`; macOS: Warp's group container",
        resume="none (app)",
        stores=("sqlite",),
        probe=True,
    ),
    Agent(
        name="codebuddy",
        label="CodeBuddy Code",
        module="voyager_sessions.ingest.adapters.codebuddy",
        evidence="documented",
        evidence_note="CLI",
        homes={
            # CodeBuddy Code's config dir (projects/ below it); CODEBUDDY_CONFIG_DIR moves it.
            "codebuddy": (("VOYAGER_CODEBUDDY_HOME", ""), ("CODEBUDDY_CONFIG_DIR", ""), ("HOME", ".codebuddy")),
        },
        where="`~/.codebuddy/projects/*/<id>.jsonl`",
        resume="none known",
        stores=("jsonl",),
    ),
    Agent(
        name="junie",
        label="Junie",
        module="voyager_sessions.ingest.adapters.junie",
        evidence="documented",
        evidence_note="CLI; prompts and titles",
        homes={
            # Junie CLI's home (sessions/ below it); no variable of the agent's own is documented.
            "junie": (("VOYAGER_JUNIE_HOME", ""), ("HOME", ".junie")),
        },
        where="`~/.junie/sessions/<id>/events.jsonl`",
        resume="none (see its section)",
        stores=("jsonl",),
    ),
    # -- the observed agents of issue 39 (one block: the documented ones are added beside it) ------------------
    Agent(
        name="openclaw",
        label="OpenClaw",
        module="voyager_sessions.ingest.adapters.openclaw",
        evidence="observed",
        versions=("2026.9.6", "2026.6.35"),
        evidence_note="SQLite and JSONL generations; Clawdbot's root",
        homes={
            # The state dir: OPENCLAW_STATE_DIR names it, OPENCLAW_HOME re-roots the `~` it is in.
            "openclaw": (
                ("VOYAGER_OPENCLAW_HOME", ""),
                ("OPENCLAW_STATE_DIR", ""),
                ("OPENCLAW_HOME", ".openclaw"),
                ("HOME", ".openclaw"),
            ),
            # Its names before: Clawdbot (January 2026), and Kimi's build of it (same layout).
            "openclaw.clawdbot": (("VOYAGER_OPENCLAW_HOME", ""), ("HOME", ".clawdbot")),
            "openclaw.kimi": (("VOYAGER_OPENCLAW_HOME", ""), ("HOME", ".kimi_openclaw")),
        },
        where="`~/.openclaw/agents/*/agent/openclaw-agent.sqlite`, `agents/*/sessions/*.jsonl`; `~/.clawdbot`",
        resume="none as a command (`openclaw agent --session-id <id> -m …` continues it with a new message)",
        stores=("sqlite", "sqlite+zstd", "jsonl"),
    ),
    Agent(
        name="reasonix",
        label="Reasonix",
        module="voyager_sessions.ingest.adapters.reasonix",
        evidence="observed",
        versions=("1.38.11",),
        homes={
            "reasonix": (("VOYAGER_REASONIX_HOME", ""), ("REASONIX_HOME", ""), ("HOME", ".reasonix")),
        },
        where="`~/.reasonix/projects/*/sessions-v4/<id>/events.frames` (zstd)",
        resume="`reasonix --resume <id>` in cwd",
        binary="reasonix",
        stores=("jsonl+zstd",),
    ),
    Agent(
        name="deepagents",
        label="Deep Agents Code (dcode)",
        module="voyager_sessions.ingest.adapters.deepagents",
        evidence="observed",
        versions=("0.1.88",),
        homes={
            # dcode's profile dir (.state/sessions.db below it).
            "deepagents": (("VOYAGER_DEEPAGENTS_HOME", ""), ("HOME", ".deepagents")),
        },
        where="`~/.deepagents/.state/sessions.db` (LangGraph checkpoints, msgpack)",
        resume="`dcode -r <thread id>` in cwd",
        binary="dcode",
        stores=("sqlite",),
        probe=True,
    ),
    Agent(
        name="code-puppy",
        label="Code Puppy",
        module="voyager_sessions.ingest.adapters.code_puppy",
        evidence="observed",
        versions=("0.0.946",),
        homes={
            # The autosaves folder: under XDG_CACHE_HOME when Code Puppy runs with XDG variables, else its own dir.
            "code-puppy": (
                ("VOYAGER_CODE_PUPPY_HOME", ""),
                ("XDG_CACHE_HOME", "code_puppy/autosaves"),
                ("HOME", ".code_puppy/autosaves"),
            ),
            "code-puppy.home": (("VOYAGER_CODE_PUPPY_HOME", ""), ("HOME", ".code_puppy/autosaves")),
        },
        where="`~/.code_puppy/autosaves/<name>.json`",
        resume="`code-puppy -r <name>` in cwd",
        binary="code-puppy",
        stores=("json",),
    ),
    Agent(
        name="omnigent",
        label="Omnigent",
        module="voyager_sessions.ingest.adapters.omnigent",
        evidence="observed",
        versions=("0.19.1",),
        homes={
            "omnigent": (("VOYAGER_OMNIGENT_HOME", ""), ("OMNIGENT_DATA_DIR", ""), ("HOME", ".omnigent")),
        },
        where="`~/.omnigent/chat.db`",
        resume="`omnigent resume <id>` in cwd",
        binary="omnigent",
        stores=("sqlite",),
        probe=True,
    ),
    Agent(
        name="cecli",
        label="cecli (Aider fork)",
        module="voyager_sessions.ingest.adapters.cecli",
        evidence="observed",
        versions=("1.10.0",),
        homes={
            # Like Aider's: cecli keeps `.cecli/` in each project; this dir is searched with its children (and
            # every indexed session's directory, and VOYAGER_AIDER_ROOTS).
            "cecli": (("VOYAGER_CECLI_HOME", ""), ("HOME", "")),
        },
        where="`.cecli/` in each project: `chat.history` and its JSON sessions (found as Aider's are)",
        resume="`cecli --auto-load` in project (the latest auto-save)",
        binary="cecli",
        variables=("VOYAGER_AIDER_ROOTS",),
        stores=("markdown", "json"),
        uses_hints=True,
    ),
    # -- documented agents of the turn-4 survey (#39, AGENTS-next.md); evidence: the peer file or package named ----
    Agent(
        name="auggie",
        label="Augment Auggie",
        module="voyager_sessions.ingest.adapters.auggie",
        evidence="documented",
        evidence_note="package code 0.36.0",
        homes={
            # Augment's home (sessions/ below it); no variable of its own is documented.
            "auggie": (("VOYAGER_AUGGIE_HOME", ""), ("HOME", ".augment")),
        },
        where="`~/.augment/sessions/<id>.json`",
        resume="`auggie --resume <id>`",
        binary="auggie",
        stores=("json",),
    ),
    Agent(
        name="codebuff",
        label="Codebuff / Freebuff",
        module="voyager_sessions.ingest.adapters.codebuff",
        evidence="documented",
        evidence_note="agentsview `codebuff.go`",
        homes={
            # Codebuff's config dir (projects/ below it; "manicode" is its old name); no variable of its own.
            "codebuff": (("VOYAGER_CODEBUFF_HOME", ""), ("HOME", ".config/manicode")),
        },
        where="`~/.config/manicode/projects/*/chats/<timestamp>/`",
        resume="none known",
        stores=("json",),
    ),
    Agent(
        name="forge",
        label="Forge",
        module="voyager_sessions.ingest.adapters.forge",
        evidence="documented",
        evidence_note="agentsview `forge.go`",
        homes={
            # Forge's home (.forge.db in it); no variable of its own is documented.
            "forge": (("VOYAGER_FORGE_HOME", ""), ("HOME", ".forge")),
        },
        where="`~/.forge/.forge.db`",
        resume="none known",
        stores=("sqlite",),
        probe=True,
    ),
    Agent(
        name="shelley",
        label="Shelley",
        module="voyager_sessions.ingest.adapters.shelley",
        evidence="documented",
        evidence_note="agentsview `shelley.go`",
        homes={
            # Shelley's config dir (shelley.db in it); no variable of its own is documented.
            "shelley": (("VOYAGER_SHELLEY_HOME", ""), ("HOME", ".config/shelley")),
        },
        where="`~/.config/shelley/shelley.db`",
        resume="none (web UI)",
        stores=("sqlite",),
        probe=True,
    ),
    Agent(
        name="piebald",
        label="Piebald",
        module="voyager_sessions.ingest.adapters.piebald",
        evidence="documented",
        evidence_note="agentsview `piebald.go`, splitrail `piebald.rs`",
        homes={
            # Piebald's data dir (app.db in it), per platform; no variable of its own is documented.
            "piebald": (("VOYAGER_PIEBALD_HOME", ""), ("XDG_DATA_HOME", "piebald"), ("HOME", ".local/share/piebald")),
            "piebald.mac": (("VOYAGER_PIEBALD_HOME", ""), ("HOME", "Library/Application Support/piebald")),
            "piebald.windows": (("VOYAGER_PIEBALD_HOME", ""), ("APPDATA", "piebald")),
        },
        where="`~/.local/share/piebald/app.db`",
        resume="none (desktop)",
        stores=("sqlite",),
        probe=True,
    ),
    Agent(
        name="poolside",
        label="Poolside Agent CLI",
        module="voyager_sessions.ingest.adapters.poolside",
        evidence="documented",
        evidence_note="agentsview `poolside.go`",
        homes={
            # Poolside's state dir (trajectories/ below it), per platform; no variable of its own is documented.
            "poolside": (
                ("VOYAGER_POOLSIDE_HOME", ""),
                ("XDG_STATE_HOME", "poolside"),
                ("HOME", ".local/state/poolside"),
            ),
            "poolside.mac": (("VOYAGER_POOLSIDE_HOME", ""), ("HOME", "Library/Application Support/poolside")),
            "poolside.windows": (("VOYAGER_POOLSIDE_HOME", ""), ("APPDATA", "poolside")),
        },
        where="`~/.local/state/poolside/trajectories/trajectory-*.ndjson`",
        resume="none known",
        stores=("jsonl",),
    ),
    Agent(
        name="openclaude",
        label="OpenClaude",
        module="voyager_sessions.ingest.adapters.openclaude",
        evidence="documented",
        evidence_note="agentsview `openclaude.go`",
        homes={
            # OpenClaude's config dir (projects/ below it); OPENCLAUDE_CONFIG_DIR re-roots it, as Claude Code's does.
            "openclaude": (("VOYAGER_OPENCLAUDE_HOME", ""), ("OPENCLAUDE_CONFIG_DIR", ""), ("HOME", ".openclaude")),
        },
        where="`~/.openclaude/projects/`",
        resume="`openclaude --resume <id>` in cwd (*verify*)",
        binary="openclaude",
        stores=("jsonl",),
    ),
    Agent(
        name="cowork",
        label="Claude Desktop Cowork",
        module="voyager_sessions.ingest.adapters.cowork",
        evidence="documented",
        evidence_note="agentsview `cowork.go`",
        homes={
            # Its local-agent-mode-sessions dir named outright; unset: the one in Claude Desktop's user-data dir.
            "cowork": (("VOYAGER_COWORK_HOME", ""),),
        },
        where="`<Claude>/local-agent-mode-sessions/*/*/local_*/.claude/projects/`",
        resume="none (desktop)",
        stores=("json", "jsonl"),
    ),
    Agent(
        name="traex",
        label="TRAE CLI",
        module="voyager_sessions.ingest.adapters.traex",
        evidence="documented",
        evidence_note="agentsview `traex.go`",
        homes={
            # TRAE CLI's home (sessions/, archived_sessions/ below it); no variable of its own is documented.
            "traex": (("VOYAGER_TRAEX_HOME", ""), ("HOME", ".trae/cli")),
        },
        where="`~/.trae/cli/sessions/`, `archived_sessions/`",
        resume="`traex resume <id>`",
        binary="traex",
        stores=("jsonl",),
    ),
    Agent(
        name="mimocode",
        label="MiMo Code",
        module="voyager_sessions.ingest.adapters.mimocode",
        evidence="documented",
        evidence_note="agentsview `mimocode.go`",
        homes={
            # MiMo Code, an OpenCode fork: OpenCode's layout in its own data dir (mimocode.db, storage/).
            "mimocode": (
                ("VOYAGER_MIMOCODE_HOME", ""),
                ("XDG_DATA_HOME", "mimocode"),
                ("HOME", ".local/share/mimocode"),
            ),
            "mimocode.db": (("VOYAGER_MIMOCODE_DB", ""),),
        },
        where="`~/.local/share/mimocode/mimocode.db`, `storage/`",
        resume="none known",
        stores=("sqlite", "json"),
        probe=True,
    ),
    Agent(
        name="icodemate",
        label="iCodeMate",
        module="voyager_sessions.ingest.adapters.icodemate",
        evidence="documented",
        evidence_note="agentsview `icodemate.go`",
        homes={
            # iCodeMate, an OpenCode fork: OpenCode's layout in its own data dir (icodemate.db, storage/).
            "icodemate": (
                ("VOYAGER_ICODEMATE_HOME", ""),
                ("XDG_DATA_HOME", "icodemate"),
                ("HOME", ".local/share/icodemate"),
            ),
            "icodemate.db": (("VOYAGER_ICODEMATE_DB", ""),),
        },
        where="`~/.local/share/icodemate/icodemate.db`, `storage/`",
        resume="none known",
        stores=("sqlite", "json"),
        probe=True,
    ),
    Agent(
        name="trae",
        label="Trae IDE",
        module="voyager_sessions.ingest.adapters.trae",
        evidence="documented",
        evidence_note="agentsview `trae_provider.go`, `trae_layout.go`",
        homes={
            # One Trae user dir named outright; unset: every Trae build's (Trae, Trae CN, TRAE SOLO CN).
            "trae": (("VOYAGER_TRAE_HOME", ""),),
        },
        where="`<Trae>/User/{globalStorage,workspaceStorage/*}/state.vscdb`; newer `ModularData/ai-agent/database.db` (encrypted: reported, not read)",
        resume="none (IDE)",
        stores=("sqlite", "encrypted"),
        probe=True,
    ),
    Agent(
        name="positron",
        label="Positron Assistant",
        module="voyager_sessions.ingest.adapters.positron",
        evidence="documented",
        evidence_note="agentsview `positron_provider.go`",
        homes={
            # Positron's user dir named outright; unset: Positron's (paths.vscode_user_dirs, per platform).
            "positron": (("VOYAGER_POSITRON_HOME", ""),),
        },
        where="`<Positron>/User/workspaceStorage/*/chatSessions/`",
        resume="none (IDE)",
        stores=("json", "jsonl"),
        probe=True,
    ),
    Agent(
        name="posit-assistant",
        label="Posit Assistant",
        module="voyager_sessions.ingest.adapters.posit_assistant",
        evidence="documented",
        evidence_note="agentsview `posit_assistant_provider.go`",
        homes={
            # Posit Assistant's dir (workspaces/ below it); no variable of its own is documented.
            "posit-assistant": (("VOYAGER_POSIT_ASSISTANT_HOME", ""), ("HOME", ".posit/assistant")),
        },
        where="`~/.posit/assistant/workspaces/*/<conversation>/`",
        resume="none (IDE)",
        stores=("json", "jsonl"),
    ),
    Agent(
        name="qwenpaw",
        label="QwenPaw (ex-CoPaw)",
        module="voyager_sessions.ingest.adapters.qwenpaw",
        evidence="documented",
        evidence_note="agentsview `qwenpaw.go`; package code 2.2.2.post1",
        homes={
            # Its working dir (workspaces/ below it): QWENPAW_WORKING_DIR, else ~/.qwenpaw and the old ~/.copaw.
            "qwenpaw": (("VOYAGER_QWENPAW_HOME", ""), ("QWENPAW_WORKING_DIR", ""), ("HOME", ".qwenpaw")),
            "qwenpaw.copaw": (("VOYAGER_QWENPAW_HOME", ""), ("QWENPAW_WORKING_DIR", ""), ("HOME", ".copaw")),
        },
        where="`~/.qwenpaw/workspaces/*/sessions/` (and `~/.copaw/`)",
        resume="none (chat channels)",
        stores=("json",),
    ),
    Agent(
        name="visualstudio-copilot",
        label="Visual Studio Copilot",
        module="voyager_sessions.ingest.adapters.visualstudio_copilot",
        evidence="documented",
        evidence_note="agentsview `visualstudio_copilot.go`",
        homes={
            # Copilot's OpenTelemetry traces folder in the temp/cache dir, per platform.
            "visualstudio-copilot": (
                ("VOYAGER_VISUALSTUDIO_COPILOT_HOME", ""),
                ("XDG_CACHE_HOME", "VSGitHubCopilotLogs/traces"),
                ("HOME", ".cache/VSGitHubCopilotLogs/traces"),
            ),
            "visualstudio-copilot.mac": (
                ("VOYAGER_VISUALSTUDIO_COPILOT_HOME", ""),
                ("HOME", "Library/Caches/VSGitHubCopilotLogs/traces"),
            ),
            "visualstudio-copilot.windows": (
                ("VOYAGER_VISUALSTUDIO_COPILOT_HOME", ""),
                ("LOCALAPPDATA", "Temp/VSGitHubCopilotLogs/traces"),
            ),
        },
        where="`%LOCALAPPDATA%\\Temp\\VSGitHubCopilotLogs\\traces\\*_VSGitHubCopilot_traces*.jsonl`",
        resume="none (IDE)",
        stores=("jsonl",),
    ),
    Agent(
        name="gemini-apps",
        label="Gemini Apps Takeout",
        module="voyager_sessions.ingest.adapters.gemini_apps",
        evidence="documented",
        evidence_note="agentsview `gemini_apps_takeout.go`",
        homes={
            # The same imports folder as the ChatGPT and Claude.ai exports; recorded `voyager import` paths come as hints.
            "gemini-apps": (("VOYAGER_IMPORTS", ""),),
        },
        where="`voyager import PATH` (Takeout's `My Activity/Gemini Apps/MyActivity.html`, its folder or zip); `$VOYAGER_IMPORTS`",
        resume="none (web chat)",
        stores=("html",),
        uses_hints=True,
    ),
    Agent(
        name="deepseek-tui",
        label="DeepSeek TUI / CodeWhale",
        module="voyager_sessions.ingest.adapters.deepseek_tui",
        evidence="documented",
        evidence_note="agentsview `deepseek_tui.go`",
        homes={
            # CodeWhale's home (sessions/ below it), then DeepSeek TUI's, the name before; no variable of its own.
            "deepseek-tui": (("VOYAGER_DEEPSEEK_TUI_HOME", ""), ("HOME", ".codewhale")),
            "deepseek-tui.legacy": (("VOYAGER_DEEPSEEK_TUI_HOME", ""), ("HOME", ".deepseek")),
        },
        where="`~/.codewhale/sessions/<id>.json` (and `~/.deepseek/sessions/`)",
        resume="none known",
        stores=("json",),
    ),
    Agent(
        name="qclaw",
        label="QClaw",
        module="voyager_sessions.ingest.adapters.qclaw",
        evidence="documented",
        evidence_note="agentsview `qclaw.go`",
        homes={
            # QClaw's state dir (agents/ below it); no variable of its own is documented.
            "qclaw": (("VOYAGER_QCLAW_HOME", ""), ("HOME", ".qclaw")),
        },
        where="`~/.qclaw/agents/*/sessions/<id>.jsonl`",
        resume="none (chat channels)",
        stores=("jsonl",),
    ),
    Agent(
        name="cortex",
        label="Cortex Code",
        module="voyager_sessions.ingest.adapters.cortex",
        evidence="documented",
        evidence_note="agentsview `cortex.go`",
        homes={
            # Cortex Code's dir in Snowflake's (conversations/ below it); no variable of its own is documented.
            "cortex": (("VOYAGER_CORTEX_HOME", ""), ("HOME", ".snowflake/cortex")),
        },
        where="`~/.snowflake/cortex/conversations/<uuid>.json` (+ `.history.jsonl`)",
        resume="none known",
        stores=("json", "jsonl"),
    ),
    Agent(
        name="workbuddy",
        label="WorkBuddy",
        module="voyager_sessions.ingest.adapters.workbuddy",
        evidence="documented",
        evidence_note="agentsview `workbuddy.go`",
        homes={
            # WorkBuddy's home (projects/ below it); no variable of its own is documented.
            "workbuddy": (("VOYAGER_WORKBUDDY_HOME", ""), ("HOME", ".workbuddy")),
        },
        where="`~/.workbuddy/projects/*/<session>.jsonl`",
        resume="none known",
        stores=("jsonl",),
    ),
)

#: The table itself: provider name -> row, in registration order (the built-in rows first, registered below).
ROWS: dict[str, Agent] = {}


def register(agent: Agent) -> Agent:
    """Add ``agent`` to the manifest (the hook a plugin or a test uses); its name and homes must be new."""
    if agent.name in ROWS:
        raise ValueError(f"agent {agent.name!r} is already registered")
    taken = set(agent.homes) & set(homes())
    if taken:
        raise ValueError(f"agent {agent.name!r} declares homes already declared: {sorted(taken)}")
    ROWS[agent.name] = agent
    _resume_options.clear()
    return agent


def unregister(name: str) -> None:
    """Remove a row :func:`register` added (built-in rows stay)."""
    if any(agent.name == name for agent in BUILTIN):
        raise ValueError(f"{name!r} is a built-in agent")
    ROWS.pop(name, None)
    _resume_options.clear()


def names() -> tuple[str, ...]:
    """Every provider name, in report order."""
    return tuple(ROWS)


def row(name: str) -> Agent:
    """The row of provider ``name``; KeyError if there is none."""
    return ROWS[name]


def homes() -> dict[str, HomeEntries]:
    """Home name -> entries, over every row."""
    return {home: entries for agent in ROWS.values() for home, entries in agent.homes.items()}


def agent_home(name: str, env: Env | None = None) -> Path | None:
    """The directory (or file) of home ``name``: the first of its variables that is set (None if none is)."""
    for agent in ROWS.values():
        if name in agent.homes:
            return resolve_home(agent.homes[name], env)
    raise KeyError(name)


def agent_dir(name: str, env: Env | None = None) -> Path:
    """The place of home ``name``, one whose entries end in ``HOME``'s default (every agent's own dir): never
    None, as :func:`agent_home`'s may be. A home without that default is a ``LookupError`` (a programming error:
    ask :func:`agent_home` and handle None)."""
    for agent in ROWS.values():
        if name in agent.homes:
            entries = agent.homes[name]
            place = resolve_home(entries, env) if any(var == "HOME" for var, _ in entries) else None
            if place is None:
                raise LookupError(f"home {name!r} has no HOME default: it may be unset (agent_home)")
            return place
    raise KeyError(name)


def agent_homes(names: Iterable[str], env: Env | None = None) -> list[Path]:
    """The directories of the homes ``names`` that are set (:func:`agent_home`), in that order, without repeats.

    For an agent with a home per platform (Linux/XDG, macOS) that may resolve to the same place.
    """
    out: list[Path] = []
    for name in names:
        home = agent_home(name, env)
        if home is not None and home not in out:
            out.append(home)
    return out


def agent_variables() -> list[str]:
    """Every variable the rows read but ``HOME`` (tests clear them all for a fake HOME; the server forwards them)."""
    found = {var for agent in ROWS.values() for entries in agent.homes.values() for var, _ in entries}
    found |= {var for agent in ROWS.values() for var in agent.variables}
    return sorted(found - {"HOME"})


#: An option in a ``resume`` cell's code: ``--resume``, ``-r``, ``--session-id``.
_OPTION = re.compile(r"(?<![\w-])--?[A-Za-z][A-Za-z0-9-]*")
_CODE_SPAN = re.compile(r"`([^`]*)`")
_resume_options: dict[str, frozenset[str]] = {}


def resume_options() -> frozenset[str]:
    """Every option a resume command may hold: those the rows' ``resume`` cells name in their code spans.

    The docs' cell is the declaration (``claude --resume <id>``): what a command holds beyond it
    came from somewhere else, and the only other source of its words is the agent's files.
    """
    if "all" not in _resume_options:
        cells = (span for agent in ROWS.values() for span in _CODE_SPAN.findall(agent.resume))
        _resume_options["all"] = frozenset(o for span in cells for o in _OPTION.findall(span))
    return _resume_options["all"]


def foreign_option(argv: Sequence[str]) -> str | None:
    """The first word of a resume command's ``argv`` (after its program, before a ``--``) that an agent would
    read as an option no row declares (:func:`resume_options`): a session id or path from a file that begins
    with ``-`` (``--dangerously-skip-permissions``). None when there is none.

    ``--flag=VALUE`` is the declared ``--flag`` with its value attached: the value is data whatever it holds.
    """
    declared = resume_options()
    for word in argv[1:]:
        if word == "--":
            return None  # every later word is an operand, whatever it begins with
        if word.startswith("-") and word.partition("=")[0] not in declared:
            return word
    return None


# The built-in rows come in through the same hook as any other (so its checks hold for them too).
for _agent in BUILTIN:
    register(_agent)


# -- the docs' tables ---------------------------------------------------------------------------------

#: Each generated table sits between these two lines in its file; the rest of the file is left alone.
BEGIN = "<!-- agents table: generated by `python -m voyager_sessions.ingest.manifest --tables`; edit the manifest -->"
END = "<!-- end of agents table -->"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def docs_table() -> str:
    """The summary table of ``docs/agents.md``: every row with its evidence, where it lives and its resume."""
    lines = [
        "| agent | provider | evidence (versions) | where (first place; all below) | resume |",
        "| --- | --- | --- | --- | --- |",
    ]
    lines += [
        f"| {_cell(a.label)} | `{a.name}` | {_cell(a.evidence_text())} | {_cell(a.where)} | {_cell(a.resume)} |"
        for a in ROWS.values()
    ]
    return "\n".join(lines)


def readme_table() -> str:
    """The README's table: every row with its evidence and where it lives."""
    lines = ["| agent | provider | evidence | where (default) |", "| --- | --- | --- | --- |"]
    lines += [
        f"| {_cell(a.label)} | `{a.name}` | {_cell(a.evidence_text())} | {_cell(a.where)} |" for a in ROWS.values()
    ]
    return "\n".join(lines)


#: Repository file -> the table generated into it.
TABLES = {"docs/agents.md": docs_table, "README.md": readme_table}


def with_table(text: str, table: str) -> str:
    """``text`` with the region between ``BEGIN`` and ``END`` replaced by ``table``; ValueError without markers."""
    start, end = text.find(BEGIN), text.find(END)
    if start < 0 or end < start:
        raise ValueError("no agents table markers")
    return f"{text[:start]}{BEGIN}\n{table}\n{text[end:]}"


def generated(root: Path) -> Iterator[tuple[Path, str, str]]:
    """(file, committed text, text with the table generated) for each file that carries a table."""
    for rel, table in TABLES.items():
        path = root / rel
        text = path.read_text("utf-8")
        yield path, text, with_table(text, table())


def main(argv: list[str] | None = None) -> int:
    """``--tables``: rewrite the tables under ``--root`` (default: here); ``--check``: only say which differ."""
    import argparse  # only for this command line, never on a scan's or a search's path

    parser = argparse.ArgumentParser(
        prog="python -m voyager_sessions.ingest.manifest", description=__doc__.splitlines()[0]
    )
    parser.add_argument(
        "--tables", action="store_true", help="rewrite the agent tables in docs/agents.md and README.md"
    )
    parser.add_argument("--check", action="store_true", help="with --tables: write nothing, exit 1 if a table is stale")
    parser.add_argument("--root", type=Path, default=Path.cwd(), help="the repository root (default: the current dir)")
    args = parser.parse_args(argv)
    if not args.tables:
        parser.print_help()
        return 2
    stale = 0
    for path, old, new in generated(args.root):
        if old != new:
            stale += 1
            if args.check:
                sys.stderr.write(f"{path}: agents table differs from the manifest\n")
            else:
                path.write_text(new, "utf-8")
                sys.stdout.write(f"rewrote {path}\n")
    return 1 if stale and args.check else 0


if __name__ == "__main__":
    raise SystemExit(main())
