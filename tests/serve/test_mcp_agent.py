"""Real agents find a planted session through ``voyager mcp``, registered by ``voyager mcp install``, and are
told only what is true for them.

Each agent CLI (from the npm registry, at the version whose behaviour docs/serve.md reports) runs headless
in a fake HOME with its model replaced by a scripted one on loopback (``tests/support/live_agents.py``):
the script answers the first turn with a call of Voyager's ``search`` tool and records the tool result
the agent sends back, which must hold the planted Codex session, and never the calling session where the
agent lets Voyager know it:

* Claude Code 2.1.332 (``@anthropic-ai/claude-code``): opens with ``server/discover`` (2026-07-28) and stays
  modern when it is answered; names its session in the server's environment;
* Codex 0.171.0 (``@openai/codex``, ``codex exec``): names it in each call's ``_meta``; gives an optional
  server about a second, so the registration is ``required``; records the call with its namespace;
* OpenCode 1.18.33 (``opencode-ai``): names nothing, but writes the call as running before it calls;
* Gemini CLI 0.61.0 (``@google/gemini-cli``): names nothing at all, and is told so.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.support.live_agents import (
    NEEDLE,
    ScriptedAnthropic,
    ScriptedChat,
    ScriptedGemini,
    ScriptedResponses,
    agent_env,
    document,
    npm_bin,
)
from tests.support.serving import cli, scanned_env
from tests.support.sessions import CODEX_SID

GEMINI_CLI = "@google/gemini-cli"
GEMINI_VERSION = "0.61.0"
CODEX = "@openai/codex"
CODEX_VERSION = "0.171.0"
CLAUDE_CODE = "@anthropic-ai/claude-code"
CLAUDE_VERSION = "2.1.332"
OPENCODE = "opencode-ai"
OPENCODE_VERSION = "1.18.33"
PROMPT = "Which earlier session had the refused database connection? Use voyager."


@pytest.mark.slow
def test_gemini_cli_finds_a_planted_session_through_voyager_mcp(tmp_path):
    gemini = npm_bin(GEMINI_CLI, GEMINI_VERSION, "gemini")
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
        run_env = agent_env(
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
    # What Gemini CLI passed on to its model of Voyager's instructions and tools: only what is true for it.
    told = json.dumps([r["body"] for r in model.requests], ensure_ascii=False)
    assert "Gemini CLI does not tell Voyager which session is calling" in told
    assert "session is left out" not in told


@pytest.mark.slow
def test_codex_exec_finds_a_planted_session_and_not_its_own(tmp_path):
    codex = npm_bin(CODEX, CODEX_VERSION, "codex")
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
            env=agent_env(env, SCRIPTED_API_KEY="test-key"),
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
    # Codex recorded the call as function `search` in namespace mcp__voyager: indexed under Codex's own name.
    assert cli(env, "scan", "-q", server=False).code == 0
    shown = json.loads(cli(env, "show", f"codex:{own[0]}", "--json", server=False).out)
    calls = [e for e in shown["events"] if e["kind"] == "tool_call"]
    assert [e["tool"] for e in calls] == ["mcp__voyager__search"], calls


@pytest.mark.slow
def test_claude_code_discovers_voyager_modern_and_its_own_session_is_left_out(tmp_path):
    claude = npm_bin(CLAUDE_CODE, CLAUDE_VERSION, "claude")
    env = scanned_env(tmp_path)
    installed = cli(env, "mcp", "install", "claude")
    assert installed.code == 0, installed.err
    model = ScriptedAnthropic()
    work = tmp_path / "proj"
    work.mkdir()
    try:
        run_env = agent_env(
            env,
            ANTHROPIC_BASE_URL=model.url,
            ANTHROPIC_API_KEY="sk-ant-test",
            CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
            DISABLE_AUTOUPDATER="1",
        )
        proc = subprocess.run(
            [str(claude), "-p", PROMPT, "--allowedTools", ScriptedAnthropic.TOOL, "--output-format", "json"],
            cwd=work,
            env=run_env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=240,
            check=False,
        )
        assert model.results, f"exit {proc.returncode}\nstdout: {proc.stdout[-2000:]}\nstderr: {proc.stderr[-2000:]}"
    finally:
        model.close()
    own = json.loads(proc.stdout)["session_id"]
    result = model.results[0]
    doc = document(result if isinstance(result, str) else json.dumps(result))
    assert f"codex:{CODEX_SID}" in {h["session_id"] for h in doc["hits"]}
    assert not any(own in h["session_id"] for h in doc["hits"])
    told = model.told()
    assert "Your own current session is left out of `search` results" in told  # the instructions reached it


@pytest.mark.slow
def test_opencode_finds_a_planted_session_and_its_own_is_left_out(tmp_path):
    opencode = npm_bin(OPENCODE, OPENCODE_VERSION, "opencode")
    env = scanned_env(tmp_path)
    # OpenCode keeps its store in the fake HOME's default place: Voyager reads it there, and so finds the caller.
    env.pop("VOYAGER_OPENCODE_HOME")
    model = ScriptedChat()
    config = Path(env["HOME"]) / ".config" / "opencode" / "opencode.json"
    config.parent.mkdir(parents=True)
    provider = {"npm": "@ai-sdk/openai-compatible", "name": "Scripted", "options": {"baseURL": model.url}}
    provider["models"] = {"m": {"name": "m", "tool_call": True}}
    before = {"$schema": "https://opencode.ai/config.json", "autoupdate": False, "share": "disabled"}
    config.write_text(json.dumps({**before, "provider": {"scripted": provider}, "model": "scripted/m"}, indent=2))
    try:
        installed = cli(env, "mcp", "install", "opencode")
        assert installed.code == 0, installed.err
        work = tmp_path / "proj"
        work.mkdir()
        run_env = agent_env(env, OPENCODE_DISABLE_AUTOUPDATE="1", OPENCODE_DISABLE_MODELS_FETCH="1")
        runs = []
        for _ in range(2):  # the second run finds the first (its call holds the needle), never itself
            proc = subprocess.run(
                [str(opencode), "run", PROMPT],
                cwd=work,
                env=run_env,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=240,
                check=False,
            )
            assert len(model.results) == len(runs) + 1, (
                f"exit {proc.returncode}\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}"
            )
            runs.append(document(model.results[-1]))
    finally:
        model.close()
    db = Path(env["HOME"]) / ".local" / "share" / "opencode" / "opencode.db"
    import sqlite3

    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    sessions = [f"opencode:{sid}" for (sid,) in conn.execute("SELECT id FROM session ORDER BY time_created")]
    conn.close()
    assert len(sessions) == 2
    first, second = ({h["session_id"] for h in doc["hits"]} for doc in runs)
    assert f"codex:{CODEX_SID}" in first and sessions[0] not in first
    assert sessions[0] in second and sessions[1] not in second
