"""Record and session ids: their shape, their time prefix and their order within one process."""

from __future__ import annotations

import threading
import time
from itertools import pairwise

import pytest

from bridge.log.ids import ID_PATTERN, new_id

_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


def _decode(text: str) -> int:
    value = 0
    for char in text:
        value = value * 32 + _CROCKFORD.index(char)
    return value


def test_an_id_is_26_crockford_characters_that_the_pattern_accepts() -> None:
    """A new id is 26 characters of Crockford base32 (no I, L, O, U), and ID_PATTERN accepts it."""
    ids = [new_id() for _ in range(200)]
    for made in ids:
        assert len(made) == 26 and set(made) <= set(_CROCKFORD)
        assert ID_PATTERN.match(made)
    assert not set("".join(ids)) & set("ILOU")


def test_the_first_ten_characters_are_the_unix_milliseconds_it_was_made_in() -> None:
    """The 48-bit prefix decodes to the clock's milliseconds between just before and just after the call."""
    before = time.time_ns() // 1_000_000
    made = new_id()
    after = time.time_ns() // 1_000_000
    assert before <= _decode(made[:10]) <= after


def test_ids_made_one_after_another_sort_in_the_order_they_were_made() -> None:
    """Thousands of ids made in a tight loop (many in the same millisecond) are distinct and strictly increasing."""
    ids = [new_id() for _ in range(5000)]
    assert all(a < b for a, b in pairwise(ids))
    prefixes = [made[:10] for made in ids]
    assert len(set(prefixes)) < len(prefixes)  # the loop did make ids within one millisecond


def test_ids_made_in_the_same_millisecond_count_up_by_one() -> None:
    """Within one millisecond the random part is incremented: consecutive ids differ by exactly one there."""
    ids = [new_id() for _ in range(2000)]
    same_ms = [(a, b) for a, b in pairwise(ids) if a[:10] == b[:10]]
    assert same_ms
    assert all(_decode(b[10:]) == _decode(a[10:]) + 1 for a, b in same_ms)


def test_a_new_milliseconds_random_part_leaves_headroom_for_increments() -> None:
    """The random part starts below 2^79, so a millisecond's increments cannot overflow its 80 bits."""
    starts = []
    for _ in range(24):
        time.sleep(0.002)  # a new millisecond: its first id draws a fresh random part
        starts.append(_decode(new_id()[10:]))
    assert all(start < 2**79 for start in starts)
    assert len(set(starts)) == len(starts)  # drawn afresh, not counted on from the last


def test_ids_from_several_threads_are_distinct() -> None:
    """Ids made concurrently by several threads are all distinct, and each thread's own ids increase."""
    made: list[list[str]] = [[] for _ in range(4)]

    def make(into: list[str]) -> None:
        into.extend(new_id() for _ in range(1000))

    threads = [threading.Thread(target=make, args=(into,)) for into in made]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    every = [one for into in made for one in into]
    assert len(set(every)) == len(every) == 4000
    assert all(into == sorted(into) for into in made)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "0" * 25,
        "0" * 27,
        "01arz3ndektsv4rrffq69g5fav",
        "01ARZ3NDEKTSV4RRFFQ69G5FAI",
        "01ARZ3NDEKTSV4RRFFQ69G5FAL",
        "01ARZ3NDEKTSV4RRFFQ69G5FAO",
        "01ARZ3NDEKTSV4RRFFQ69G5FAU",
        "01ARZ3NDEKTSV4RRFFQ69G5FA-",
        " 01ARZ3NDEKTSV4RRFFQ69G5FA",
        "01ARZ3NDEKTSV4RRFFQ69G5FAV\n",
    ],
)
def test_the_pattern_refuses_what_is_not_an_id(text: str) -> None:
    """ID_PATTERN refuses a wrong length, lower case, the letters I, L, O, U, any other character or a newline."""
    assert ID_PATTERN.match(text) is None
