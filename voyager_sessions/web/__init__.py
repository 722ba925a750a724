"""``voyager web``: a local web UI to search, read and share past sessions (docs/web.md).

:mod:`.data` is the one module that talks to the application API (``voyager_sessions.api``);
:mod:`.render` turns event text into safe HTML; :mod:`.guard` is the security layer every
request passes (token, Host, Origin, CSP); :mod:`.app` holds the routes; :mod:`.server`
binds loopback sockets and runs uvicorn; :mod:`.cli` is the click command. The pages are
plain ES modules and CSS in ``static/`` (no build step, nothing from a CDN).
"""

#: What a command says when the ``web`` extra is not installed (``voyager web``, and a server asked for a page).
INSTALL = "the web UI needs Starlette and uvicorn: pip install 'voyager-sessions[web]'"
