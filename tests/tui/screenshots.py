"""Write the picker's screenshots in docs/ (Textual's SVG export) from the bundled demo corpus.

Run ``python -m tests.tui.screenshots``; the README and docs/ui.md show what it writes.
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


async def _shoot(data: Path) -> None:
    from tests.support.picker import settle
    from voyager_sessions.tui.app import VoyagerApp
    from voyager_sessions.tui.backend import Backend

    for name, query, keys in (
        ("ui-search", "数据库", ()),
        ("ui-preview", "ERR_CONN_REFUSED_42 redis", ()),
        ("ui-session", "ERR_CONN_REFUSED_42", ("tab", "f")),
    ):
        app = VoyagerApp(Backend(data, refresh=False), query, live=False)
        async with app.run_test(size=(120, 34)) as pilot:
            await settle(app, pilot, 1)
            await asyncio.sleep(0.5)
            for key in keys:
                await pilot.press(key)
                await asyncio.sleep(0.8)
            await pilot.pause()
            (ROOT / "docs" / f"{name}.svg").write_text(app.export_screenshot(title=f"voyager ui {query}"))


def main() -> None:
    from voyager_sessions.demo import CORPUS

    with tempfile.TemporaryDirectory() as tmp:
        env = {
            "HOME": tmp,
            "VOYAGER_HOME": f"{tmp}/data",
            "VOYAGER_CLAUDE_HOME": str(CORPUS / "claude"),
            "VOYAGER_CODEX_HOME": str(CORPUS / "codex"),
        }
        os.environ.update(env)
        from voyager_sessions.cli.app import cli

        try:
            cli(["scan", "-q"], standalone_mode=False)
        except SystemExit:
            pass
        asyncio.run(_shoot(Path(env["VOYAGER_HOME"])))
    sys.stdout.write("wrote docs/ui-search.svg, docs/ui-preview.svg, docs/ui-session.svg\n")


if __name__ == "__main__":
    main()
