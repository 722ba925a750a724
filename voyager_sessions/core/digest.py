"""BLAKE2b, the one hash Voyager's own keys and fingerprints use, without importing ``hashlib``.

``hashlib.blake2b`` *is* ``_blake2.blake2b`` (hashlib never takes BLAKE2 from OpenSSL), but
``import hashlib`` also loads OpenSSL's ``_hashlib``: 2.5-3 ms of every refreshing search,
which hashes nothing unless a file changed. The digests are the same bytes either way.
"""

from __future__ import annotations

try:
    from _blake2 import blake2b
except ImportError:  # pragma: no cover - an interpreter built without its own BLAKE2
    from hashlib import blake2b

__all__ = ["blake2b"]
