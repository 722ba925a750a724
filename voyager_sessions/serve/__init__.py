"""``voyager serve``: one resident process per data dir answering the application API's reading operations over a Unix socket.

Kept empty: the client (:mod:`.client`) is imported on every plain ``voyager search``,
and must not pay for the server. See ``docs/serve.md`` for the protocol.
"""
