"""PNG screenshots of the picker in a real terminal: ``python -m tests.tui.screenshots [OUT_DIR] [--all]``.

The picker runs in tmux on the bundled demo corpus; ``capture-pane -e`` reads the screen with its colours,
and each cell is drawn at its place in a grid (a CJK character takes two cells, as the terminal drew it)
with Noto Sans Mono CJK, then Chromium (Playwright, Debian's ``chromium``) takes the picture. The PNG
holds pixels, not text: it looks the same wherever it is shown (Textual's SVG export pinned the widths of
a web font an ``<img>`` never loads, so its Chinese came out squashed). Needs tmux, Chromium and
``fonts-noto-cjk``.

With no argument it writes the README's hero and docs/ui.md's pictures, ``docs/ui-search.png`` and
``docs/ui-session.png``; with ``--all``, every screen (80×24 and 160×45, a CJK word and an identifier,
the keys of the results, the whole session, the help) into OUT_DIR.
"""

from __future__ import annotations

import html
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: DejaVu Sans Mono for what terminals draw one cell wide (its ellipsis and dots are; a CJK font's are not),
#: Noto Sans Mono CJK for Chinese, Japanese and Korean. Each cell is placed on its own, so the two never drift.
FONT = '"DejaVu Sans Mono", "Noto Sans Mono CJK SC", "Noto Sans Mono CJK JP", monospace'
CELL, LINE, SIZE = 9, 19, 15  # px: a cell's width, a line's height, the font's size (a CJK glyph is two cells)
#: The terminal's own colours (a dark theme), for cells whose colour is the terminal's default.
FG, BG = "#d8dee9", "#1e2127"


class Terminal:
    """``voyager ui`` in a tmux window of its own."""

    def __init__(self, env: dict[str, str], columns: int, lines: int, *args: str) -> None:
        self.socket = str(Path(env["HOME"]) / f"tmux-{uuid.uuid4().hex[:6]}.sock")
        self.env = env
        self.columns, self.lines = columns, lines
        exe = Path(sys.executable).with_name("voyager")
        command = " ".join(shlex.quote(a) for a in [str(exe), "ui", *args]) + "; sleep 60"
        self.tmux("new-session", "-d", "-s", "shot", "-x", str(columns), "-y", str(lines), command)

    def tmux(self, *args: str) -> str:
        return subprocess.run(
            ["tmux", "-S", self.socket, *args], capture_output=True, text=True, env=self.env, timeout=30
        ).stdout

    def keys(self, *keys: str, literal: bool = False) -> None:
        self.tmux("send-keys", "-t", "shot", *(("-l",) if literal else ()), *keys)

    def wait_for(self, text: str, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if text in self.tmux("capture-pane", "-p", "-t", "shot"):
                time.sleep(0.6)  # the preview and the notices settle
                return
            time.sleep(0.1)
        raise SystemExit(f"{text!r} never showed:\n{self.tmux('capture-pane', '-p', '-t', 'shot')}")

    def ansi(self) -> str:
        return self.tmux("capture-pane", "-e", "-p", "-t", "shot")

    def close(self) -> None:
        self.tmux("kill-server")


def _hex(color, default: str) -> str:  # noqa: ANN001 - a rich Color or None
    if color is None or color.is_default:
        return default
    from rich.terminal_theme import MONOKAI

    return color.get_truecolor(MONOKAI).hex


def grid_html(ansi: str, columns: int, lines: int) -> str:
    """The screen ``capture-pane -e`` printed, as a page: every cell at its column and line."""
    from rich.cells import cell_len
    from rich.console import Console
    from rich.text import Text

    console = Console(width=columns * 2, color_system="truecolor", legacy_windows=False)
    rows = []
    for y, line in enumerate(ansi.split("\n")[:lines]):
        x = 0
        cells = []
        for seg in Text.from_ansi(line).render(console):
            style = seg.style
            fg, bg = (_hex(style.color, FG), _hex(style.bgcolor, BG)) if style else (FG, BG)
            if style and style.reverse:
                fg, bg = bg, fg
            css = f"color:{fg};background:{bg};"
            if style and style.bold:
                css += "font-weight:700;"
            if style and style.italic:
                css += "font-style:italic;"
            if style and style.underline:
                css += "text-decoration:underline;"
            if style and style.dim:
                css += "opacity:.62;"
            for ch in seg.text:
                w = cell_len(ch)
                if not w:
                    continue
                cells.append(
                    f'<span style="left:{x * CELL}px;width:{w * CELL}px;{css}">{html.escape(ch) if ch != " " else ""}</span>'
                )
                x += w
        rows.append(f'<div class="row" style="top:{y * LINE}px">{"".join(cells)}</div>')
    return f"""<!doctype html><meta charset="utf-8"><style>
body {{ margin: 0; background: {BG}; }}
#screen {{ position: relative; width: {columns * CELL}px; height: {lines * LINE}px; background: {BG};
  font: {SIZE}px/{LINE}px {FONT}; }}
.row {{ position: absolute; left: 0; height: {LINE}px; }}
.row span {{ position: absolute; top: 0; height: {LINE}px; text-align: center; overflow: visible; white-space: pre; }}
</style><div id="screen">{"".join(rows)}</div>"""


def png(page, ansi: str, columns: int, lines: int, path: Path) -> None:  # noqa: ANN001 - a Playwright page
    page.set_viewport_size({"width": columns * CELL, "height": lines * LINE})
    page.set_content(grid_html(ansi, columns, lines))
    page.evaluate("document.fonts.ready")
    path.write_bytes(page.locator("#screen").screenshot())


def demo_env(tmp: Path) -> dict[str, str]:
    """A HOME of the demo corpus (and the readable tool calls of the tests), scanned."""
    from tests.support import toolcalls
    from voyager_sessions.demo import CORPUS

    home = tmp / "home"
    project = home / ".claude" / "projects" / toolcalls.PROJECT
    project.mkdir(parents=True)
    claude = tmp / "claude"
    shutil.copytree(CORPUS / "claude", claude)
    (claude / "projects" / toolcalls.PROJECT).mkdir()
    (claude / "projects" / toolcalls.PROJECT / f"{toolcalls.SID}.jsonl").write_text(
        "".join(toolcalls.lines()), encoding="utf-8"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("TMUX")}
    env.update(
        HOME=str(home),
        VOYAGER_HOME=str(tmp / "data"),
        VOYAGER_CLAUDE_HOME=str(claude),
        VOYAGER_CODEX_HOME=str(CORPUS / "codex"),
        VOYAGER_NO_SERVER="1",
        TERM="xterm-256color",
        COLORTERM="truecolor",
        LANG="C.UTF-8",
        LC_ALL="C.UTF-8",
    )
    for name in ("VOYAGER_UI_PROBE", "NO_COLOR"):
        env.pop(name, None)
    exe = Path(sys.executable).with_name("voyager")
    subprocess.run([str(exe), "scan", "-q"], env=env, check=True, timeout=300)
    return env


#: (file name, size, query typed, keys after it, text to wait for before the picture)
DOCS = [
    ("ui-search.png", (132, 34), "数据库 OR connection", (), "best match first"),
    ("ui-session.png", (132, 34), "ERR_CONN_REFUSED_42", ("Down", "f"), "j k scroll"),
]
SCREENS = [
    ("picker-80x24-cjk.png", (80, 24), "迁移", (), "best match first"),
    ("picker-160x45-cjk.png", (160, 45), "迁移", (), "best match first"),
    ("picker-80x24-identifier.png", (80, 24), "ERR_CONN_REFUSED_42", (), "best match first"),
    ("picker-160x45-identifier.png", (160, 45), "ERR_CONN_REFUSED_42", (), "best match first"),
    ("picker-80x24-list-keys.png", (80, 24), "数据库", ("Down",), "f full"),
    ("picker-160x45-full-view.png", (160, 45), "EDITMARK", ("Down", "f"), "j k scroll"),
    ("picker-80x24-full-view.png", (80, 24), "数据库", ("Down", "f"), "j k scroll"),
    ("picker-80x24-help.png", (80, 24), "", ("F1",), "In the search box"),
    ("picker-160x45-help.png", (160, 45), "", ("F1",), "In the search box"),
    ("picker-80x24-empty.png", (80, 24), "", (), "newest first"),
]


def shoot(out: Path, screens: list[tuple[str, tuple[int, int], str, tuple[str, ...], str]]) -> list[Path]:
    from playwright.sync_api import sync_playwright

    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    written = []
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as p:
        env = demo_env(Path(tmp))
        browser = p.chromium.launch(executable_path=chromium, args=["--headless", "--no-sandbox", "--disable-gpu"])
        page = browser.new_page()
        for name, (columns, lines), query, keys, ready in screens:
            term = Terminal(env, columns, lines)
            try:
                term.wait_for("newest first")
                if query:
                    term.keys(query, literal=True)
                    term.wait_for("best match first")
                for key in keys:
                    term.keys(key)
                    time.sleep(0.8)
                term.wait_for(ready)
                png(page, term.ansi(), columns, lines, out / name)
                written.append(out / name)
            finally:
                term.close()
        browser.close()
    return written


def main() -> None:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    if "--all" in sys.argv:
        out = Path(args[0]) if args else Path("shots")
        out.mkdir(parents=True, exist_ok=True)
        written = shoot(out, SCREENS)
    else:
        written = shoot(ROOT / "docs", DOCS)
    sys.stdout.write("".join(f"wrote {p}\n" for p in written))


if __name__ == "__main__":
    main()
