"""Voyager: find anything you or your coding agents ever said, ran or saw.

The package is split by owner (see docs/architecture.md): ``voyager_sessions.ingest`` knows
provider formats, ``voyager_sessions.search`` knows Tantivy and the query language,
``voyager_sessions.store`` owns Voyager's own SQLite databases; ``voyager_sessions.scan``
sits above all three and moves data between them; ``voyager_sessions.api`` answers every
front end (the click CLI in ``voyager_sessions.cli.app``, the lean ``voyager search`` path, the
server and the MCP server). Imports here stay empty so that ``voyager --help`` starts fast.
"""

__version__ = "0.1.0"
