"""The web page's test constants: its port and token, and the hostile payloads the corpus holds (HTML, scripts,
``javascript:`` links, SVG and CSS) that every page must show as text.
"""

from __future__ import annotations

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
