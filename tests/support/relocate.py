"""``relocate``: a capture's HOME moved under a test's sandbox, with the paths its files record rewritten to match."""

from __future__ import annotations

import base64
import hashlib
import json
import sqlite3
from pathlib import Path


def _relocate_frames(path: Path, old: bytes, new: bytes) -> None:
    """A Reasonix log (``RX4F`` zstd frames, base64 payloads) with ``old`` replaced by ``new`` in every record."""
    try:
        from compression import zstd as codec  # type: ignore[import-not-found]

        compress = codec.compress
    except ImportError:
        import zstandard

        compress = zstandard.ZstdCompressor().compress
    from voyager_sessions.ingest.zstd import decompress_blob

    data, out, pos = path.read_bytes(), bytearray(), 0
    while pos + 12 <= len(data):
        clen = int.from_bytes(data[pos + 4 : pos + 8], "big")
        record = json.loads(decompress_blob(data[pos + 12 : pos + 12 + clen]))
        event = record.get("event") or {}
        if isinstance(event.get("payload"), str):
            payload = base64.b64decode(event["payload"]).replace(old, new)
            event["payload"] = base64.b64encode(payload).decode()
        raw = json.dumps(record, ensure_ascii=False).encode().replace(old, new)
        packed = compress(raw)
        out += b"RX4F" + len(packed).to_bytes(4, "big") + len(raw).to_bytes(4, "big") + packed
        pos += 12 + clen
    path.write_bytes(bytes(out))


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
            # A CHECK may call a function this SQLite lacks (OpenClaw's use octet_length, SQLite 3.43): the
            # text is rewritten as the agent would have written it, so its checks need not run again.
            conn.execute("PRAGMA ignore_check_constraints = ON")
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
        elif p.name == "events.frames":
            _relocate_frames(p, ob, nb)
        else:
            data = p.read_bytes()
            if ob in data:
                p.write_bytes(data.replace(ob, nb))
    old_proj, new_proj = f"{old}/proj", f"{new}/proj"
    # Reasonix names a project's folder by its cwd, each "/" a "-".
    for d in sorted(root.rglob(old_proj.replace("/", "-")), reverse=True):
        d.rename(d.with_name(new_proj.replace("/", "-")))
    for algo in (hashlib.md5, hashlib.sha256):
        before, after = algo(old_proj.encode()).hexdigest(), algo(new_proj.encode()).hexdigest()
        for d in sorted(root.rglob(before), reverse=True):
            d.rename(d.with_name(after))
