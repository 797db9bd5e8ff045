"""bridge.jsontext: large frames parsed in slices give orjson's value, or are left to orjson."""

from __future__ import annotations

import json
import random
from typing import Any

import orjson
import pytest

from bench.hostile import base_scene, zigzag
from bridge import jsontext, session
from bridge.jsontext import loads_in_slices, nesting_depth
from bridge.session import Session, Worlds

#: Strings that fool a naive bracket count: brackets, quotes and backslashes inside strings.
TRICKY = ["a[b", "]]}\\", '"q"\\"', "\\\\", 'x\\\\"[', "é[", "😀{", "\\u005c", "/bfnrtu"]


def random_json(rng: random.Random, depth: int = 0) -> Any:
    roll = rng.random()
    if depth > 6 or roll < 0.3:
        return rng.choice([1, -0.0, 2.5, -1e-300, 1.5e300, 2**63 - 1, None, True, False, *TRICKY])
    if roll < 0.65:
        return [random_json(rng, depth + 1) for _ in range(rng.randrange(4))]
    return {rng.choice(TRICKY) + str(i): random_json(rng, depth + 1) for i in range(rng.randrange(4))}


def true_depth(value: Any) -> int:
    if isinstance(value, list):
        return 1 + max(map(true_depth, value), default=0)
    if isinstance(value, dict):
        return 1 + max(map(true_depth, value.values()), default=0)
    return 0


@pytest.fixture
def tiny_slices(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(jsontext, "SLICE", 7)  # every token, escape and character cut somewhere
    monkeypatch.setattr(jsontext, "PARSE_SLICE", 7)


@pytest.mark.usefixtures("tiny_slices")
def test_nesting_depth_counts_brackets_outside_strings_only() -> None:
    """The numpy nesting depth equals the real depth of random JSON, counting brackets outside strings only.

    The JSON is full of brackets, quotes and escapes in strings, with slices cutting through every escape.
    """
    rng = random.Random(11)
    for _ in range(1500):
        value = random_json(rng)
        for ascii_only in (True, False):
            text = json.dumps(value, ensure_ascii=ascii_only).encode()
            assert nesting_depth(text) == true_depth(value), text


@pytest.mark.usefixtures("tiny_slices")
def test_sliced_parse_gives_orjsons_value() -> None:
    """Random JSON, parsed a few bytes per C call, is equal to orjson's value (ints stay ints, floats floats)."""
    rng = random.Random(12)
    for _ in range(500):
        text = json.dumps({"v": random_json(rng)}, ensure_ascii=False).encode()  # no surrogate escapes
        value = loads_in_slices(text)
        assert value is not None
        assert value == orjson.loads(text)
        assert repr(value) == repr(orjson.loads(text))  # 1 and 1.0, -0.0 and 0 told apart


@pytest.mark.parametrize(
    "text",
    [
        b'{"x": "\\ud800"}',  # a lone surrogate: yajl would make it "?"
        b'{"x": "\\ud83d\\ude00"}',  # a pair: any surrogate escape is left to orjson
        b"[" * 1025 + b"]" * 1025,  # deeper than orjson reads (ijson's memory grows with depth squared)
        b'{"x": 18446744073709551615}',  # past yajl's 64-bit integers, within orjson's
        b'{"x": NaN}',
        b'{"a": 1 "b": 2}',
        b'{"a": [1, 2,]}',
        b'{"a": 1} x',
        b"",
    ],
)
def test_what_could_differ_is_left_to_orjson(text: bytes) -> None:
    """Surrogate escapes, deep nesting, integers yajl refuses and bad JSON: None (orjson parses or names it)."""
    assert loads_in_slices(text) is None


def test_deep_nesting_is_found_without_parsing() -> None:
    """A frame nested 1,000,000 deep is measured (and refused) without handing it to ijson."""
    text = b"[" * 1_000_000 + b"]" * 1_000_000
    assert nesting_depth(text) == 1_000_000
    assert loads_in_slices(text) is None


def large_frame(body: str) -> str:
    """``body`` (a JSON object's members, maybe malformed) padded past the sliced-parse size."""
    padding = "x" * session.SLICED_PARSE_BYTES
    return '{"type": "scene.sync", "id": "s", "pad": "' + padding + '", ' + body + "}"


FRAMES = [
    large_frame('"scene": ' + json.dumps(base_scene("ok"))),
    large_frame('"scene": ' + json.dumps(base_scene("zz", regions=[{"id": "z", "polygons": [zigzag(0, 0, 40, 9)]}]))),
    large_frame('"scene": {"id": 5}'),
    large_frame('"scene": {"id": "s", "blob": ' + "[" * 40 + "]" * 40 + "}"),  # past the limit of 32, within orjson's
    large_frame('"scene": {"id": "s", "name": "\\ud800"}'),
    large_frame('"scene": {"id": "s", "tokens": [{"id": "t", "x": NaN}]}'),
    large_frame('"scene": {"id": "s" "name": "x"}'),
    large_frame('"scene": [1, 2,]'),
    large_frame('"scene": ' + "[" * 2000 + "]" * 2000),
    large_frame('"scene": {"id": "s", "x": 18446744073709551615}'),
]


@pytest.mark.parametrize("frame", FRAMES, ids=range(len(FRAMES)))
def test_a_session_answers_a_large_frame_as_orjson_alone_would(frame: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A session answers a large frame parsed in slices, to the letter, as orjson parsing it in one call would.

    Equal values, and bad JSON named by the same message.
    """

    parsed: list[bool] = []

    def spy(data: bytes) -> Any:
        value = loads_in_slices(data)
        parsed.append(value is not None)
        return value

    def answer() -> list[Any]:
        client = Session(Worlds(), offline=True, logging=False)
        return [effect.message.model_dump(mode="json") for effect in client.receive(frame)]  # type: ignore[attr-defined]

    monkeypatch.setattr(session, "loads_in_slices", spy)
    sliced = answer()
    assert parsed == [frame in FRAMES[:4]]  # the valid ones were parsed in slices
    monkeypatch.setattr(session, "SLICED_PARSE_BYTES", 1 << 40)
    assert sliced == answer()
    assert len(parsed) == 1
