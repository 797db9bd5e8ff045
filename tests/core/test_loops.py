"""line_records: each line's record joined from the pieces a pass shares, as plain Python would join them."""

from __future__ import annotations

import random
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from bridge.core._loops import line_records


def _joined_plainly(
    lines: list[int],
    src: list[int],
    dst: list[int],
    allowed: list[bool],
    modifier: list[int],
    starts: list[int],
    parts: list[bytes],
    pieces: tuple[list[bytes], list[bytes], list[bytes], list[bytes]],
) -> list[bytes]:
    first_of, second_of, third_of, fourth_of = pieces
    out = []
    for dp in lines:
        s, e = src[dp], dst[dp]
        head = b"T%d:" % modifier[dp] if allowed[dp] else b"refused:"
        crossed = b",".join(parts[starts[dp] : starts[dp + 1]])
        out.append(first_of[s] + second_of[e] + head + crossed + third_of[s] + fourth_of[e])
    return out


@st.composite
def _passes(draw: Any) -> dict[str, Any]:
    tokens = draw(st.integers(1, 6))
    count = draw(st.integers(0, 12))
    rng = random.Random(draw(st.integers(0, 2**32)))
    sizes = [rng.randrange(0, 4) for _ in range(count)]
    starts = [0]
    for size in sizes:
        starts.append(starts[-1] + size)
    return {
        "src": [rng.randrange(tokens) for _ in range(count)],
        "dst": [rng.randrange(tokens) for _ in range(count)],
        "allowed": [rng.random() < 0.7 for _ in range(count)],
        "modifier": [rng.choice([0, -3, -6, 2]) for _ in range(count)],
        "starts": starts,
        "parts": [b"c%d" % k for k in range(starts[-1])],
        "pieces": tuple([b"%s%d|" % (name, t) for t in range(tokens)] for name in (b"a", b"t", b"s", b"e")),
        "lines": sorted(rng.sample(range(count), rng.randrange(count + 1))),
    }


@settings(max_examples=200, deadline=None)
@given(_passes())
def test_each_line_is_its_pieces_joined(found: dict[str, Any]) -> None:
    """Every line picked is its ends' pieces, its verdict's head and its crossings joined by commas, in order."""
    heads: dict[Any, bytes] = {}
    made: list[int] = []

    def head_of(modifier: int) -> bytes:
        made.append(modifier)
        return b"T%d:" % modifier

    columns = [found[name] for name in ("lines", "src", "dst", "allowed", "modifier", "starts", "parts")]
    records = line_records(*columns, *found["pieces"], heads, b"refused:", head_of, lambda joined: ("wrapped", joined))
    expected = _joined_plainly(*columns, found["pieces"])
    assert records == [("wrapped", joined) for joined in expected]
    # A head is made once per modifier of an allowed line, then kept.
    wanted = {found["modifier"][dp] for dp in found["lines"] if found["allowed"][dp]}
    assert sorted(made) == sorted(wanted) and set(heads) == wanted


def test_kept_heads_are_used_and_refused_lines_take_the_refusal() -> None:
    """A head kept for a modifier is used as it is; a line not allowed takes the refusal, whatever its modifier."""
    heads = {-3: b"kept-3;"}
    records = line_records(
        [0, 1, 2],
        [0, 1, 0],
        [1, 0, 1],
        [True, False, True],
        [-3, -3, -6],
        [0, 1, 1, 3],
        [b"x", b"y", b"z"],
        [b"A0", b"A1"],
        [b"T0", b"T1"],
        [b"S0", b"S1"],
        [b"E0", b"E1"],
        heads,
        b"no;",
        lambda modifier: b"made%d;" % modifier,
        bytes,
    )
    assert records == [b"A0T1kept-3;xS0E1", b"A1T0no;S1E0", b"A0T1made-6;y,zS0E1"]
    assert heads == {-3: b"kept-3;", -6: b"made-6;"}
