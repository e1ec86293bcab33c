"""State fingerprints: a 64-bit digest of a state's canonical encoding.

`model.encode(state)` gives canonical bytes (equal states, equal bytes, in every process);
the fingerprint is their 8-byte BLAKE2b digest read as an unsigned big-endian int. Unlike
Python's `hash()`, it does not depend on PYTHONHASHSEED, so fingerprints agree across the
processes of a Spark job and across machines.
"""
from __future__ import annotations

from hashlib import blake2b

DIGEST_SIZE = 8  # bytes; a 64-bit fingerprint (collision odds ~ n**2 / 2**65)


def fingerprint(encoded: bytes) -> int:
    """The fingerprint of a state's canonical encoding: blake2b, 8 bytes, big-endian int."""
    return int.from_bytes(blake2b(encoded, digest_size=DIGEST_SIZE).digest(), "big")
