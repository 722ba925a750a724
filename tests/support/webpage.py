"""The web page's test constants: its port and token, and the hostile payloads the corpus holds (HTML, scripts,
``javascript:`` links, SVG and CSS) that every page must show as text; and :class:`Served`, `voyager web`'s server
running in a thread of the test's process.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

TOKEN = "test-token-0123456789abcdef"


PORT = 48765


HOSTILE_SID = "0d5e1a2b-3c4d-4e5f-8a9b-bbbbbbbbbbbb"


#: What hostile session text tries: close a script, run handlers, javascript: links, SVG, CSS.
PAYLOADS = [
    "</script><script>window.__pwned=1</script>",
    '<img src=x onerror="window.__pwned=1">',
    "[click me](javascript:window.__pwned=1)",
    '<svg onload="window.__pwned=1"><script>window.__pwned=1</script></svg>',
    '<style>body{background:url(https://evil.example/x)}</style><div style="background:red">css</div>',
    "![x](data:image/svg+xml,<svg onload=window.__pwned=1>)",
    '<a href="javascript:window.__pwned=1">link</a>',
]


class Served:
    """`voyager web`'s server (server.make) running in a thread on a free loopback port."""

    def __init__(self, data_dir: Path, port: int = 0, token: str = TOKEN) -> None:
        from voyager_sessions.core.paths import DataDir
        from voyager_sessions.web.server import make

        self.token = token
        self.socks, self.server, self.url, self.library = make(DataDir(data_dir), port, token)
        self.base = self.url.split("/#", 1)[0]
        self.port = int(self.base.rsplit(":", 1)[1])
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": self.socks}, daemon=True)
        self.thread.start()
        deadline = time.monotonic() + 30
        while not self.server.started:
            assert time.monotonic() < deadline, "uvicorn did not start"
            time.sleep(0.02)

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=30)
        for s in self.socks:
            s.close()
        self.library.close()

    def get(self, path: str = "/api/sessions") -> int:
        """The status of a GET of ``path`` with the token."""
        import urllib.request

        req = urllib.request.Request(f"{self.base}{path}", headers={"Authorization": f"Bearer {self.token}"})
        with urllib.request.urlopen(req, timeout=30) as res:
            res.read()
            return res.status
