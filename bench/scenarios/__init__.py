"""The scenarios, in the order a full run executes them: name -> function(Context) -> ScenarioResult.

Order matters only for reuse (``append_one`` continues from ``ingest_5000``'s data
dirs, ``baseline`` from ``search``'s corpora, ``cli_search`` from all three); each
scenario builds what it needs when run alone with ``--only``.
"""

from __future__ import annotations

from collections.abc import Callable

from bench.context import Context
from bench.model import ScenarioResult
from bench.scenarios.checkpoint import checkpoint
from bench.scenarios.cli_search import cli_search
from bench.scenarios.first_search import first_search
from bench.scenarios.ingest import append_one, ingest_5000
from bench.scenarios.ingest_formats import ingest_formats
from bench.scenarios.history_scale import history_100k
from bench.scenarios.hostile_scale import hostile_scale
from bench.scenarios.ingest_scale import ingest_big, ingest_history
from bench.scenarios.judged import judged
from bench.scenarios.meaning import meaning
from bench.scenarios.redaction import redaction
from bench.scenarios.mcp import mcp_start
from bench.scenarios.rescan import rescan_noop
from bench.scenarios.search import baseline, search
from bench.scenarios.startup import startup
from bench.scenarios.web_search import web_search
from bench.scenarios.ui import ui

Scenario = Callable[[Context], ScenarioResult]

SCENARIOS: dict[str, Scenario] = {
    "ingest_5000": ingest_5000,
    "append_one": append_one,
    "ingest_history": ingest_history,
    "ingest_big": ingest_big,
    "rescan_noop": rescan_noop,
    "checkpoint": checkpoint,
    "search": search,
    "baseline": baseline,
    "ingest_formats": ingest_formats,
    "cli_search": cli_search,
    "startup": startup,
    "judged": judged,
    "meaning": meaning,
    "redaction": redaction,
    "web_search": web_search,
    "ui": ui,
    "mcp_start": mcp_start,
    "first_search": first_search,
    "history_100k": history_100k,
    "hostile_scale": hostile_scale,
}
