"""The documentation names every agent Voyager reads: its tables are the manifest's, its sections and variables follow."""

from __future__ import annotations

from pathlib import Path

from voyager_sessions.ingest import manifest

ROOT = Path(__file__).resolve().parents[1]


def test_committed_tables_are_what_the_manifest_generates():
    """docs/agents.md and README.md carry the tables ``python -m voyager_sessions.ingest.manifest --tables`` writes."""
    stale = [str(path.relative_to(ROOT)) for path, old, new in manifest.generated(ROOT) if old != new]
    assert not stale, f"{stale}: run `python -m voyager_sessions.ingest.manifest --tables`"


def test_the_generator_checks_without_writing(tmp_path):
    for rel in manifest.TABLES:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(f"before\n{manifest.BEGIN}\n| stale |\n{manifest.END}\nafter\n")
    assert manifest.main(["--tables", "--check", "--root", str(tmp_path)]) == 1
    assert "| stale |" in (tmp_path / "README.md").read_text()
    assert manifest.main(["--tables", "--root", str(tmp_path)]) == 0
    assert manifest.main(["--tables", "--check", "--root", str(tmp_path)]) == 0
    text = (tmp_path / "README.md").read_text()
    assert text.startswith("before\n") and text.endswith(f"{manifest.END}\nafter\n") and "`claude`" in text


def test_docs_agents_has_a_section_per_provider():
    doc = (ROOT / "docs" / "agents.md").read_text()
    missing = [name for name in manifest.names() if f"(`{name}`" not in doc]
    assert not missing, f"no section for {missing}"


def test_every_override_variable_is_documented():
    doc = (ROOT / "docs" / "agents.md").read_text()
    overrides = {entries[0][0] for entries in manifest.homes().values() if entries[0][0].startswith("VOYAGER_")}
    missing = sorted(v for v in overrides if v not in doc)
    assert not missing, missing
