"""Store: Voyager's own SQLite databases (stdlib ``sqlite3``). Nothing outside this package runs Voyager's SQL.

``db`` opens connections with the pragmas and the migration runner; ``state`` keeps
scan state and the sessions table; ``checkpoints`` keeps per-session task state.
"""
