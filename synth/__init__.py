"""Synthetic sessions in real provider formats, for the tests and the bench (a development package: not installed).

One neutral description of a conversation (``Conversation`` of ``Turn``s with
``ToolCall``s) is generated deterministically from a seed, then written in each
agent's real on-disk format by a writer function (``write_claude``, ``write_codex``
here; OpenCode's SQLite shapes in ``synth.opencode``; the Cline CLI's whole-file JSON
in ``synth.cline``). Tests and the bench share these builders so a format is described
once. Everything written is invented text: no real person's data.
"""

from __future__ import annotations

import base64
import hashlib
import random
import re
import uuid
from collections.abc import Iterable, Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Literal

import msgspec


class ToolCall(msgspec.Struct, kw_only=True):
    """A tool the assistant ran: its input, and its output when it finished."""

    call_id: str
    name: str
    input: dict
    output: str | None = None
    exit_code: int | None = None
    is_error: bool = False


class Turn(msgspec.Struct, kw_only=True):
    """One message: a person's prompt (``user``) or the assistant's reply with optional reasoning and tools."""

    role: Literal["user", "assistant"]
    text: str
    ts: float
    reasoning: str | None = None
    tool_calls: list[ToolCall] = []


class Conversation(msgspec.Struct, kw_only=True):
    """A whole session in provider-neutral form."""

    id: str
    cwd: str
    title: str | None
    model: str
    started: float
    turns: list[Turn]
    git_branch: str | None = None
    #: The remote URL Codex records in ``session_meta.git.repository_url`` (optional).
    git_repo: str | None = None


# Word pools for generated prose: English, code, Chinese, Japanese, Korean.
_EN = (
    "the index stores every event and the query planner picks the cheapest path while tests keep the "
    "parser honest about quoting rules retries backoff cache schema migration latency throughput"
).split()
_CODE = [
    "def",
    "return",
    "self.conn",
    "import",
    "pytest",
    "src/store/db.py",
    "foo.bar()",
    "my_var",
    "--verbose",
    "None",
]
_ZH = ["我们", "需要", "检查", "索引", "配置", "然后", "运行", "测试", "文件", "错误", "修复", "性能"]
_JA = ["インデックス", "を", "確認", "して", "ください", "テスト", "が", "失敗", "しました", "設定"]
_KO = ["인덱스를", "확인", "하고", "테스트를", "실행", "합니다", "설정", "오류", "수정"]


#: The default mix: half the words Chinese, Japanese or Korean (a CJK-dense stress case).
MIXED_POOLS: tuple[list[str], ...] = (_EN, _EN, _CODE, _ZH, _JA, _KO)
#: English and code, one word in twenty Chinese: closer to most people's sessions.
LATIN_POOLS: tuple[list[str], ...] = (_EN,) * 10 + (_CODE,) * 9 + (_ZH,)


def prose(rng: random.Random, words: int, pools: tuple[list[str], ...] = MIXED_POOLS) -> str:
    """A sentence-ish run of words drawn from ``pools``; deterministic for a given ``rng`` state."""
    out = []
    for _ in range(words):
        out.append(rng.choice(rng.choice(pools)))
    return " ".join(out)


def generate(
    seed: int,
    messages: int,
    *,
    session_id: str | None = None,
    start: float = 1_790_000_000.0,
    output_bytes: int = 400,
    cwd: str = "/home/dev/project",
    pools: tuple[list[str], ...] = MIXED_POOLS,
) -> Conversation:
    """A deterministic conversation of ``messages`` messages (user and assistant alternate).

    Every third assistant message runs a tool whose output is about ``output_bytes`` long;
    every other one carries reasoning. Words come from ``pools`` (see ``prose``). Same
    seed, same conversation, on every machine.
    """
    rng = random.Random(seed)
    sid = (
        session_id
        or f"{rng.getrandbits(32):08x}-{rng.getrandbits(16):04x}-4{rng.getrandbits(12):03x}-a{rng.getrandbits(12):03x}-{rng.getrandbits(48):012x}"
    )
    turns: list[Turn] = []
    ts = start
    for i in range(messages):
        ts += rng.uniform(1.0, 30.0)
        if i % 2 == 0:
            turns.append(Turn(role="user", text=prose(rng, rng.randint(5, 30), pools), ts=ts))
            continue
        calls = []
        if i % 3 == 0:
            out = []
            size = 0
            while size < output_bytes:
                line = prose(rng, 12, pools)
                out.append(line)
                size += len(line) + 1
            calls.append(
                ToolCall(
                    call_id=f"call_{seed}_{i}",
                    name="Bash",
                    input={"command": f"pytest -q tests/test_{i}.py"},
                    output="\n".join(out),
                    exit_code=rng.choice([0, 0, 0, 1]),
                )
            )
        turns.append(
            Turn(
                role="assistant",
                text=prose(rng, rng.randint(10, 60), pools),
                ts=ts,
                reasoning=prose(rng, 20, pools) if i % 4 == 1 else None,
                tool_calls=calls,
            )
        )
    return Conversation(id=sid, cwd=cwd, title=None, model="synthetic-model-1", started=start, turns=turns)


# ---------------------------------------------------------------------------
# Writers: a Conversation in each agent's real on-disk format.
#
# Every id, stamp and token count below is derived from the conversation itself
# (hashes, not randomness), so the same Conversation always gives the same bytes and a
# test can pin a file by its hash. Lines are encoded and written one at a time so the
# bench can write sessions of thousands of messages without building them in memory;
# pass ``turns=`` an iterator to stream turns that were never held in a list at all.
# ---------------------------------------------------------------------------

#: The agent versions the written files claim to come from.
CLAUDE_VERSION = "2.0.14"
CODEX_CLI_VERSION = "0.46.0"

_encode = msgspec.json.encode


def _digest(*parts: object) -> bytes:
    return hashlib.blake2b("\x1f".join(map(str, parts)).encode("utf-8"), digest_size=16).digest()


def det_uuid(*parts: object) -> str:
    """A version-4-shaped UUID derived from ``parts``: looks real, is reproducible."""
    return str(uuid.UUID(bytes=_digest(*parts), version=4))


def _det_token(prefix: str, *parts: object) -> str:
    return prefix + base64.b32encode(_digest(*parts)).decode("ascii").rstrip("=").lower()[:24]


def iso_z(ts: float) -> str:
    """``2026-11-02T09:14:03.250Z``: UTC with milliseconds, as both agents write it."""
    ms = int(round(ts * 1000))
    dt = datetime.fromtimestamp(ms // 1000, tz=timezone.utc)
    return dt.strftime("%Y-%m-%dT%H:%M:%S") + f".{ms % 1000:03d}Z"


def _tokens(text: str) -> int:
    # A rough, deterministic stand-in for a tokenizer: about four bytes a token.
    return max(1, len(text.encode("utf-8")) // 4)


def claude_project_dir(projects_dir: str | Path, cwd: str) -> Path:
    """``<projects>/<cwd with every non-alphanumeric character replaced by ->``, as Claude Code names it."""
    return Path(projects_dir) / re.sub(r"[^A-Za-z0-9]", "-", cwd)


def claude_lines(conv: Conversation, turns: Iterable[Turn] | None = None) -> Iterator[bytes]:
    """The JSONL lines (each ending in ``\n``) of ``conv`` as a Claude Code transcript.

    Each assistant turn is split the way Claude Code splits an API message: one line
    per content block (thinking, text, each tool_use) sharing ``message.id``; each
    finished tool call is answered by a user line with a ``tool_result`` block and the
    structured ``toolUseResult``. A ``summary`` line carries ``conv.title``.
    """
    sid = conv.id
    base = {
        "isSidechain": False,
        "userType": "external",
        "cwd": conv.cwd,
        "sessionId": sid,
        "version": CLAUDE_VERSION,
        "gitBranch": conv.git_branch or "",
    }
    parent: str | None = None
    n = 0
    cache_read = 0

    def line(record: dict[str, Any]) -> bytes:
        return _encode(record) + b"\n"

    def envelope(ts: float) -> tuple[str, str, str | None]:
        nonlocal parent, n
        n += 1
        me = det_uuid(sid, "line", n)
        prev, parent = parent, me
        return me, iso_z(ts), prev

    for t, turn in enumerate(conv.turns if turns is None else turns):
        if turn.role == "user":
            me, stamp, prev = envelope(turn.ts)
            yield line(
                {
                    "parentUuid": prev,
                    **base,
                    "type": "user",
                    "message": {"role": "user", "content": turn.text},
                    "uuid": me,
                    "timestamp": stamp,
                }
            )
            continue
        msg_id = _det_token("msg_01", sid, t)
        request_id = _det_token("req_011", sid, t)
        blocks: list[dict[str, Any]] = []
        if turn.reasoning:
            blocks.append(
                {
                    "type": "thinking",
                    "thinking": turn.reasoning,
                    "signature": base64.b64encode(_digest(sid, t, "sig") * 4).decode("ascii"),
                }
            )
        if turn.text:
            blocks.append({"type": "text", "text": turn.text})
        for call in turn.tool_calls:
            blocks.append({"type": "tool_use", "id": call.call_id, "name": call.name, "input": call.input})
        out_tokens = sum(
            _tokens(b.get("text") or b.get("thinking") or _encode(b.get("input")).decode()) for b in blocks
        )
        in_tokens = 3 + t % 7
        usage = {
            "input_tokens": in_tokens,
            "cache_creation_input_tokens": 50 + _tokens(turn.text),
            "cache_read_input_tokens": cache_read,
            "output_tokens": out_tokens,
            "service_tier": "standard",
        }
        cache_read += 50 + _tokens(turn.text)
        stop = "tool_use" if turn.tool_calls else "end_turn"
        for b, block in enumerate(blocks):
            me, stamp, prev = envelope(turn.ts + 0.2 * b)
            last = b == len(blocks) - 1
            message = {
                "model": conv.model,
                "id": msg_id,
                "type": "message",
                "role": "assistant",
                "content": [block],
                "stop_reason": stop if last else None,
                "stop_sequence": None,
                "usage": usage,
            }
            yield line(
                {
                    "parentUuid": prev,
                    **base,
                    "message": message,
                    "requestId": request_id,
                    "type": "assistant",
                    "uuid": me,
                    "timestamp": stamp,
                }
            )
        for c, call in enumerate(turn.tool_calls):
            if call.output is None:
                continue  # still running: no result line yet
            failed = call.is_error or (call.exit_code not in (None, 0))
            # Claude Code folds a failing command's exit code into the result text; it
            # records no exit_code field.
            content = f"Exit code {call.exit_code}\n{call.output}" if failed and call.exit_code else call.output
            if call.name == "Bash":
                structured: Any = (
                    f"Error: {content}"
                    if failed
                    else {"stdout": call.output, "stderr": "", "interrupted": False, "isImage": False}
                )
            else:
                structured = {"type": "text", "content": call.output}
            me, stamp, prev = envelope(turn.ts + 1.0 + 0.2 * c)
            yield line(
                {
                    "parentUuid": prev,
                    **base,
                    "type": "user",
                    "message": {
                        "role": "user",
                        "content": [
                            {"tool_use_id": call.call_id, "type": "tool_result", "content": content, "is_error": failed}
                        ],
                    },
                    "uuid": me,
                    "timestamp": stamp,
                    "toolUseResult": structured,
                }
            )
    if conv.title:
        yield line({"type": "summary", "summary": conv.title, "leafUuid": parent})


def write_claude(conv: Conversation, projects_dir: str | Path, *, turns: Iterable[Turn] | None = None) -> Path:
    """Write ``conv`` as ``<projects_dir>/<encoded cwd>/<id>.jsonl`` and return the path."""
    path = claude_project_dir(projects_dir, conv.cwd) / f"{conv.id}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as fh:
        for chunk in claude_lines(conv, turns):
            fh.write(chunk)
    return path


def codex_rollout_path(codex_home: str | Path, conv: Conversation) -> Path:
    """``<home>/sessions/YYYY/MM/DD/rollout-YYYY-MM-DDThh-mm-ss-<id>.jsonl`` (UTC, for reproducibility)."""
    dt = datetime.fromtimestamp(int(conv.started), tz=timezone.utc)
    return (
        Path(codex_home)
        / "sessions"
        / dt.strftime("%Y")
        / dt.strftime("%m")
        / dt.strftime("%d")
        / f"rollout-{dt.strftime('%Y-%m-%dT%H-%M-%S')}-{conv.id}.jsonl"
    )


def _codex_shell_output(call: ToolCall, duration: float) -> str:
    # Shell tools record their output as a JSON string with the exit code in metadata;
    # a tool without an exit code gets its plain text.
    if call.exit_code is None:
        return call.output or ""
    return _encode(
        {"output": call.output, "metadata": {"exit_code": call.exit_code, "duration_seconds": duration}}
    ).decode("utf-8")


def codex_lines(conv: Conversation, turns: Iterable[Turn] | None = None) -> Iterator[bytes]:
    """The JSONL lines of ``conv`` as a current Codex rollout (``{timestamp, type, payload}`` envelopes).

    As Codex does, every prompt is written twice (a ``response_item`` message and a
    ``user_message`` event), assistant text and reasoning twice (``response_item`` and
    ``agent_message``/``agent_reasoning`` events), and the environment is injected as a
    user-role ``<environment_context>`` message.
    """
    sid = conv.id

    def line(ts: float, kind: str, payload: dict[str, Any]) -> bytes:
        return _encode({"timestamp": iso_z(ts), "type": kind, "payload": payload}) + b"\n"

    meta: dict[str, Any] = {
        "id": sid,
        "timestamp": iso_z(conv.started),
        "cwd": conv.cwd,
        "originator": "codex_cli_rs",
        "cli_version": CODEX_CLI_VERSION,
        "instructions": None,
        "source": "cli",
        "model_provider": "openai",
    }
    if conv.git_branch or conv.git_repo:
        meta["git"] = {
            "commit_hash": hashlib.sha1(sid.encode()).hexdigest(),
            "branch": conv.git_branch,
            "repository_url": conv.git_repo,
        }
    yield line(conv.started, "session_meta", meta)
    env = (
        f"<environment_context>\n  <cwd>{conv.cwd}</cwd>\n  <approval_policy>on-request</approval_policy>\n"
        "  <sandbox_mode>workspace-write</sandbox_mode>\n  <network_access>restricted</network_access>\n"
        "  <shell>bash</shell>\n</environment_context>"
    )
    yield line(
        conv.started,
        "response_item",
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": env}]},
    )
    context = {
        "cwd": conv.cwd,
        "approval_policy": "on-request",
        "sandbox_policy": {
            "mode": "workspace-write",
            "network_access": False,
            "exclude_tmpdir_env_var": False,
            "exclude_slash_tmp": False,
        },
        "model": conv.model,
        "effort": "medium",
        "summary": "auto",
    }
    total_in = total_out = 0
    for t, turn in enumerate(conv.turns if turns is None else turns):
        ts = turn.ts
        if turn.role == "user":
            yield line(
                ts,
                "response_item",
                {"type": "message", "role": "user", "content": [{"type": "input_text", "text": turn.text}]},
            )
            yield line(ts, "event_msg", {"type": "user_message", "message": turn.text, "images": []})
            yield line(ts, "turn_context", context)
            continue
        step = 0

        def at() -> float:
            nonlocal step
            step += 1
            return ts + 0.25 * step  # noqa: B023 - called within the iteration

        if turn.reasoning:
            yield line(at(), "event_msg", {"type": "agent_reasoning", "text": turn.reasoning})
            yield line(
                at(),
                "response_item",
                {
                    "type": "reasoning",
                    "summary": [{"type": "summary_text", "text": turn.reasoning}],
                    "content": None,
                    "encrypted_content": "gAAAAAB"
                    + base64.urlsafe_b64encode(_digest(sid, t, "enc") * 6).decode("ascii"),
                },
            )
        for call in turn.tool_calls:
            command = call.input.get("command") if isinstance(call.input, dict) else None
            if call.name == "apply_patch":
                patch = (
                    call.input.get("patch")
                    if isinstance(call.input.get("patch"), str)
                    else _encode(call.input).decode()
                )
                yield line(
                    at(),
                    "response_item",
                    {
                        "type": "custom_tool_call",
                        "status": "completed",
                        "call_id": call.call_id,
                        "name": "apply_patch",
                        "input": patch,
                    },
                )
                kind_out = "custom_tool_call_output"
            elif isinstance(command, str):
                args = {"command": ["bash", "-lc", command], "workdir": conv.cwd, "timeout_ms": 120000}
                yield line(
                    at(),
                    "response_item",
                    {
                        "type": "function_call",
                        "name": "shell",
                        "arguments": _encode(args).decode("utf-8"),
                        "call_id": call.call_id,
                    },
                )
                kind_out = "function_call_output"
            else:
                yield line(
                    at(),
                    "response_item",
                    {
                        "type": "function_call",
                        "name": call.name,
                        "arguments": _encode(call.input).decode("utf-8"),
                        "call_id": call.call_id,
                    },
                )
                kind_out = "function_call_output"
            if call.output is not None:
                duration = round(0.1 + (len(call.output) % 97) / 10, 1)
                yield line(
                    at(),
                    "response_item",
                    {"type": kind_out, "call_id": call.call_id, "output": _codex_shell_output(call, duration)},
                )
        if turn.text:
            yield line(at(), "event_msg", {"type": "agent_message", "message": turn.text})
            yield line(
                at(),
                "response_item",
                {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": turn.text}]},
            )
        last_in, last_out = 2000 + 40 * t, _tokens(turn.text) + _tokens(turn.reasoning or "")
        total_in += last_in
        total_out += last_out
        usage = lambda i, o: {  # noqa: E731
            "input_tokens": i,
            "cached_input_tokens": i // 2,
            "output_tokens": o,  # noqa: E731
            "reasoning_output_tokens": 0,
            "total_tokens": i + o,
        }
        yield line(
            at(),
            "event_msg",
            {
                "type": "token_count",
                "info": {
                    "total_token_usage": usage(total_in, total_out),
                    "last_token_usage": usage(last_in, last_out),
                    "model_context_window": 272000,
                },
                "rate_limits": None,
            },
        )


def write_codex(
    conv: Conversation, codex_home: str | Path, *, turns: Iterable[Turn] | None = None, index_title: bool = True
) -> Path:
    """Write ``conv`` as a rollout under ``<codex_home>/sessions/YYYY/MM/DD/`` and return its path.

    With ``index_title`` and a ``conv.title``, also append the title to
    ``<codex_home>/session_index.jsonl`` the way Codex records a named thread.
    """
    path = codex_rollout_path(codex_home, conv)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as fh:
        for chunk in codex_lines(conv, turns):
            fh.write(chunk)
    if index_title and conv.title:
        entry = {"id": conv.id, "thread_name": conv.title, "updated_at": iso_z(conv.started)}
        with open(Path(codex_home) / "session_index.jsonl", "ab") as fh:
            fh.write(_encode(entry) + b"\n")
    return path
