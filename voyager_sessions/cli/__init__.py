"""The command line: ``voyager`` and its commands, a front end of the application API.

The entry point is :mod:`voyager_sessions.cli.main` (the lean path: a plain ``voyager search``
reads argv without click and may be answered by a running server); everything else is the
click group in :mod:`voyager_sessions.cli.app`, whose heavier commands load on first use.
Every command builds a request, calls :mod:`voyager_sessions.api` and renders the result
(:mod:`voyager_sessions.cli.present`, :mod:`voyager_sessions.cli.render`). Nothing is imported
here: every ``voyager search`` imports this package.
"""
