"""Synthetic Cline CLI sessions in 3.0.65's on-disk shape, from neutral ``synth.Conversation``s.

Owns the description of the Cline CLI's session store for the tests and the bench: a
whole-file JSON format, which the JSONL writers in ``synth`` and the SQLite ones in
``synth.opencode`` do not cover. The CLI keeps a session as

* ``<data dir>/sessions/<id>/<id>.messages.json``: one pretty-printed JSON document
  (``JSON.stringify(doc, null, 2)`` and a newline) holding every message, rewritten
  whole after each message, so a new message costs the agent, and a reader, the
  whole file again;
* ``<data dir>/sessions/<id>/<id>.json``: the manifest (cwd, model, times, the first
  prompt, and a title that is that prompt cut to 120 characters).

Where the shape comes from: the capture the real CLI 3.0.65 wrote
(``tests/fixtures/agents/cline-3.0.65``; docs/agents.md "Cline CLI 3.0.65"): key
order, the ``<user_input mode="act">`` wrapper around what a person typed, ``msg_`` ids,
epoch-millisecond ``ts``, ``modelInfo``/``metrics`` on assistant messages, and
``run_commands`` calls answered by a ``user`` message of ``tool_result`` blocks, one
``{query, result, success}`` per command. Not observed, so invented here: how a failing
command reads (``success: false``, and ``[Command exited with code N]``, the CLI's
wording per docs/agents.md, on a line after the output), and tools other than a shell
command, which keep their neutral name and input and answer with their output as a
string. The system prompt is invented filler of the real one's size (about 4 KB).

Every id, stamp and count is derived from the conversation (hashes, not randomness), and
message ids depend only on the session and the turn's position, so writing the first
``n`` turns and then ``n + 1`` gives the same ``n`` messages again, as the CLI's rewrite does.
Everything written is invented text.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import msgspec

from synth import Conversation, ToolCall, Turn, _digest, _tokens, det_uuid, iso_z

#: The CLI version the written files claim to come from.
CLINE_VERSION = "3.0.65"
#: The model provider the capture ran against (a local OpenAI-compatible server).
PROVIDER = "openai-compatible"
#: The CLI's shell tool: a list of commands in, one result per command out.
SHELL_TOOL = "run_commands"

#: A Cline session id: epoch milliseconds, ``_``, five of [a-z0-9] (``1796113544695_44rte``).
_SESSION_ID = re.compile(r"\d{13}_[a-z0-9]{5}")
_BASE36 = "0123456789abcdefghijklmnopqrstuvwxyz"

#: The CLI's system prompt is about 4 KB of instructions; this stands in for its size, not its words.
SYSTEM_PROMPT = "You are Cline, an AI coding agent (synthetic session).\n\n" + "\n".join(
    f"{i}. Synthetic instruction {i}: read the task, use the tools one step at a time, check every result, "
    "and report what was done in a few sentences."
    for i in range(1, 31)
)


def _ms(ts: float) -> int:
    return int(round(ts * 1000))


def session_id(conv: Conversation) -> str:
    """``conv.id`` when it is already a Cline id, else one derived from its start time and id."""
    if _SESSION_ID.fullmatch(conv.id):
        return conv.id
    n = int.from_bytes(_digest(conv.id, "cline-id"), "big")
    tail = "".join(_BASE36[(n >> (6 * i)) % 36] for i in range(5))
    return f"{_ms(conv.started)}_{tail}"


def _msg_id(sid: str, *parts: object) -> str:
    # ``msg_`` and eight characters of the URL-safe alphabet, as the CLI's ids look.
    return "msg_" + base64.urlsafe_b64encode(_digest(sid, *parts)).decode("ascii")[:8]


def _wrap(text: str, mode: str = "act") -> str:
    return f'<user_input mode="{mode}">{text}</user_input>'


def _command(call: ToolCall) -> str | None:
    command = call.input.get("command") if isinstance(call.input, dict) else None
    return command if isinstance(command, str) else None


def _metrics(turn: Turn, t: int) -> dict[str, int]:
    out = _tokens(turn.text) + _tokens(turn.reasoning or "")
    return {"inputTokens": 2000 + 40 * t, "outputTokens": out, "cacheReadTokens": 0, "cacheWriteTokens": 0}


def _tool_use(call: ToolCall) -> dict[str, Any]:
    command = _command(call)
    if command is not None:
        return {"type": "tool_use", "id": call.call_id, "name": SHELL_TOOL, "input": {"commands": [command]}}
    return {"type": "tool_use", "id": call.call_id, "name": call.name, "input": call.input}


def _tool_result(call: ToolCall) -> dict[str, Any]:
    output = call.output or ""
    command = _command(call)
    if command is None:
        return {"type": "tool_result", "tool_use_id": call.call_id, "name": call.name, "content": output}
    failed = call.is_error or call.exit_code not in (None, 0)
    if call.exit_code not in (None, 0):
        output += ("" if not output or output.endswith("\n") else "\n") + f"[Command exited with code {call.exit_code}]"
    return {
        "type": "tool_result",
        "tool_use_id": call.call_id,
        "name": SHELL_TOOL,
        "content": [{"query": command, "result": output, "success": not failed}],
    }


def messages(conv: Conversation, turns: Iterable[Turn] | None = None) -> list[dict[str, Any]]:
    """The ``messages`` list of ``conv`` as the CLI keeps it.

    A prompt is one ``user`` message (wrapped in ``<user_input>``); an assistant turn is one
    ``assistant`` message with its thinking, text and ``tool_use`` blocks, followed, when any
    of its tools finished, by one ``user`` message holding every ``tool_result``.
    """
    sid = session_id(conv)
    model = {"id": conv.model, "provider": PROVIDER}
    out: list[dict[str, Any]] = []
    for t, turn in enumerate(conv.turns if turns is None else turns):
        ts = _ms(turn.ts)
        if turn.role == "user":
            out.append(
                {
                    "id": det_uuid(sid, "prompt", t),
                    "role": "user",
                    "content": [{"type": "text", "text": _wrap(turn.text)}],
                    "ts": ts,
                }
            )
            continue
        blocks: list[dict[str, Any]] = []
        if turn.reasoning:
            blocks.append({"type": "thinking", "thinking": turn.reasoning})
        if turn.text:
            blocks.append({"type": "text", "text": turn.text})
        blocks += [_tool_use(c) for c in turn.tool_calls]
        out.append(
            {
                "id": _msg_id(sid, "reply", t),
                "role": "assistant",
                "content": blocks,
                "ts": ts,
                "modelInfo": model,
                "metrics": _metrics(turn, t),
            }
        )
        results = [_tool_result(c) for c in turn.tool_calls if c.output is not None]
        if results:
            out.append({"id": _msg_id(sid, "results", t), "role": "user", "content": results, "ts": ts + 65})
    return out


def document(conv: Conversation, turns: Iterable[Turn] | None = None) -> dict[str, Any]:
    """The whole ``<id>.messages.json`` document."""
    sid = session_id(conv)
    msgs = messages(conv, turns)
    last = msgs[-1]["ts"] if msgs else _ms(conv.started)
    return {
        "version": 1,
        "updated_at": iso_z((last + 40) / 1000),
        "agent": "lead",
        "sessionId": sid,
        "origin": {"source": "cli", "mode": "user", "sessionId": sid, "version": CLINE_VERSION},
        "messages": msgs,
        "system_prompt": SYSTEM_PROMPT,
    }


def manifest(conv: Conversation, messages_path: str | Path, turns: Iterable[Turn] | None = None) -> dict[str, Any]:
    """The ``<id>.json`` manifest: the first prompt (and the title cut from it), cwd, model, times, token usage."""
    sid = session_id(conv)
    turns = list(conv.turns if turns is None else turns)
    prompt = next((t.text for t in turns if t.role == "user"), "")
    ended = (turns[-1].ts if turns else conv.started) + 2.0
    replies = [(t, turn) for t, turn in enumerate(turns) if turn.role == "assistant"]
    usage = {
        "inputTokens": sum(_metrics(turn, t)["inputTokens"] for t, turn in replies),
        "outputTokens": sum(_metrics(turn, t)["outputTokens"] for t, turn in replies),
        "cacheReadTokens": 0,
        "cacheWriteTokens": 0,
        "totalCost": 0,
    }
    team = base64.urlsafe_b64encode(_digest(sid, "team")).decode("ascii")[:5]
    return {
        "version": 1,
        "session_id": sid,
        "source": "cli",
        "pid": 1000 + int.from_bytes(_digest(sid, "pid")[:2], "big"),
        "started_at": iso_z(conv.started),
        "ended_at": iso_z(ended),
        "exit_code": 0,
        "status": "completed",
        "interactive": False,
        "provider": PROVIDER,
        "model": conv.model,
        "cwd": conv.cwd,
        "workspace_root": conv.cwd,
        "team_name": f"team-{team}",
        "enable_tools": True,
        "enable_spawn": True,
        "enable_teams": True,
        "prompt": prompt,
        "metadata": {
            "sessionHistoryOrigin": {"mode": "user", "version": CLINE_VERSION},
            # The CLI makes no title call: the title is the first prompt cut (JavaScript counts
            # UTF-16 units; the same as Python's characters for the BMP text synth writes).
            "title": prompt[:120],
            "totalCost": 0,
            "aggregatedAgentsCost": 0,
            "usage": usage,
            "aggregateUsage": dict(usage),
        },
        "messages_path": str(messages_path),
    }


def render(doc: dict[str, Any]) -> bytes:
    """``doc`` as the CLI writes it: two-space indented JSON, non-ASCII as is, and a final newline.

    (Byte for byte what ``JSON.stringify(doc, null, 2)`` gives; checked against the capture.)
    """
    return msgspec.json.format(msgspec.json.encode(doc), indent=2) + b"\n"


def messages_path(data_dir: str | Path, conv: Conversation) -> Path:
    """``<data dir>/sessions/<id>/<id>.messages.json``."""
    sid = session_id(conv)
    return Path(data_dir) / "sessions" / sid / f"{sid}.messages.json"


def write_cline(conv: Conversation, data_dir: str | Path, *, turns: Iterable[Turn] | None = None) -> Path:
    """Write ``conv`` (or its ``turns``) as a CLI session under ``data_dir`` and return the messages file's path.

    Writing again with more turns rewrites both files whole, as the CLI does after every
    message. Here that is in place (truncate, write); whether the CLI writes in place or
    through a rename was not observed, and the scan treats a new inode as a change too.
    """
    turns = list(conv.turns if turns is None else turns)
    path = messages_path(data_dir, conv)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(render(document(conv, turns)))
    path.with_name(f"{session_id(conv)}.json").write_bytes(render(manifest(conv, path, turns)))
    return path
