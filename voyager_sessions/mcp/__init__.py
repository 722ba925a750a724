"""``voyager mcp``: the MCP server on stdio (:mod:`.server`), its one door to the API (:mod:`.calls`), and
``voyager mcp install``, which registers it in agents' configurations (:mod:`.install`).

A front end like the CLI and the web page: it calls :mod:`voyager_sessions.api` and nothing below it.
"""
