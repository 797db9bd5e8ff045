"""Fuzzing the session: random and mutated contract messages never raise, every answer is valid under the
exported schema, and the state afterwards equals a replay of only the messages that were accepted."""

from __future__ import annotations

import json
import math
import os
import random
from typing import Any

import jsonschema
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bridge.log.effects import unlogged_answer
from bridge.protocol import encode
from bridge.schema import SCHEMA_PATH
from bridge.session import Close, Send, Session, StoreThenSend, Worlds
from tests.mutations import MUTATIONS, mutate
from tests.mutations import frame as hostile_frame

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "150"))
VALIDATOR = jsonschema.Draft202012Validator(json.loads(SCHEMA_PATH.read_text(encoding="utf-8")))


def mostly(good: st.SearchStrategy[Any], bad: st.SearchStrategy[Any], odds: int = 10) -> st.SearchStrategy[Any]:
    """``odds - 1`` draws in ``odds`` from ``good``: most messages are valid, so state really changes."""
    return st.integers(0, odds - 1).flatmap(lambda i: bad if i == odds // 2 else good)


ids = mostly(st.sampled_from(["s1", "a", "t", "r1", "r2", "w1"]), st.sampled_from(["ghost", "", "s2"]))
scene_ids = mostly(st.just("s1"), st.sampled_from(["s2", "", "ghost"]))
token_ids = mostly(st.sampled_from(["a", "t", "b"]), st.sampled_from(["ghost", ""]))
coords = mostly(
    st.floats(min_value=-200, max_value=1200, allow_nan=False),
    st.sampled_from([math.nan, math.inf, -math.inf, 1e300, -1e12, 0.0]),
    odds=60,
)
sizes = mostly(st.floats(min_value=1, max_value=600), st.sampled_from([0.0, -5.0, math.nan]), odds=30)
zone_types = mostly(
    st.sampled_from(["low", "poor", "zero", "white-noise", "smoke", "eclipse"]),
    st.sampled_from(["darkness", "fog", "woods"]),
)
traits = st.lists(
    mostly(
        st.sampled_from(["multispectral-visor-1", "marksmanship", "sixth-sense"]), st.sampled_from(["blind", "x-ray"])
    ),
    max_size=2,
)


@st.composite
def shapes(draw: st.DrawFn) -> dict[str, Any]:
    kind = draw(mostly(st.sampled_from(["rectangle", "circle", "ellipse", "polygon"]), st.just("cone"), odds=30))
    x, y = draw(coords), draw(coords)
    if kind == "rectangle":
        return {"type": kind, "x": x, "y": y, "width": draw(sizes), "height": draw(sizes), "rotation": draw(coords)}
    if kind == "circle":
        return {"type": kind, "x": x, "y": y, "radius": draw(sizes)}
    if kind == "ellipse":
        return {"type": kind, "x": x, "y": y, "radiusX": draw(sizes), "radiusY": draw(sizes)}
    if kind == "polygon":  # includes self-intersecting and degenerate rings, and odd lengths
        return {
            "type": kind,
            "points": draw(
                mostly(
                    st.lists(coords, min_size=6, max_size=10).map(lambda p: p[: len(p) // 2 * 2]),
                    st.lists(coords, max_size=5),
                )
            ),
        }
    return {"type": kind, "x": x}


@st.composite
def regions(draw: st.DrawFn) -> dict[str, Any]:
    region: dict[str, Any] = {
        "id": draw(st.sampled_from(["r1", "r2", "r3"])),
        "shapes": draw(st.lists(shapes(), min_size=1, max_size=2)),
    }
    if draw(mostly(st.just(True), st.just(False))):
        region["zone"] = {"type": draw(zone_types)}
    if draw(st.booleans()):
        region["elevation"] = {"bottom": draw(st.one_of(st.none(), coords)), "top": draw(st.one_of(st.none(), coords))}
    return region


@st.composite
def tokens(draw: st.DrawFn) -> dict[str, Any]:
    return {
        "id": draw(st.sampled_from(["a", "t", "b"])),
        "x": draw(coords),
        "y": draw(coords),
        "width": draw(mostly(st.sampled_from([1, 2]), st.sampled_from([0, -1]))),
        "height": 1,
        "elevation": draw(coords),
        "traits": draw(traits),
    }


walls = st.builds(
    lambda i, c, s: {"id": i, "c": c, "sight": s},
    st.sampled_from(["w1", "w2"]),
    mostly(st.lists(coords, min_size=4, max_size=4), st.lists(coords, min_size=3, max_size=5)),
    mostly(st.sampled_from([0, 10, 20, 30, True]), st.just(7)),
)


@st.composite
def scenes(draw: st.DrawFn) -> dict[str, Any]:
    return {
        "id": "s1",
        "rules": {
            "ruleset": draw(mostly(st.just("infinity-n4"), st.sampled_from(["infinity-codeone", "chess"]))),
            "edition": draw(mostly(st.just("current"), st.sampled_from(["original", "1.2", "9"]))),
            "lines": draw(st.sampled_from(["center", "best"])),
        },
        "regions": draw(st.lists(regions(), max_size=3, unique_by=lambda r: r["id"])),
        "tokens": draw(st.lists(tokens(), max_size=3, unique_by=lambda t: t["id"])),
        "walls": draw(st.lists(walls, max_size=2, unique_by=lambda w: w["id"])),
    }


@st.composite
def messages(draw: st.DrawFn) -> Any:
    kind = draw(
        st.sampled_from(["sync", "sync", "patch", "patch", "adjudicate", "adjudicate", "ping", "junk", "mutated"])
    )
    if kind == "sync":
        return {"type": "scene.sync", "id": "q", "scene": draw(scenes())}
    if kind == "patch":
        return {
            "type": "scene.patch",
            "id": "p",
            "scene": draw(scene_ids),
            "upsert": {
                "tokens": draw(st.lists(tokens(), max_size=2, unique_by=lambda t: t["id"])),
                "regions": draw(st.lists(regions(), max_size=1)),
            },
            "remove": {"walls": draw(st.lists(ids, max_size=2))},
        }
    if kind == "adjudicate":
        return {
            "type": "adjudicate",
            "id": "a",
            "scene": draw(scene_ids),
            "actor": draw(token_ids),
            "target": draw(mostly(token_ids, st.none())),
            "action": draw(
                mostly(st.sampled_from(["bs-attack", "dodge", "combat-jump", "speculative-attack"]), st.just("nope"))
            ),
            "reaction": draw(st.booleans()),
            "log": draw(st.booleans()),
        }
    if kind == "ping":
        return {"type": "ping", "id": draw(st.one_of(ids, st.integers()))}
    if kind == "junk":
        return draw(st.one_of(st.text(max_size=20), st.binary(max_size=10)))
    base = draw(messages())
    if isinstance(base, dict) and base:
        key = draw(st.sampled_from(sorted(base)))
        base[key] = draw(st.one_of(st.none(), st.integers(), st.text(max_size=5), st.lists(st.integers(), max_size=2)))
    return base


def frame(message: Any) -> str | bytes:
    if isinstance(message, (str, bytes)):
        return message
    return json.dumps(message, allow_nan=True)


def run(session: Session, frames: list[str | bytes]) -> list[list[dict[str, Any]]]:
    out = []
    for data in frames:
        answers = []
        for effect in session.receive(data):
            if isinstance(effect, Send):
                answers.append(json.loads(encode(effect.message)))
            elif isinstance(effect, StoreThenSend):
                if effect.record is not None:  # what the log would store serialises, snapshot included
                    json.loads(effect.record.model_dump_json())
                answers.append(json.loads(encode(unlogged_answer(effect))))
        out.append(answers)
    return out


def world_state(session: Session) -> dict[str, Any]:
    assert session.world is not None
    return {sid: state.scene.model_dump(mode="json") for sid, state in session.world.scenes.items()}


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.builds(
        lambda first, rest: [first, *rest],
        scenes().map(lambda sc: {"type": "scene.sync", "id": "q0", "scene": sc}),
        st.lists(messages(), max_size=12),
    )
)
def test_fuzzed_messages_never_raise_answers_validate_and_state_equals_valid_replay(batch: list[Any]) -> None:
    """No exception escapes; every answer is schema-valid; state == replay of the accepted messages."""
    frames = [frame(m) for m in batch]
    session = Session(Worlds(), offline=True)
    results = run(session, frames)
    for answers in results:
        for answer in answers:
            VALIDATOR.validate(answer)
    accepted = [f for f, answers in zip(frames, results, strict=True) if all(a["type"] != "error" for a in answers)]
    clean = Session(Worlds(), offline=True)
    replayed = run(clean, accepted)
    assert all(a["type"] != "error" for answers in replayed for a in answers)
    assert world_state(clean) == world_state(session)


@st.composite
def hostile(draw: st.DrawFn) -> str:
    """A contract message with one hostile mutation (of every class in turn), as a text frame."""
    base = draw(st.one_of(messages().filter(lambda m: isinstance(m, dict) and bool(m)), scenes().map(_sync)))
    rng = draw(st.randoms(use_true_random=False))
    kind, mutated = mutate(base, rng, draw(st.sampled_from(sorted(MUTATIONS))))
    return hostile_frame(mutated, raw_surrogates=kind == "surrogate" and draw(st.booleans()))


def _sync(scene: dict[str, Any]) -> dict[str, Any]:
    return {"type": "scene.sync", "id": "q", "scene": scene}


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.builds(
        lambda first, rest: [first, *rest],
        scenes().map(lambda sc: json.dumps(_sync(sc), allow_nan=True)),
        st.lists(st.one_of(hostile(), messages().map(frame)), max_size=10),
    )
)
def test_hostile_messages_are_answered_with_the_contracts_errors_and_state_equals_valid_replay(
    batch: list[str],
) -> None:
    """Hostile messages get the contract's errors, never an internal one, and the state equals a valid replay.

    Nesting, lone surrogates, extreme floats, unknown keys and shapes at every level: nothing raises, every answer and
    log record serialises and validates, and the state equals a replay of only the accepted messages.
    """
    session = Session(Worlds(), offline=True)
    results = run(session, batch)
    for answers in results:
        for answer in answers:
            VALIDATOR.validate(answer)
            assert answer.get("code") != "internal-error", answer
    accepted = [f for f, answers in zip(batch, results, strict=True) if all(a["type"] != "error" for a in answers)]
    clean = Session(Worlds(), offline=True)
    replayed = run(clean, accepted)
    assert all(a["type"] != "error" for answers in replayed for a in answers)
    assert world_state(clean) == world_state(session)


@settings(max_examples=max(EXAMPLES // 3, 20), deadline=None)
@given(
    st.fixed_dictionaries({"type": st.just("hello"), "protocol": st.just(1), "world": st.just("w")}),
    st.randoms(use_true_random=False),
    st.sampled_from(sorted(MUTATIONS)),
)
def test_a_hostile_first_message_gets_an_error_then_a_close_frame(
    hello: dict[str, Any], rng: random.Random, kind: str
) -> None:
    """A hostile first message gets the contract's error and a close code: never an exception, never silence.

    It comes before ``hello`` (unauthenticated); when the mutation left a valid hello, the answer is the welcome.
    """
    session = Session(Worlds(), authenticate=lambda world, secret: True)
    effects = session.receive(hostile_frame(mutate(hello, rng, kind)[1]))
    sent = [json.loads(encode(e.message)) for e in effects if isinstance(e, Send)]
    VALIDATOR.validate(sent[0])
    if sent[0]["type"] == "error":
        assert sent[0]["code"] != "internal-error"
        assert isinstance(effects[-1], Close) and effects[-1].code >= 4000
        assert session.state == "closed"
    else:
        assert sent[0]["type"] == "welcome" and session.state == "ready"
