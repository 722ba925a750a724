"""Ingest: everything that knows a provider's on-disk format lives under this package.

Adapters (``voyager_sessions.ingest.adapters``) discover sources and stream normalized
``Session``/``Event`` items from them, read-only. Nothing here writes anywhere, imports the
search index or the state store: the scan (``voyager_sessions.scan``), above all three,
moves what adapters yield into them.
"""
