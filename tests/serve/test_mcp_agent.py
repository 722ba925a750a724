"""Real agents find a planted session through ``voyager mcp``, registered by ``voyager mcp install``.

Each agent CLI (from the npm registry) runs headless in a fake HOME with its model
replaced by a scripted one on loopback: the script answers the first turn with a call of
Voyager's ``search`` tool and records the tool result the agent sends back, which must
hold the planted Codex session.

* Gemini CLI (``@google/gemini-cli``): a Gemini API (``GOOGLE_GEMINI_BASE_URL``);
* Codex (``@openai/codex``, ``codex exec``): a Responses API (a custom model provider in
  its ``config.toml``). Codex gives an optional MCP server about a second to start; the
  registration's ``required = true`` and the fast handshake are what make the tools
  appear. Codex also says which session is calling, so its own session (which holds the
  search's arguments by then) must be left out of the hits.

npm installs are cached under the system temp dir (``VOYAGER_E2E_NPM_CACHE`` moves it),
so a machine pays each once; without npm or the registry a test is skipped, saying which.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.support.serving import cli, scanned_env
from tests.support.sessions import CODEX_SID

GEMINI_CLI = "@google/gemini-cli"
GEMINI_VERSION = "0.61.0"  # the version issue #23 was tried with
NEEDLE = "ERR_CONN_REFUSED_42"


def _npm_bin(package: str, version: str, name: str) -> Path:
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


def _agent_env(env: dict[str, str], **extra: str) -> dict[str, str]:
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


@pytest.mark.slow
def test_gemini_cli_finds_a_planted_session_through_voyager_mcp(tmp_path):
    gemini = _npm_bin(GEMINI_CLI, GEMINI_VERSION, "gemini")
    env = scanned_env(tmp_path)
    home = Path(env["HOME"])
    settings = home / ".gemini" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    # The user's own settings: nothing may reach the network (no update check, no usage statistics).
    before = (
        '{\n  "general": {"disableAutoUpdate": true, "disableUpdateNag": true},\n'
        '  "privacy": {"usageStatisticsEnabled": false},\n  "telemetry": {"enabled": false},\n'
        '  "security": {"auth": {"selectedType": "gemini-api-key"}}\n}\n'
    )
    settings.write_text(before)
    installed = cli(env, "mcp", "install", "gemini")
    assert installed.code == 0, installed.err
    assert json.loads(settings.read_text())["general"] == json.loads(before)["general"]

    model = ScriptedGemini()
    try:
        run_env = _agent_env(
            env,
            GEMINI_API_KEY="test-key",
            GOOGLE_GEMINI_BASE_URL=model.url,
            GEMINI_CLI_NO_RELAUNCH="true",
            GEMINI_CLI_TRUST_WORKSPACE="true",
        )
        work = tmp_path / "proj"
        work.mkdir()
        proc = subprocess.run(
            [
                str(gemini),
                "--yolo",
                "--allowed-mcp-server-names",
                "voyager",
                "-m",
                "gemini-2.5-flash",
                "-p",
                "Which earlier session had the refused database connection? Use voyager.",
            ],
            cwd=work,
            env=run_env,
            capture_output=True,
            text=True,
            timeout=240,
            check=False,
        )
        detail = (
            f"exit {proc.returncode}\nstdout: {proc.stdout[-2000:]}\nstderr: {proc.stderr[-3000:]}\n"
            f"offered: {model.offered}\npaths: {[r['path'] for r in model.requests]}"
        )
        assert model.function_responses, detail
    finally:
        model.close()
    answer = json.dumps(model.function_responses)
    assert CODEX_SID in answer and NEEDLE in answer, answer[:3000]


CODEX = "@openai/codex"
CODEX_VERSION = "0.169.0"  # the version issue #23 saw start without Voyager's tools


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


@pytest.mark.slow
def test_codex_exec_finds_a_planted_session_and_not_its_own(tmp_path):
    codex = _npm_bin(CODEX, CODEX_VERSION, "codex")
    env = scanned_env(tmp_path)
    codex_home = Path(env["HOME"]) / ".codex"
    model = ScriptedResponses()
    try:
        config = codex_home / "config.toml"
        config.parent.mkdir(parents=True, exist_ok=True)
        before = (
            'model = "gpt-5-codex"\nmodel_provider = "scripted"\n\n[model_providers.scripted]\n'
            f'name = "scripted"\nbase_url = "{model.url}"\nenv_key = "SCRIPTED_API_KEY"\n'
            'wire_api = "responses"\n'
        )
        config.write_text(before)
        installed = cli(env, "mcp", "install", "codex")
        assert installed.code == 0, installed.err
        assert config.read_text().startswith(before)
        work = tmp_path / "proj"
        work.mkdir()
        proc = subprocess.run(
            [
                str(codex),
                "exec",
                "--skip-git-repo-check",
                "--dangerously-bypass-approvals-and-sandbox",
                "Which earlier session had the refused database connection? Use voyager.",
            ],
            cwd=work,
            env=_agent_env(env, SCRIPTED_API_KEY="test-key"),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=240,
            check=False,
        )
        detail = (
            f"exit {proc.returncode}\nstdout: {proc.stdout[-2000:]}\nstderr: {proc.stderr[-3000:]}\n"
            f"offered: {model.offered}"
        )
        assert model.outputs, detail
    finally:
        model.close()
    # Codex wraps a tool's text ("Wall time: …\nOutput:\n<text>"): the document is the text after it.
    text = model.outputs[0]
    doc = json.loads(text[text.index("{") :])
    assert {h["session_id"] for h in doc["hits"]} == {f"codex:{CODEX_SID}"}, text[:3000]
    assert doc["query"] == NEEDLE
    own = [line.split(":", 1)[1].strip() for line in proc.stderr.splitlines() if line.startswith("session id:")]
    assert own and not any(own[0] in h["session_id"] for h in doc["hits"])
