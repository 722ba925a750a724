"""A real ``voyager serve`` process on a data dir of its own, and the CLI run with and without it.

Every test here runs the installed console script (or ``python -m voyager_sessions``) as
a child process with an explicit environment: HOME, VOYAGER_HOME and the agents'
variables point into the test's temporary directory, so neither the real data dir nor
the real agent history is touched, and a server started here answers only these tests.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.serving import ServerProcess, scanned_env


def _served(root: Path):
    env = scanned_env(root)
    server = ServerProcess(env)
    try:
        yield env, server
    finally:
        server.stop()


@pytest.fixture
def served(tmp_path):
    """(env, server): a scanned corpus and a running server on its data dir; stopped afterwards."""
    yield from _served(tmp_path)


@pytest.fixture(scope="module")
def served_module(tmp_path_factory):
    """``served`` shared by a module's tests that neither stop the server nor change what it must answer."""
    yield from _served(tmp_path_factory.mktemp("served"))


@pytest.fixture(scope="module")
def scanned_module(tmp_path_factory):
    """An environment whose corpus is scanned, without a server (a module's tests bring their own)."""
    return scanned_env(tmp_path_factory.mktemp("scanned"))
