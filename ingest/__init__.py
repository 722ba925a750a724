"""Ingest: everything that knows a provider's on-disk format lives under this package.

Adapters (``voyager_sessions.ingest.adapters``) discover sources and stream normalized
``Session``/``Event`` items from them, read-only; ``voyager_sessions.ingest.pipeline`` plans
what to (re)read, feeds the search index and records scan state.
"""
