"""Hostile mutations of contract messages, shared by the fuzz test and ``bench/fuzz_bench.py``.

Each mutation takes a message (a plain dict, as a client would send it) and a ``random.Random`` and
returns a frame (``str``) the session must answer without raising: nesting past the limit (and past
Python's own recursion limit), lone UTF-16 surrogates (escaped, as on the wire, or raw, as a replay
file may hold them), extreme finite floats, and unknown keys and unknown shapes at every level.

Deep nesting cannot go through ``json.dumps`` (it recurses too), so a mutation may leave the marker
:data:`DEEP` in the message; :func:`frame` replaces it with the nested text.
"""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Callable
from typing import Any

__all__ = ["DEEP", "EXTREME_FLOATS", "MUTATIONS", "frame", "mutate", "paths"]

#: Finite floats at the edges of the double range, and the smallest ones.
EXTREME_FLOATS = (1e308, -1e308, 1.7976931348623157e308, -1.7976931348623157e308, 5e-324, -5e-324, 1e-300, 1e300)
#: Lone surrogates: high, low, and a low before a high (a pair in the wrong order is two lone ones).
SURROGATES = ("\ud800", "\udfff", "\udc00\ud83d", "a\ud83d")
#: Marker replaced by :func:`frame` with nested arrays/objects: ``DEEP + "<depth>:<open>"``.
DEEP = "\x00deep:"

Path = tuple[str | int, ...]


def paths(message: Any, prefix: Path = ()) -> list[Path]:
    """Every container (dict or list) in ``message``, by path, the message itself first."""
    found: list[Path] = []
    if isinstance(message, dict):
        found.append(prefix)
        for key, value in message.items():
            found += paths(value, (*prefix, key))
    elif isinstance(message, list):
        found.append(prefix)
        for index, value in enumerate(message):
            found += paths(value, (*prefix, index))
    return found


def _at(message: Any, path: Path) -> Any:
    for part in path:
        message = message[part]
    return message


def _leaves(message: Any, prefix: Path = ()) -> list[Path]:
    if isinstance(message, dict):
        return [p for key, value in message.items() for p in _leaves(value, (*prefix, key))]
    if isinstance(message, list):
        return [p for index, value in enumerate(message) for p in _leaves(value, (*prefix, index))]
    return [prefix] if prefix else []


def _set(message: dict[str, Any], path: Path, value: Any) -> None:
    if path:
        _at(message, path[:-1])[path[-1]] = value


def _put(container: Any, rng: random.Random, key: str, value: Any) -> None:
    """Put ``value`` into a dict under ``key``, or into a list at a random place."""
    if isinstance(container, dict):
        container[key] = value
    else:
        container.insert(rng.randint(0, len(container)), value)


def _deep(rng: random.Random) -> str:
    depth = rng.choice((20, 31, 33, 40, 100, 900, 3000, 20000))
    return f"{DEEP}{depth}:{rng.choice('[{')}"


def _unknown_key(message: dict[str, Any], rng: random.Random) -> None:
    value = rng.choice([1, "x", None, [], {}, {"nested": {"deeper": [1, 2]}}, rng.choice(EXTREME_FLOATS)])
    _put(_at(message, rng.choice(paths(message))), rng, rng.choice(("extra", "flags", "_id", "type2")), value)


def _unknown_shape(message: dict[str, Any], rng: random.Random) -> None:
    """A shape the bridge cannot draw (with resolved polygons, so it is accepted), carrying blobs."""
    blob: Any = rng.choice(
        [
            {"points": [[1, 2], [3, 4]], "meta": {"a": {"b": {"c": [rng.choice(EXTREME_FLOATS)]}}}},
            rng.choice(SURROGATES),
            {rng.choice(SURROGATES): 1},
            _deep(rng),
            [[[[[[[[[["ten"]]]]]]]]]],
        ]
    )
    shape = {"type": rng.choice(("token-ring", "emanation", "cone", "line")), "blob": blob, "hole": False}
    region = {
        "id": rng.choice(("r1", "r9")),
        "shapes": [shape],
        "polygons": [{"points": [0, 0, 200, 0, 200, 200, 0, 200]}],
        "zone": {"type": "low"},
    }
    for path in paths(message):
        container = _at(message, path)
        if path and path[-1] == "regions" and isinstance(container, list):
            container.append(region)
            return
    _put(_at(message, rng.choice(paths(message))), rng, "shapes", [shape])


def _extreme_float(message: dict[str, Any], rng: random.Random) -> None:
    leaves = _leaves(message)
    value = rng.choice(EXTREME_FLOATS)
    if leaves and rng.random() < 0.8:
        _set(message, rng.choice(leaves), value)
    else:
        key = rng.choice(("rotation", "elevation", "radius", "level", "range", "x"))
        _put(_at(message, rng.choice(paths(message))), rng, key, value)


def _surrogate(message: dict[str, Any], rng: random.Random) -> None:
    text = rng.choice(SURROGATES)
    choice = rng.random()
    leaves = [p for p in _leaves(message) if p[-1] != "type"] or _leaves(message)
    if choice < 0.4 and leaves:
        _set(message, rng.choice(leaves), text)  # a value: a name, an id, a zone parameter
    elif choice < 0.8:
        _put(_at(message, rng.choice(paths(message))), rng, text, 1)  # a key anywhere
    else:
        environment = {text: rng.choice((1, "night", text))}
        scene = message.get("scene")
        (scene if isinstance(scene, dict) else message)["environment"] = environment


def _nesting(message: dict[str, Any], rng: random.Random) -> None:
    container = _at(message, rng.choice(paths(message)))
    _put(container, rng, rng.choice(("options", "environment", "blob", "extra")), _deep(rng))


MUTATIONS: dict[str, Callable[[dict[str, Any], random.Random], None]] = {
    "nesting": _nesting,
    "surrogate": _surrogate,
    "extreme-float": _extreme_float,
    "unknown-key": _unknown_key,
    "unknown-shape": _unknown_shape,
}


def mutate(message: dict[str, Any], rng: random.Random, kind: str | None = None) -> tuple[str, dict[str, Any]]:
    """A copy of ``message`` with one mutation of ``kind`` (random when ``None``); returns both."""
    kind = kind or rng.choice(sorted(MUTATIONS))
    mutated = copy.deepcopy(message)
    MUTATIONS[kind](mutated, rng)
    return kind, mutated


def frame(message: Any, *, raw_surrogates: bool = False) -> str:
    """The text frame: JSON with surrogates escaped (``\\ud800``, as on the wire) or, with
    ``raw_surrogates``, left in the ``str`` (as a replay file read leniently may give them); deep
    markers expanded into nested arrays or objects."""
    text = json.dumps(message, allow_nan=True, ensure_ascii=not raw_surrogates)
    marker = json.dumps(DEEP)[1:-1]
    while marker in text:
        start = text.index(marker)
        end = text.index('"', start)
        depth_text, opener = text[start + len(marker) : end].split(":")
        depth = int(depth_text)
        inner = "[" * depth + "]" * depth if opener == "[" else '{"k":' * depth + "1" + "}" * depth
        text = text[: start - 1] + inner + text[end + 1 :]
    return text
