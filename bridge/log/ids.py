"""Record and session ids: ULID-like strings that sort by creation time.

26 characters of Crockford base32: 48 bits of Unix milliseconds, then 80 random bits. Within one
process, ids made in the same millisecond increase (the random part is incremented), so a log's
natural order is its id order; across processes, ids from the same millisecond sort arbitrarily but
never collide in practice.
"""

from __future__ import annotations

import re
import secrets
import threading
import time

__all__ = ["ID_PATTERN", "new_id"]

_ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
_RANDOM_BITS = 80
_lock = threading.Lock()
_last_ms = -1
_last_random = 0

#: What a valid id looks like (used to reject forged pagination cursors).
ID_PATTERN = re.compile(r"\A[0-9A-HJKMNP-TV-Z]{26}\Z")


def _encode(value: int, length: int) -> str:
    chars = []
    for _ in range(length):
        chars.append(_ALPHABET[value & 31])
        value >>= 5
    return "".join(reversed(chars))


def new_id() -> str:
    """A new sortable id, greater than every id this process made before."""
    global _last_ms, _last_random
    with _lock:
        now = time.time_ns() // 1_000_000
        if now <= _last_ms:
            now = _last_ms
            _last_random += 1
            if _last_random >> _RANDOM_BITS:  # 2^80 ids in one millisecond: borrow the next one
                now += 1
                _last_random = secrets.randbits(_RANDOM_BITS - 1)
        else:
            _last_random = secrets.randbits(_RANDOM_BITS - 1)  # headroom for increments
        _last_ms = now
        return _encode(now, 10) + _encode(_last_random, 16)
