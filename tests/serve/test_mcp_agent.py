"""A real agent finds a planted session through ``voyager mcp``, registered by ``voyager mcp install``.

Gemini CLI (``@google/gemini-cli`` from the npm registry) runs headless in a fake HOME
with its model replaced by a scripted one on loopback (``GOOGLE_GEMINI_BASE_URL``): the
script answers the first turn with a call of Voyager's ``search`` tool and records the
``functionResponse`` the agent sends back, which must hold the planted Codex session.
The npm install is cached under the system temp dir (``VOYAGER_E2E_NPM_CACHE`` moves
it), so a machine pays it once; without npm or the registry the test is skipped, saying
which.
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

from tests.conftest import CODEX_SID
from tests.serve.conftest import cli, scanned_env

GEMINI_CLI = "@google/gemini-cli"
GEMINI_VERSION = "0.61.0"  # the version issue #23 was tried with
NEEDLE = "ERR_CONN_REFUSED_42"


def _gemini_bin() -> Path:
    """The ``gemini`` script of a cached npm install; skips when npm or the registry is not there."""
    if shutil.which("npm") is None or shutil.which("node") is None:
        pytest.skip("npm/node not installed: the end-to-end agent test needs them to install Gemini CLI")
    cache = Path(os.environ.get("VOYAGER_E2E_NPM_CACHE") or Path(tempfile.gettempdir()) / "voyager-e2e-npm")
    prefix = cache / f"gemini-cli-{GEMINI_VERSION}"
    exe = prefix / "node_modules" / ".bin" / "gemini"
    if not exe.exists():
        prefix.mkdir(parents=True, exist_ok=True)
        try:
            proc = subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--prefix", str(prefix),
                                   f"{GEMINI_CLI}@{GEMINI_VERSION}"], capture_output=True, text=True, timeout=600,
                                  check=False)
        except subprocess.TimeoutExpired:
            pytest.skip(f"npm install {GEMINI_CLI} timed out: the npm registry is unreachable or slow")
        if proc.returncode != 0 or not exe.exists():
            pytest.skip(f"npm install {GEMINI_CLI}@{GEMINI_VERSION} failed (registry unreachable?): "
                        f"{proc.stderr.strip().splitlines()[-1:] if proc.stderr.strip() else proc.returncode}")
    return exe


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
        responses = [p["functionResponse"] for c in body.get("contents") or [] for p in c.get("parts") or []
                     if isinstance(p, dict) and "functionResponse" in p]
        if responses:
            self.function_responses.extend(responses)
            return _candidate([{"text": "Found it."}])
        if search is not None:
            return _candidate([{"functionCall": {"name": search, "args": {"query": NEEDLE}}}])
        # Any side request (a routing or "next speaker" check): a plain JSON answer.
        return _candidate([{"text": '{"reasoning": "done", "next_speaker": "user"}'}])


def _candidate(parts: list[dict]) -> dict:
    return {"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15}}


@pytest.mark.slow
def test_gemini_cli_finds_a_planted_session_through_voyager_mcp(tmp_path):
    gemini = _gemini_bin()
    env = scanned_env(tmp_path)
    home = Path(env["HOME"])
    settings = home / ".gemini" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    # The user's own settings: nothing may reach the network (no update check, no usage statistics).
    before = ('{\n  "general": {"disableAutoUpdate": true, "disableUpdateNag": true},\n'
              '  "privacy": {"usageStatisticsEnabled": false},\n  "telemetry": {"enabled": false},\n'
              '  "security": {"auth": {"selectedType": "gemini-api-key"}}\n}\n')
    settings.write_text(before)
    installed = cli(env, "mcp", "install", "gemini")
    assert installed.code == 0, installed.err
    assert json.loads(settings.read_text())["general"] == json.loads(before)["general"]

    model = ScriptedGemini()
    try:
        run_env = {k: v for k, v in env.items() if not k.startswith("VOYAGER_")}  # the registration carries them
        run_env.update(GEMINI_API_KEY="test-key", GOOGLE_GEMINI_BASE_URL=model.url, NO_PROXY="127.0.0.1,localhost",
                       no_proxy="127.0.0.1,localhost", GEMINI_CLI_NO_RELAUNCH="true", GEMINI_CLI_TRUST_WORKSPACE="true")
        for var in ("HTTPS_PROXY", "HTTP_PROXY", "https_proxy", "http_proxy", "ALL_PROXY", "all_proxy"):
            run_env.pop(var, None)
        work = tmp_path / "proj"
        work.mkdir()
        proc = subprocess.run([str(gemini), "--yolo", "--allowed-mcp-server-names", "voyager", "-m", "gemini-2.5-flash",
                               "-p", "Which earlier session had the refused database connection? Use voyager."],
                              cwd=work, env=run_env, capture_output=True, text=True, timeout=240, check=False)
        detail = f"exit {proc.returncode}\nstdout: {proc.stdout[-2000:]}\nstderr: {proc.stderr[-3000:]}\n" \
                 f"offered: {model.offered}\npaths: {[r['path'] for r in model.requests]}"
        assert model.function_responses, detail
    finally:
        model.close()
    answer = json.dumps(model.function_responses)
    assert CODEX_SID in answer and NEEDLE in answer, answer[:3000]
