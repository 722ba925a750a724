"""``voyager mcp install AGENT`` / ``uninstall``: every agent's config, in a fake HOME, through the real CLI."""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path

import pytest

from tests.support.run import run_subprocess, voyager_exe

#: agent -> (config path under HOME, the keys down to the server list, a config the user already had)
CASES = {
    "claude": (
        ".claude.json",
        ["mcpServers"],
        '{\n  "numStartups": 12,\n  "projects": {"/home/x": {"allowedTools": []}},\n'
        '  "mcpServers": {\n    "other": {"command": "other-mcp", "args": []}\n  },\n  "zzz": "последний"\n}\n',
    ),
    "gemini": (
        ".gemini/settings.json",
        ["mcpServers"],
        '{\n    "theme": "Default",\n    "security": {"auth": {"selectedType": "gemini-api-key"}}\n}\n',
    ),
    "qwen": (".qwen/settings.json", ["mcpServers"], '{"mcpServers": {}, "model": {"name": "qwen3-coder"}}'),
    "opencode": (
        ".config/opencode/opencode.json",
        ["mcp"],
        '{\n  "$schema": "https://opencode.ai/config.json",\n  "model": "anthropic/claude-sonnet-4",\n'
        '  "mcp": {\n    "fs": {"type": "local", "command": ["fs-mcp"], "enabled": true}\n  }\n}\n',
    ),
    "cursor": (".cursor/mcp.json", ["mcpServers"], '{"mcpServers":{"a":{"command":"a"}}}'),
    "copilot": (
        ".copilot/mcp-config.json",
        ["mcpServers"],
        '{\n\t"mcpServers": {\n\t\t"gh": {"type": "http", "url": "https://x"}\n\t}\n}',
    ),
    "windsurf": (".codeium/windsurf/mcp_config.json", ["mcpServers"], "{}\n"),
}


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("VOYAGER_", "XDG_"))
        and k not in ("CODEX_HOME", "CLAUDE_CONFIG_DIR", "GEMINI_CLI_HOME", "COPILOT_HOME")
    }
    env["HOME"] = str(home)
    env.update(extra)
    return env


def _command() -> list[str]:
    exe = voyager_exe()
    return [exe[0], "mcp"] if len(exe) == 1 else [sys.executable, "-m", "voyager_sessions", "mcp"]


def _get(doc: dict, keys: list[str]) -> dict:
    for k in keys:
        doc = doc[k]
    return doc


@pytest.mark.parametrize("agent", sorted(CASES))
def test_install_adds_one_entry_and_changes_nothing_else(tmp_path, agent):
    rel, keys, before = CASES[agent]
    env = _env(tmp_path, XDG_DATA_HOME=str(tmp_path / "xdg"))
    path = Path(env["HOME"]) / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(before, encoding="utf-8")
    path.chmod(0o640)

    shown = run_subprocess("mcp", "install", agent, "--print", env=env)
    assert shown.returncode == 0, shown.stderr
    assert path.read_text(encoding="utf-8") == before  # --print changes nothing
    assert str(path) in shown.stdout and "VOYAGER_HOME" in shown.stdout

    got = run_subprocess("mcp", "install", agent, env=env)
    assert got.returncode == 0, got.stderr
    assert got.stderr.count("\n") == 1 and str(path) in got.stderr
    after = path.read_text(encoding="utf-8")
    doc = json.loads(after)
    entry = _get(doc, keys)["voyager"]
    # XDG_DATA_HOME resolved to the data dir (an agent may not pass it on), and kept: OpenCode's sessions are under it.
    want_env = {"VOYAGER_HOME": str(tmp_path / "xdg" / "voyager"), "XDG_DATA_HOME": str(tmp_path / "xdg")}
    cmd = _command()
    if agent == "opencode":
        assert entry == {"type": "local", "command": cmd, "enabled": True, "environment": want_env}
    else:
        assert entry["command"] == cmd[0] and entry["args"] == cmd[1:]
        assert entry["env"] == want_env
    assert os.path.isabs(entry["command"] if agent != "opencode" else entry["command"][0])
    # Everything else is as it was: same keys in the same order, the same bytes once our entry is taken out.
    old = json.loads(before)
    without = json.loads(after)
    servers = _get(without, keys)
    del servers["voyager"]
    if keys[-1] not in _get(old, keys[:-1]):
        del _get(without, keys[:-1])[keys[-1]]
    assert without == old and list(without) == list(old)
    assert Path(str(path) + ".voyager-backup").read_text(encoding="utf-8") == before
    assert stat.S_IMODE(path.stat().st_mode) == 0o640

    again = run_subprocess("mcp", "install", agent, env=env)
    assert again.returncode == 0 and "nothing changed" in again.stderr
    assert path.read_text(encoding="utf-8") == after

    gone = run_subprocess("mcp", "uninstall", agent, env=env)
    assert gone.returncode == 0, gone.stderr
    restored = path.read_text(encoding="utf-8")
    if agent in ("gemini", "windsurf"):  # install added the server list itself; it stays, empty
        assert json.loads(restored) == {**json.loads(before), keys[0]: {}}
    else:
        assert restored == before
    assert run_subprocess("mcp", "uninstall", agent, env=env).returncode == 1


def test_a_new_config_file_is_created_private(tmp_path):
    env = _env(tmp_path, VOYAGER_HOME="rel/data")
    got = run_subprocess("mcp", "install", "cursor", env=env)
    assert got.returncode == 0, got.stderr
    path = Path(env["HOME"]) / ".cursor" / "mcp.json"
    entry = json.loads(path.read_text())["mcpServers"]["voyager"]
    assert entry["env"]["VOYAGER_HOME"] == os.path.abspath("rel/data")  # as the installing shell meant it
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert not Path(str(path) + ".voyager-backup").exists()


def test_agent_location_variables_travel_with_the_server(tmp_path):
    codex_home = tmp_path / "codex-home"
    env = _env(tmp_path, CODEX_HOME=str(codex_home), CLAUDE_CONFIG_DIR=str(tmp_path / "claude-conf"))
    assert run_subprocess("mcp", "install", "gemini", env=env).returncode == 0
    entry = json.loads((Path(env["HOME"]) / ".gemini" / "settings.json").read_text())["mcpServers"]["voyager"]
    assert entry["env"]["CODEX_HOME"] == str(codex_home)
    assert entry["env"]["CLAUDE_CONFIG_DIR"] == str(tmp_path / "claude-conf")
    # Claude Code's own config moves with CLAUDE_CONFIG_DIR.
    assert run_subprocess("mcp", "install", "claude", env=env).returncode == 0
    assert "voyager" in json.loads((tmp_path / "claude-conf" / ".claude.json").read_text())["mcpServers"]


CODEX_BEFORE = """\
# my settings
model = "o3"
approval_policy = "on-request"

[mcp_servers.github]
command = "gh-mcp"
args = []

# profiles below
[profiles.fast]
model = "o4-mini"
"""


def test_codex_gets_a_required_table_and_the_rest_of_the_toml_is_untouched(tmp_path):
    codex_home = tmp_path / "codex"
    codex_home.mkdir()
    path = codex_home / "config.toml"
    path.write_text(CODEX_BEFORE)
    env = _env(tmp_path, CODEX_HOME=str(codex_home), XDG_DATA_HOME=str(tmp_path / "xdg"))
    assert run_subprocess("mcp", "install", "codex", env=env).returncode == 0
    after = path.read_text()
    assert after.startswith(CODEX_BEFORE)  # appended: every byte before it is the user's
    if sys.version_info >= (3, 11):
        import tomllib

        doc = tomllib.loads(after)
        entry = doc["mcp_servers"]["voyager"]
        assert entry["command"] == _command()[0] and entry["args"] == _command()[1:]
        assert entry["required"] is True  # Codex otherwise gives an optional server ~1 s, then goes on without it
        assert entry["env"] == {
            "VOYAGER_HOME": str(tmp_path / "xdg" / "voyager"),
            "CODEX_HOME": str(codex_home),
            "XDG_DATA_HOME": str(tmp_path / "xdg"),
        }
        assert doc["profiles"] == {"fast": {"model": "o4-mini"}} and doc["mcp_servers"]["github"]["command"] == "gh-mcp"
    # A changed install (another data dir) replaces our tables in place, nothing else.
    env["XDG_DATA_HOME"] = str(tmp_path / "other")
    assert run_subprocess("mcp", "install", "codex", env=env).returncode == 0
    changed = path.read_text()
    assert changed == after.replace(str(tmp_path / "xdg"), str(tmp_path / "other"))
    assert run_subprocess("mcp", "uninstall", "codex", env=env).returncode == 0
    assert path.read_text() == CODEX_BEFORE


def test_codex_table_in_the_middle_is_replaced_where_it_stands(tmp_path):
    codex_home = tmp_path / "codex"
    codex_home.mkdir()
    path = codex_home / "config.toml"
    mid = (
        'model = "o3"\n\n[mcp_servers.voyager]\ncommand = "voyager"\nargs = ["mcp"]\n\n'
        '# keep me\n[profiles.a]\nmodel = "x"\n'
    )
    path.write_text(mid)
    env = _env(tmp_path, CODEX_HOME=str(codex_home))
    assert run_subprocess("mcp", "install", "codex", env=env).returncode == 0
    after = path.read_text()
    assert after.startswith('model = "o3"\n\n[mcp_servers.voyager]\n')
    assert after.endswith('\n\n# keep me\n[profiles.a]\nmodel = "x"\n')
    assert after.count("[mcp_servers.voyager]") == 1 and "required = true" in after


def test_opencode_2_keeps_servers_under_mcp_servers(tmp_path):
    conf = tmp_path / "home" / ".config" / "opencode"
    conf.mkdir(parents=True)
    path = conf / "opencode.json"
    before = '{\n  "mcp": {\n    "servers": {\n      "fs": {"type": "local", "command": ["fs"]}\n    }\n  }\n}\n'
    path.write_text(before)
    env = _env(tmp_path)
    assert run_subprocess("mcp", "install", "opencode", env=env).returncode == 0
    doc = json.loads(path.read_text())
    assert set(doc["mcp"]) == {"servers"} and set(doc["mcp"]["servers"]) == {"fs", "voyager"}
    assert run_subprocess("mcp", "uninstall", "opencode", env=env).returncode == 0
    assert path.read_text() == before


def test_a_broken_config_or_an_unknown_agent_is_one_line_and_nothing_changes(tmp_path):
    env = _env(tmp_path)
    path = Path(env["HOME"]) / ".gemini" / "settings.json"
    path.parent.mkdir(parents=True)
    path.write_text('{"theme": "x",,}')
    got = run_subprocess("mcp", "install", "gemini", env=env)
    assert got.returncode == 2 and got.stderr.startswith("voyager: ") and got.stderr.count("\n") == 1
    assert "not valid JSON" in got.stderr and "nothing changed" in got.stderr
    assert path.read_text() == '{"theme": "x",,}'
    unknown = run_subprocess("mcp", "install", "vim", env=env)
    assert unknown.returncode == 2 and unknown.stderr.startswith("voyager: unknown agent 'vim': one of claude, codex")


def test_a_linked_config_is_edited_where_it_lives(tmp_path):
    env = _env(tmp_path)
    real = tmp_path / "dotfiles" / "claude.json"
    real.parent.mkdir()
    real.write_text('{"theme": "dark"}\n')
    link = Path(env["HOME"]) / ".claude.json"
    link.symlink_to(real)
    assert run_subprocess("mcp", "install", "claude", env=env).returncode == 0
    assert link.is_symlink() and "voyager" in json.loads(real.read_text())["mcpServers"]
    assert (tmp_path / "dotfiles" / "claude.json.voyager-backup").read_text() == '{"theme": "dark"}\n'


def test_opencode_jsonc_is_edited_with_its_comments_kept(tmp_path):
    env = _env(tmp_path)
    conf = Path(env["HOME"]) / ".config" / "opencode"
    conf.mkdir(parents=True)
    before = '{\n  // mine\n  "model": "x" /* the one I pay for */\n}\n'
    (conf / "opencode.jsonc").write_text(before)
    got = run_subprocess("mcp", "install", "opencode", env=env)
    assert got.returncode == 0, got.stderr
    assert not (conf / "opencode.json").exists()  # OpenCode reads both: the user's own file is the one edited
    after = (conf / "opencode.jsonc").read_text()
    assert after.startswith('{\n  // mine\n  "model": "x", /* the one I pay for */\n  "mcp": {')
    assert run_subprocess("mcp", "uninstall", "opencode", env=env).returncode == 0
    assert (conf / "opencode.jsonc").read_text() == before.replace("*/\n", '*/\n  "mcp": {}\n').replace(
        '"x" /*', '"x", /*'
    )


def _unchanged(path: Path, before: str) -> None:
    assert path.read_text() == before
    assert not Path(str(path) + ".voyager-backup").exists()
    assert not [p for p in path.parent.iterdir() if p.name.startswith(f".{path.name}.voyager-")]


def test_a_read_only_config_is_never_replaced(tmp_path):
    """Issue 38.5: a read-only settings file was replaced without a word (root included: os.access says yes)."""
    env = _env(tmp_path)
    path = Path(env["HOME"]) / ".gemini" / "settings.json"
    path.parent.mkdir(parents=True)
    path.write_text('{"theme": "x"}\n')
    path.chmod(0o444)
    got = run_subprocess("mcp", "install", "gemini", env=env)
    assert got.returncode == 2 and got.stderr.count("\n") == 1, got.stderr
    assert "is read-only (mode 0444)" in got.stderr and "nothing changed" in got.stderr
    _unchanged(path, '{"theme": "x"}\n')
    assert stat.S_IMODE(path.stat().st_mode) == 0o444


def test_a_server_list_the_agent_reads_twice_is_refused(tmp_path):
    """Issue 38.5: with "mcpServers" twice the install said it registered, and the agent (reading the last) saw none."""
    env = _env(tmp_path)
    path = Path(env["HOME"]) / ".claude.json"
    before = '{\n  "mcpServers": {"a": {"command": "a"}},\n  "x": 1,\n  "mcpServers": {}\n}\n'
    path.write_text(before)
    got = run_subprocess("mcp", "install", "claude", env=env)
    assert got.returncode == 2 and got.stderr.count("\n") == 1, got.stderr
    assert '"mcpServers" twice' in got.stderr and "reads only the last" in got.stderr
    _unchanged(path, before)


def test_codex_toml_that_cannot_be_edited_safely_is_refused(tmp_path):
    codex_home = tmp_path / "codex"
    codex_home.mkdir()
    path = codex_home / "config.toml"
    before = 'mcp_servers.voyager.command = "mine"\nmodel = "x"\n'
    path.write_text(before)
    got = run_subprocess("mcp", "install", "codex", env=_env(tmp_path, CODEX_HOME=str(codex_home)))
    assert got.returncode == 2 and got.stderr.count("\n") == 1, got.stderr
    assert "cannot edit safely" in got.stderr and "nothing changed" in got.stderr
    _unchanged(path, before)
    broken = 'model = "x\n'
    path.write_text(broken)
    got = run_subprocess("mcp", "install", "codex", env=_env(tmp_path, CODEX_HOME=str(codex_home)))
    assert got.returncode == 2 and "is not valid TOML" in got.stderr
    _unchanged(path, broken)


def test_a_data_dir_that_is_not_text_is_one_line_and_creates_nothing(tmp_path):
    """Issue 38.11: a non-UTF-8 VOYAGER_HOME ended `mcp install` with "internal error"."""
    env = _env(tmp_path, VOYAGER_HOME=os.fsdecode(bytes(tmp_path) + b"/d\xff"))
    got = run_subprocess("mcp", "install", "cursor", env=env)
    assert got.returncode == 2 and got.stderr.count("\n") == 1, got.stderr
    assert "not valid text" in got.stderr and "nothing changed" in got.stderr
    assert not (Path(env["HOME"]) / ".cursor").exists()
