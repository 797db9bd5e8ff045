"""bridge/protocol.py directly: bridge messages' wire form, encode's last line of defence, pushes split into frames."""

from __future__ import annotations

import json
import logging
from typing import Any

import orjson
import pytest

from bridge.errors import TooLarge, UnknownScene
from bridge.protocol import (
    Adjudication,
    Pong,
    Prebuilt,
    SessionEnded,
    WireModifier,
    dump_message,
    encode,
    encode_frames,
    prune_wire,
)
from bridge.session import Send, Session, Worlds, error_message
from tests.scenes import rect_region, scene, token


def pushes() -> tuple[Prebuilt, Prebuilt]:
    """A real session's two `annotations` pushes: the full one of a watch (30 pairs), then an update.

    The update moves t0 away and removes t5: some pairs changed, ten gone (`removed`), `full: false`.
    """
    session = Session(Worlds(), offline=True)

    def push(message: dict[str, Any]) -> Prebuilt:
        (found,) = [e.message for e in session.receive(json.dumps(message)) if isinstance(e, Send)][-1:]
        assert isinstance(found, Prebuilt) and found.payload["type"] == "annotations", found
        return found

    tokens = [token(f"t{i}", i * 150, 400) for i in range(6)]
    data = scene(regions=[rect_region("r-low", "low", 400, 350, 200, 200)], tokens=tokens)
    session.receive(json.dumps({"type": "scene.sync", "id": "q", "scene": data}))
    full = push({"type": "watch", "id": "w", "scene": "s1", "action": "bs-attack"})
    moved = {"tokens": [token("t0", 0, 1400)]}
    update = push({"type": "scene.patch", "id": "p", "scene": "s1", "upsert": moved, "remove": {"tokens": ["t5"]}})
    assert full.payload["full"] and not update.payload["full"] and update.payload["removed"]
    return full, update


def pairs(payload: dict[str, Any], kind: str) -> list[tuple[str, str]]:
    """The (actor, target) pairs of a push's `changed` or `removed`, in order."""
    return [(entry["actor"], entry["target"]) for entry in payload[kind]]


def test_dump_message_leaves_out_what_is_empty_but_keeps_the_nulls_the_contract_shows() -> None:
    """Absent optional fields and empty `details` are left out; `modifier`, `target`, `value`, `session` stay null.

    Contract: "`modifier`: … `null` when `allowed` is false."
    """
    candidate = WireModifier(source="zone", value=None, applied=False, label="Zero Visibility Zone")
    ruling = Adjudication(
        id="a1",
        scene="s1",
        actor="t-fus",
        target=None,
        action="combat-jump",
        ruleset="infinity-n4",
        edition="current",
        allowed=False,
        modifier=None,
        crossings=[],
        modifiers=[candidate],
        notes=[],
        citations=[],
    )
    wire = dump_message(ruling)
    assert wire["modifier"] is None and wire["target"] is None
    assert wire["modifiers"] == [{"source": "zone", "value": None, "applied": False, "label": "Zero Visibility Zone"}]
    for absent in ("line", "record", "difficulty", "asset", "device", "details"):
        assert absent not in wire, absent
    assert wire["logged"] is False and wire["reaction"] is False and wire["crossings"] == []
    assert dump_message(SessionEnded(id="e1", session=None)) == {"type": "session.ended", "id": "e1", "session": None}


def test_prune_wire_prunes_at_every_depth_and_keeps_false_zero_and_empty_lists() -> None:
    """prune_wire drops `None` and empty `details` at every depth (lists too); False, 0, "" and [] stay; input kept."""
    data = {
        "kept": None,
        "details": {},
        "zero": 0,
        "no": False,
        "empty": "",
        "none": [],
        "extra": {"gone": None, "target": None, "details": {}, "more": {"details": {"line": 2}}},
        "items": [{"gone": None, "value": None, "details": {}}, 3, "x"],
    }
    before = json.dumps(data)
    assert prune_wire(data) == {
        "zero": 0,
        "no": False,
        "empty": "",
        "none": [],
        "extra": {"target": None, "more": {"details": {"line": 2}}},
        "items": [{"value": None}, 3, "x"],
    }
    assert json.dumps(data) == before


def test_an_error_carries_its_request_id_when_known_and_always_a_details_object() -> None:
    """An error's wire form is the contract's shape: `details` an object even when empty, `id` left out when unknown.

    Contract: `{"type": "error", "id": "<request id if known>", "code": "…", "message": "…", "details": {…}}`.
    """
    unknown = dump_message(error_message(UnknownScene("no scene s9 is held"), "q1"))
    assert unknown == {
        "type": "error",
        "id": "q1",
        "code": "unknown-scene",
        "message": "no scene s9 is held",
        "details": {},
    }
    written = json.loads(encode(error_message(UnknownScene("x"), "q1")))
    assert list(written) == ["type", "id", "code", "message", "details"]
    big = dump_message(error_message(TooLarge("frame too large", limit="frame-bytes", value=500, max=200)))
    assert big == {
        "type": "error",
        "code": "too-large",
        "message": "frame too large",
        "details": {"limit": "frame-bytes", "value": 500, "max": 200},
    }


def test_a_prebuilt_payload_is_the_wire_form_as_it_is() -> None:
    """A Prebuilt's payload is sent as given: the same dict, not pruned, written as compact UTF-8 JSON."""
    notes = ["Zona de Mala Visibilidad ñ"]
    payload = {"type": "adjudication", "id": "a1", "target": None, "line": None, "notes": notes}
    built = Prebuilt(payload=payload)
    assert built.payload is payload and dump_message(built) is payload
    text = encode(built)
    assert text == '{"type":"adjudication","id":"a1","target":null,"line":null,"notes":["Zona de Mala Visibilidad ñ"]}'
    assert encode_frames(built, 1 << 20) == [text.encode()]


def test_an_answer_that_cannot_be_written_becomes_an_internal_error_to_its_request(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A Prebuilt holding what JSON cannot write is answered internal-error with its own id, and logged once.

    The id is read from the payload (a Prebuilt has no `id` field of its own); an id that is not a string is left out.
    """
    error = {"type": "error", "code": "internal-error", "message": "the bridge could not write its answer"}
    broken = Prebuilt(payload={"type": "adjudication", "id": "a1", "notes": {"a set"}})
    with caplog.at_level(logging.ERROR, logger="bridge.protocol"):
        assert json.loads(encode(broken)) == {**error, "id": "a1", "details": {}}
    assert [r.getMessage().startswith("could not encode a Prebuilt answer") for r in caplog.records] == [True]
    assert encode_frames(broken, 1 << 20) == [encode(broken).encode()]
    numbered = Prebuilt(payload={"type": "adjudication", "id": 7, "notes": {"a set"}})
    assert json.loads(encode(numbered)) == {**error, "details": {}}


def test_a_frame_at_the_limit_or_of_another_type_is_sent_whole() -> None:
    """One frame, byte for byte what encode writes: a push exactly at the limit, any other message however large."""
    full, _ = pushes()
    raw = orjson.dumps(full.payload)
    assert encode_frames(full, len(raw)) == [raw]
    assert encode_frames(Pong(id="p"), 5) == [b'{"type":"pong","id":"p"}']
    answer = Prebuilt(payload={"type": "adjudication", "id": "a1", "notes": ["x" * 5000]})
    assert encode_frames(answer, 100) == [encode(answer).encode()]


@pytest.mark.parametrize("which", ["full", "update"])
def test_a_push_over_the_limit_is_split_into_parts_of_one_version_in_order(which: str) -> None:
    """A push over the limit: parts of one watch/scene/version, `full` on the first only, `more` on all but the last.

    docs/protocol.md, "Large pushes": "The first carries the push's `full`; the later ones `full: false`; every part but
    the last carries `more: true`, the last `more: false`. Pairs are not split across parts; `removed` pairs come after
    the `changed` ones."
    """
    full, update = pushes()
    push = full if which == "full" else update
    limit = len(orjson.dumps(push.payload)) // 3
    parts = [json.loads(frame) for frame in encode_frames(push, limit)]
    assert len(parts) > 2
    for part in parts:
        assert {key: part[key] for key in ("type", "watch", "scene", "version")} == {
            key: push.payload[key] for key in ("type", "watch", "scene", "version")
        }
        assert part["changed"] or part["removed"]
    assert [part["full"] for part in parts] == [push.payload["full"]] + [False] * (len(parts) - 1)
    assert [part["more"] for part in parts] == [True] * (len(parts) - 1) + [False]
    assert [entry for part in parts for entry in part["changed"]] == push.payload["changed"]
    assert [entry for part in parts for entry in part["removed"]] == push.payload["removed"]
    holding = [(bool(part["changed"]), bool(part["removed"])) for part in parts]
    first_removed = next((n for n, (_, removed) in enumerate(holding) if removed), len(parts))
    assert not any(changed for changed, _ in holding[first_removed + 1 :])


def test_a_pair_larger_than_the_limit_goes_alone_in_a_part_of_its_own() -> None:
    """With a limit smaller than any pair, every pair is a part of its own, and no part is empty."""
    _, update = pushes()
    frames = encode_frames(update, 20)
    parts = [json.loads(frame) for frame in frames]
    count = len(update.payload["changed"]) + len(update.payload["removed"])
    assert len(parts) == count
    assert [len(part["changed"]) + len(part["removed"]) for part in parts] == [1] * count
    assert [pair for part in parts for pair in pairs(part, "changed")] == pairs(update.payload, "changed")
    assert [pair for part in parts for pair in pairs(part, "removed")] == pairs(update.payload, "removed")


def test_every_part_holding_several_pairs_is_within_the_limit() -> None:
    """Every part of a split push that holds more than one pair is at most the limit, whatever the limit.

    docs/protocol.md, "Large pushes": "An `annotations` push whose frame would be larger than the bridge's frame limit
    (`--max-frame-bytes`) is sent as several `annotations` frames, each under the limit".
    """
    _, update = pushes()
    over = []
    for limit in range(200, len(orjson.dumps(update.payload))):
        for frame in encode_frames(update, limit):
            part = json.loads(frame)
            if len(part["changed"]) + len(part["removed"]) > 1 and len(frame) > limit:
                over.append((limit, len(frame)))
    assert over == []
