"""``relocate``: a capture's HOME moved under a test's sandbox, with the paths its files record rewritten to match."""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path


def relocate(root: Path, old: str, new: str) -> None:
    """Rewrite a copied capture as if its agent had run under ``new`` instead of ``old``.

    Text files are rewritten byte for byte; SQLite databases (with their WAL) through SQL,
    every text cell; folders named by a hash of the old project dir get the new dir's hash.
    Only the copy in ``root`` changes, never the shared capture.
    """
    ob, nb = old.encode(), new.encode()
    for p in sorted(root.rglob("*")):
        if not p.is_file() or p.name.endswith(("-wal", "-shm")):
            continue
        head = p.read_bytes()[:16]
        if head == b"SQLite format 3\x00":
            conn = sqlite3.connect(p)
            for (table,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall():
                cols = [r[1] for r in conn.execute(f'PRAGMA table_info("{table}")')]
                for col in cols:
                    conn.execute(
                        f'UPDATE "{table}" SET "{col}" = replace("{col}", ?, ?) '
                        f'WHERE typeof("{col}") = \'text\' AND instr("{col}", ?) > 0',
                        (old, new, old),
                    )
            conn.commit()
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            conn.close()
        else:
            data = p.read_bytes()
            if ob in data:
                p.write_bytes(data.replace(ob, nb))
    old_proj, new_proj = f"{old}/proj", f"{new}/proj"
    for algo in (hashlib.md5, hashlib.sha256):
        before, after = algo(old_proj.encode()).hexdigest(), algo(new_proj.encode()).hexdigest()
        for d in sorted(root.rglob(before), reverse=True):
            d.rename(d.with_name(after))
