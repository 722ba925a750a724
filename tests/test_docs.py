"""The documentation names every agent Voyager reads, with its evidence level and its override variable."""

from __future__ import annotations

import re
from pathlib import Path

from voyager_sessions.ingest import adapters
from voyager_sessions.paths import AGENT_HOMES

ROOT = Path(__file__).resolve().parents[1]


def test_docs_agents_has_a_row_and_a_section_per_provider():
    doc = (ROOT / "docs" / "agents.md").read_text()
    rows = {m.group(1): m.group(2) for m in re.finditer(r"^\| [^|]+ \| `([a-z-]+)` \| (observed|documented)", doc, re.M)}
    assert set(rows) == set(adapters.PROVIDERS)
    for provider in adapters.PROVIDERS:
        adapter = adapters.get(provider)
        assert rows[provider] == adapter.evidence, provider
        assert f"(`{provider}`" in doc, f"no section for {provider}"
        for version in adapter.versions:
            assert version in doc, (provider, version)


def test_every_override_variable_is_documented():
    doc = (ROOT / "docs" / "agents.md").read_text()
    overrides = {entries[0][0] for entries in AGENT_HOMES.values() if entries[0][0].startswith("VOYAGER_")}
    missing = sorted(v for v in overrides if v not in doc)
    assert not missing, missing


def test_readme_names_every_provider():
    readme = (ROOT / "README.md").read_text()
    missing = [p for p in adapters.PROVIDERS if f"`{p}`" not in readme]
    assert not missing, missing
