"""Real agent CLIs (from the npm registry) run headless against scripted models on loopback, for the slow tests.

Each ``Scripted*`` class is one model API on 127.0.0.1 in the dialect an agent speaks (Gemini, OpenAI
Responses for Codex, Anthropic Messages for Claude Code, OpenAI chat completions for OpenCode): its first
answer calls Voyager's ``search`` tool for :data:`NEEDLE`, and it records the tool result the agent sends
back (and every request, so a test can read what the agent told its model). :func:`npm_bin` installs an
agent once into a cache under the system temp dir (``VOYAGER_E2E_NPM_CACHE`` moves it); without npm or the
registry the test is skipped, saying which.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

NEEDLE = "ERR_CONN_REFUSED_42"


def npm_bin(package: str, version: str, name: str) -> Path:
    """The ``name`` script of a cached npm install of ``package@version``; skips when npm or the registry is not there."""
    if shutil.which("npm") is None or shutil.which("node") is None:
        pytest.skip(f"npm/node not installed: the end-to-end agent test needs them to install {package}")
    cache = Path(os.environ.get("VOYAGER_E2E_NPM_CACHE") or Path(tempfile.gettempdir()) / "voyager-e2e-npm")
    prefix = cache / f"{package.rpartition('/')[2]}-{version}"
    exe = prefix / "node_modules" / ".bin" / name
    if not exe.exists():
        prefix.mkdir(parents=True, exist_ok=True)
        try:
            proc = subprocess.run(
                ["npm", "install", "--no-audit", "--no-fund", "--prefix", str(prefix), f"{package}@{version}"],
                capture_output=True,
                text=True,
                timeout=600,
                check=False,
            )
        except subprocess.TimeoutExpired:
            pytest.skip(f"npm install {package} timed out: the npm registry is unreachable or slow")
        if proc.returncode != 0 or not exe.exists():
            last = proc.stderr.strip().splitlines()[-1:] if proc.stderr.strip() else proc.returncode
            pytest.skip(f"npm install {package}@{version} failed (registry unreachable?): {last}")
    return exe


def agent_env(env: dict[str, str], **extra: str) -> dict[str, str]:
    """The agent's environment: no VOYAGER_* (the registration must carry them), no proxy for loopback."""
    run_env = {k: v for k, v in env.items() if not k.startswith("VOYAGER_")}
    for var in ("HTTPS_PROXY", "HTTP_PROXY", "https_proxy", "http_proxy", "ALL_PROXY", "all_proxy"):
        run_env.pop(var, None)
    run_env.update(NO_PROXY="127.0.0.1,localhost", no_proxy="127.0.0.1,localhost", **extra)
    return run_env


class ScriptedGemini:
    """A Gemini API on 127.0.0.1: turn one calls Voyager's search tool, then it records the tool's answer."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.function_responses: list[dict[str, Any]] = []
        self.offered: list[str] = []
        script = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                script.requests.append({"path": self.path, "body": body})
                reply = script.reply(body)
                if "countTokens" in self.path:
                    self._json({"totalTokens": 10})
                elif "streamGenerateContent" in self.path:
                    data = f"data: {json.dumps(reply)}\r\n\r\n".encode()
                    self.send_response(200)
                    self.send_header("Content-Type", "text/event-stream")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                else:
                    self._json(reply)

            def do_GET(self) -> None:
                self._json({"models": []})

            def _json(self, doc: dict) -> None:
                data = json.dumps(doc).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def reply(self, body: dict) -> dict:
        tools = [d.get("name", "") for t in body.get("tools") or [] for d in t.get("functionDeclarations") or []]
        search = next((n for n in tools if n == "search" or n.endswith("search") and "voyager" in n), None)
        if tools:
            self.offered = tools
        responses = [
            p["functionResponse"]
            for c in body.get("contents") or []
            for p in c.get("parts") or []
            if isinstance(p, dict) and "functionResponse" in p
        ]
        if responses:
            self.function_responses.extend(responses)
            return _candidate([{"text": "Found it."}])
        if search is not None:
            return _candidate([{"functionCall": {"name": search, "args": {"query": NEEDLE}}}])
        # Any side request (a routing or "next speaker" check): a plain JSON answer.
        return _candidate([{"text": '{"reasoning": "done", "next_speaker": "user"}'}])


def _candidate(parts: list[dict]) -> dict:
    return {
        "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
    }


class ScriptedResponses:
    """An OpenAI Responses API on 127.0.0.1 (server-sent events): turn one calls Voyager's search tool."""

    def __init__(self) -> None:
        self.outputs: list[str] = []
        self.offered: list[str] = []
        script = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                self._send("application/json", b'{"object": "list", "data": [], "models": []}')

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                item = script.reply(body)
                events = [
                    ("response.created", {"type": "response.created", "response": {"id": "resp_1"}}),
                    (
                        "response.output_item.done",
                        {"type": "response.output_item.done", "output_index": 0, "item": item},
                    ),
                    (
                        "response.completed",
                        {
                            "type": "response.completed",
                            "response": {
                                "id": "resp_1",
                                "usage": {
                                    "input_tokens": 1,
                                    "input_tokens_details": None,
                                    "output_tokens": 1,
                                    "output_tokens_details": None,
                                    "total_tokens": 2,
                                },
                            },
                        },
                    ),
                ]
                data = "".join(f"event: {e}\ndata: {json.dumps(d)}\n\n" for e, d in events).encode()
                self._send("text/event-stream", data)

            def _send(self, ctype: str, data: bytes) -> None:
                self.send_response(200)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def reply(self, body: dict) -> dict:
        outputs = [
            i for i in body.get("input") or [] if isinstance(i, dict) and i.get("type") == "function_call_output"
        ]
        if outputs:
            self.outputs += [
                o["output"] if isinstance(o.get("output"), str) else json.dumps(o.get("output")) for o in outputs
            ]
            return _message("Found it.")
        for tool in body.get("tools") or []:
            # Codex offers an MCP server's tools as one namespace, mcp__<server>, with its functions inside.
            inner = [t.get("name") for t in tool.get("tools") or []]
            self.offered += [f"{tool.get('name')}/{n}" for n in inner] or [str(tool.get("name") or tool.get("type"))]
            if tool.get("type") == "namespace" and tool.get("name") == "mcp__voyager" and "search" in inner:
                return {
                    "type": "function_call",
                    "id": "fc_1",
                    "namespace": "mcp__voyager",
                    "name": "search",
                    "arguments": json.dumps({"query": NEEDLE}),
                    "call_id": "call_1",
                }
        return _message("Voyager's tools were not offered.")


def _message(text: str) -> dict:
    return {"type": "message", "id": "msg_1", "role": "assistant", "content": [{"type": "output_text", "text": text}]}


class _Loopback:
    """A threaded HTTP server on 127.0.0.1 whose POSTs the subclass answers (``post``), every request recorded."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        script = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                self._send("application/json", b'{"object": "list", "data": []}')

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                script.requests.append({"path": self.path, "body": body})
                ctype, data = script.post(self.path, body)
                self._send(ctype, data)

            def _send(self, ctype: str, data: bytes) -> None:
                self.send_response(200)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    @property
    def port(self) -> int:
        return int(self.httpd.server_address[1])

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def post(self, path: str, body: dict[str, Any]) -> tuple[str, bytes]:
        raise NotImplementedError

    def told(self) -> str:
        """Everything the agent sent its model, as one text (what its prompt and tools said)."""
        return json.dumps([r["body"] for r in self.requests], ensure_ascii=False)


class ScriptedAnthropic(_Loopback):
    """An Anthropic Messages API (Claude Code): it loads Voyager's deferred search tool (ToolSearch), calls it,
    then answers; the tool's result is recorded."""

    TOOL = "mcp__voyager__search"

    def __init__(self) -> None:
        self.results: list[Any] = []
        super().__init__()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def post(self, path: str, body: dict[str, Any]) -> tuple[str, bytes]:
        if "count_tokens" in path:
            return "application/json", b'{"input_tokens": 10}'
        tools = [t.get("name") for t in body.get("tools") or []]
        msgs = body.get("messages") or []
        results = [
            c
            for m in msgs
            if isinstance(m.get("content"), list)
            for c in m["content"]
            if isinstance(c, dict) and c.get("type") == "tool_result"
        ]
        done = [r for r in results if r.get("tool_use_id") == "toolu_search"]
        if done:
            self.results += [r.get("content") for r in done]
            return self._answer(body, [{"type": "text", "text": "Found it."}], "end_turn")
        if self.TOOL in tools or (results and results[-1].get("tool_use_id") == "toolu_load"):
            call = {"type": "tool_use", "id": "toolu_search", "name": self.TOOL, "input": {"query": NEEDLE}}
            return self._answer(body, [call], "tool_use")
        if "ToolSearch" in tools and self.TOOL in json.dumps(msgs):  # deferred: its schema is fetched first
            load = {
                "type": "tool_use",
                "id": "toolu_load",
                "name": "ToolSearch",
                "input": {"query": f"select:{self.TOOL}"},
            }
            return self._answer(body, [load], "tool_use")
        return self._answer(body, [{"type": "text", "text": "ok"}], "end_turn")

    def _answer(self, body: dict[str, Any], blocks: list[dict[str, Any]], stop: str) -> tuple[str, bytes]:
        usage = {"input_tokens": 10, "output_tokens": 5}
        msg = {"id": "msg_1", "type": "message", "role": "assistant", "model": body.get("model", "m"), "content": []}
        msg.update(stop_reason=None, stop_sequence=None, usage=usage)
        if not body.get("stream"):
            return "application/json", json.dumps({**msg, "content": blocks, "stop_reason": stop}).encode()
        events: list[tuple[str, dict[str, Any]]] = [("message_start", {"type": "message_start", "message": msg})]
        for i, b in enumerate(blocks):
            if b["type"] == "text":
                start = {"type": "text", "text": ""}
                delta = {"type": "text_delta", "text": b["text"]}
            else:
                start = {**b, "input": {}}
                delta = {"type": "input_json_delta", "partial_json": json.dumps(b["input"])}
            events += [
                ("content_block_start", {"type": "content_block_start", "index": i, "content_block": start}),
                ("content_block_delta", {"type": "content_block_delta", "index": i, "delta": delta}),
                ("content_block_stop", {"type": "content_block_stop", "index": i}),
            ]
        events += [
            ("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop}, "usage": {"output_tokens": 5}}),
            ("message_stop", {"type": "message_stop"}),
        ]
        return "text/event-stream", "".join(f"event: {e}\ndata: {json.dumps(d)}\n\n" for e, d in events).encode()


class ScriptedChat(_Loopback):
    """An OpenAI chat-completions API (OpenCode's openai-compatible provider): it calls the tool whose name holds
    ``voyager`` and ends in ``search``, then answers; the tool's result is recorded."""

    def __init__(self) -> None:
        self.results: list[str] = []
        super().__init__()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def post(self, path: str, body: dict[str, Any]) -> tuple[str, bytes]:
        tools = [t.get("function", {}).get("name") for t in body.get("tools") or []]
        msgs = body.get("messages") or []
        answered = [m for m in msgs if m.get("role") == "tool"]
        search = next((n for n in tools if n and "voyager" in n and n.endswith("search")), None)
        if answered:
            self.results += [
                m["content"] if isinstance(m["content"], str) else json.dumps(m["content"]) for m in answered
            ]
            delta: dict[str, Any] = {"role": "assistant", "content": "Found it."}
            finish = "stop"
        elif search:
            call = {"name": search, "arguments": json.dumps({"query": NEEDLE})}
            delta = {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"index": 0, "id": "call_1", "type": "function", "function": call}],
            }
            finish = "tool_calls"
        else:
            delta, finish = {"role": "assistant", "content": "ok"}, "stop"
        base = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": int(time.time()), "model": "m"}
        usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
        if not body.get("stream"):
            message = {k: v for k, v in delta.items()}
            for c in message.get("tool_calls") or []:
                c.pop("index", None)
            doc = {
                **base,
                "object": "chat.completion",
                "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                "usage": usage,
            }
            return "application/json", json.dumps(doc).encode()
        chunks = [
            {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
            {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}], "usage": usage},
        ]
        return "text/event-stream", (
            "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"
        ).encode()


def document(text: str) -> dict[str, Any]:
    """The search document inside a tool result's text (agents wrap it: Codex's "Wall time: …\nOutput:\n",
    Gemini's ``<untrusted_context>``)."""
    return json.loads(text[text.index("{") : text.rindex("}") + 1])
