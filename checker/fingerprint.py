"""State fingerprints: a 64-bit digest of a state's canonical encoding.

`model.encode(state)` gives canonical bytes (equal states, equal bytes, in every process);
the fingerprint is their 8-byte BLAKE2b digest read as an unsigned big-endian int. Unlike
Python's `hash()`, it does not depend on PYTHONHASHSEED, so fingerprints agree across the
processes of a Spark job and across machines. A model may bring its own (`state_fingerprint`).
"""
from __future__ import annotations

from hashlib import blake2b
from typing import Any, Callable

DIGEST_SIZE = 8  # bytes; a 64-bit fingerprint (collision odds ~ n**2 / 2**65)


def fingerprint(encoded: bytes) -> int:
    """The fingerprint of a state's canonical encoding: blake2b, 8 bytes, big-endian int."""
    return int.from_bytes(blake2b(encoded, digest_size=DIGEST_SIZE).digest(), "big")


def state_fingerprint(model: Any) -> Callable[[Any], int]:
    """The model's own `fingerprint(state)` when it has one (e.g. a process-stable tuple hash),
    else the BLAKE2b digest of its canonical encoding."""
    own = getattr(model, "fingerprint", None)
    if own is not None:
        return own  # type: ignore[no-any-return]
    encode = model.encode
    return lambda s: fingerprint(encode(s))


MASK = (1 << 64) - 1


def masked_fingerprint(model: Any) -> Callable[[Any], int]:
    """`state_fingerprint` as an unsigned 64-bit int: what the visited set and the link files hold."""
    raw = state_fingerprint(model)
    if raw is hash:  # the model's fingerprint is the built-in tuple hash: call it directly
        return lambda s: hash(s) & MASK
    return lambda s: raw(s) & MASK
