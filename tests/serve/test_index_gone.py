"""``voyager serve`` never answers from a ghost (issue #38, item 7).

The probe deleted the index folder while a server ran: served searches said "No matches" for up
to five minutes (the server's watcher saw no agent's file change, so its refresh read nothing into
the new, empty index until the periodic full pass), while the same search without the server
rebuilt the index and found the session. Here the index is deleted, damaged (a segment file cut
short, another removed) and replaced (by another data dir's) under a running server, and the very
next served search must find what an unserved one finds.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.support.serving import ServerProcess, cli, make_env, scanned_env, write_corpus

pytest.importorskip("watchfiles")

QUERY = ("search", "parse_config_v2", "--json")


def _hits(result_out: bytes) -> list[tuple[str, int]]:
    return sorted((h["session_id"], h["seq"]) for h in json.loads(result_out)["hits"])


def _segments(index: Path) -> list[Path]:
    return sorted(p for p in index.iterdir() if p.suffix in (".idx", ".store", ".term"))


@pytest.mark.slow  # ~2 s: in the slow run, so the default run keeps to its budget
def test_a_served_search_rebuilds_an_index_deleted_damaged_or_replaced_under_it(tmp_path: Path) -> None:
    env = scanned_env(tmp_path / "a")
    expected = cli(env, *QUERY, server=False)
    assert expected.code == 0 and _hits(expected.out)
    server = ServerProcess(env, interval=3600)  # only the requests refresh: no periodic pass to rescue them
    index = server.ddir.index
    try:
        assert _hits(cli(env, *QUERY).out) == _hits(expected.out)
        served_before = json.loads(cli(env, "serve", "status", "--json").out)["requests"]

        shutil.rmtree(index)  # gone
        gone = cli(env, *QUERY)
        assert gone.code == 0 and _hits(gone.out) == _hits(expected.out), gone

        segments = _segments(index)  # damaged: a segment file cut short, another one removed
        assert segments
        segments[0].write_bytes(segments[0].read_bytes()[:7])
        if len(segments) > 1:
            segments[1].unlink()
        damaged = cli(env, *QUERY)
        assert damaged.code == 0 and _hits(damaged.out) == _hits(expected.out), damaged

        other = make_env(tmp_path / "b")  # replaced: another data dir's index, of other sessions
        write_corpus(other)
        Path(other["HOME"], ".claude").rename(Path(other["HOME"], ".claude-hidden"))
        assert cli(other, "scan", "-q", server=False).code == 0
        shutil.rmtree(index)
        shutil.copytree(Path(other["VOYAGER_HOME"]) / "index", index)
        replaced = cli(env, *QUERY)
        assert replaced.code == 0 and _hits(replaced.out) == _hits(expected.out), replaced

        # Every one of them was answered by the server, not by a command that fell back to scanning itself.
        assert json.loads(cli(env, "serve", "status", "--json").out)["requests"] >= served_before + 3
    finally:
        server.stop()
