"""Voyager: find anything you or your coding agents ever said, ran or saw.

The package is split by owner (see DESIGN.md): ``voyager_sessions.ingest`` knows provider
formats, ``voyager_sessions.search`` knows Tantivy, ``voyager_sessions.store`` owns Voyager's own
SQLite databases, and ``voyager_sessions.cli`` is a thin click layer over them. Imports
here stay empty so that ``voyager --help`` starts fast.
"""

__version__ = "0.1.0"
