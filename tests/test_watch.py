"""Subscriptions: `watch` pushes every pair once, then only the pairs whose ruling changed — to the
watcher, whichever connection of the world changed the scene."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from websockets.asyncio.client import ClientConnection, connect

from bridge import session as session_module
from bridge.config import BridgeConfig
from bridge.core.rules import RULESETS
from bridge.core.scene import Scene, Zone
from bridge.core.visibility import LineVerdict, SceneVisibility
from bridge.core.world import SceneState
from bridge.protocol import encode
from bridge.schema import SCHEMA_PATH
from bridge.server import run_bridge
from tests.core import test_visibility_properties as prop
from tests.scenes import OfflineClient, rect_region, scene, token

SECRET = "s"


def three_tokens() -> dict[str, Any]:
    """a and t face each other across a Low zone; b stands far below, clear of everything."""
    return scene(
        regions=[rect_region("r-low", "low", 400, 350, 200, 200)],
        tokens=[token("a", 0, 400), token("t", 1000, 400), token("b", 0, 2000)],
    )


VALIDATOR = jsonschema.Draft202012Validator(json.loads(SCHEMA_PATH.read_text(encoding="utf-8")))


class CheckedClient(OfflineClient):
    """An offline client that validates every answer and push against the exported schema."""

    def send(self, message: dict[str, Any]) -> list[dict[str, Any]]:
        answers = super().send(message)
        for answer in answers:
            VALIDATOR.validate(answer)
        return answers


def pairs(annotations: dict[str, Any]) -> dict[tuple[str, str], int | None]:
    return {(c["actor"], c["target"]): c["modifier"] for c in annotations["changed"]}


def test_watch_sends_every_pair_once_then_only_changes() -> None:
    """A watch pushes every pair once, then only what a change alters.

    The first push is the whole matrix; a move pushes only the moved token's pairs (their lines moved); a change that
    alters no ruling pushes nothing.
    """
    client = CheckedClient()
    client.sync(three_tokens())
    watching, full = client.send({"type": "watch", "id": "w1", "scene": "s1", "action": "bs-attack"})
    assert watching == {"type": "watching", "id": "w1", "watch": "w1", "scene": "s1", "action": "bs-attack"}
    assert full["type"] == "annotations" and full["full"] is True
    assert pairs(full) == {("a", "t"): -3, ("t", "a"): -3, ("a", "b"): 0, ("b", "a"): 0, ("t", "b"): 0, ("b", "t"): 0}
    # a wall far from every sight line, and t "moved" to where it stands: no ruling changes, nothing pushed
    far_wall = {"id": "w-far", "c": [3000, 3000, 3100, 3100], "sight": 20}
    unchanged = {"tokens": [token("t", 1000, 400)], "walls": [far_wall]}
    (patched,) = client.send({"type": "scene.patch", "id": "p1", "scene": "s1", "upsert": unchanged})
    assert patched["type"] == "scene.patched"
    # t steps out of the Low zone's line: t's pairs change (a-t loses its -3), nobody else's
    move = {"tokens": [token("t", 1000, 1500)]}
    answers = client.send({"type": "scene.patch", "id": "p2", "scene": "s1", "upsert": move})
    assert [a["type"] for a in answers] == ["scene.patched", "annotations"]
    assert pairs(answers[1]) == {("a", "t"): 0, ("t", "a"): 0, ("b", "t"): 0, ("t", "b"): 0}
    assert answers[1]["full"] is False and answers[1]["removed"] == []
    # the Low zone grows down over the a-b line: only pairs whose ruling changes come back, all now -3
    grown = {"regions": [rect_region("r-low", "low", 0, 600, 200, 1200)]}
    answers = client.send({"type": "scene.patch", "id": "p3", "scene": "s1", "upsert": grown})
    assert pairs(answers[1]) == {("a", "b"): -3, ("b", "a"): -3, ("a", "t"): -3, ("t", "a"): -3}


def test_removing_a_token_reports_its_pairs_removed_and_unwatch_stops_pushes() -> None:
    """Pairs of a removed token come back in `removed`; after `unwatch` nothing more is pushed."""
    client = CheckedClient()
    client.sync(three_tokens())
    client.send({"type": "watch", "id": "w1", "scene": "s1", "action": "bs-attack", "tokens": ["b"]})
    answers = client.send({"type": "scene.patch", "id": "p", "scene": "s1", "remove": {"tokens": ["b"]}})
    removed = {(r["actor"], r["target"]) for r in answers[1]["removed"]}
    assert removed == {("a", "b"), ("b", "a"), ("t", "b"), ("b", "t")}
    assert client.one({"type": "unwatch", "id": "u", "watch": "w1"}) == {"type": "unwatched", "id": "u", "watch": "w1"}
    moved = client.send({"type": "scene.patch", "id": "p2", "scene": "s1", "upsert": {"tokens": [token("t", 0, 900)]}})
    assert [a["type"] for a in moved] == ["scene.patched"]


def test_watch_errors_name_the_problem() -> None:
    """Unknown scene, token or action, and unwatch of an unknown watch, are named errors."""
    client = CheckedClient()
    client.sync(three_tokens())
    assert client.one({"type": "watch", "id": "w", "scene": "nope", "action": "bs-attack"})["code"] == "unknown-scene"
    assert (
        client.one({"type": "watch", "id": "w", "scene": "s1", "action": "bs-attack", "tokens": ["x"]})["code"]
        == "unknown-token"
    )
    assert client.one({"type": "watch", "id": "w", "scene": "s1", "action": "jump"})["code"] == "invalid-message"
    assert client.one({"type": "unwatch", "id": "u", "watch": "w"})["code"] == "invalid-message"
    bad = client.one({"type": "watch", "id": "w", "scene": "s1", "action": "bs-attack", "detail": "some"})
    assert bad["code"] == "invalid-message" and bad["details"]["field"] == "detail"  # the field, as for others


@pytest.fixture
async def bridge(tmp_path: Path) -> AsyncIterator[str]:
    config = BridgeConfig(host="127.0.0.1", port=0, data_dir=tmp_path, secret=SECRET, log=False)
    async with run_bridge(config) as (host, port):
        yield f"ws://{host}:{port}/ws"


async def hello(ws: ClientConnection) -> None:
    await ws.send(json.dumps({"type": "hello", "protocol": 1, "world": "w", "secret": SECRET}))
    assert json.loads(await ws.recv())["type"] == "welcome"


async def test_a_patch_from_another_connection_reaches_the_watcher(bridge: str) -> None:
    """The GM overlay watches; a move sent by another client of the world is pushed to it."""
    async with connect(bridge) as overlay, connect(bridge) as mover:
        await hello(overlay)
        await hello(mover)
        await mover.send(json.dumps({"type": "scene.sync", "id": "q", "scene": three_tokens()}))
        assert json.loads(await mover.recv())["type"] == "scene.synced"
        await overlay.send(json.dumps({"type": "watch", "id": "w1", "scene": "s1", "action": "bs-attack"}))
        assert json.loads(await overlay.recv())["type"] == "watching"
        assert json.loads(await overlay.recv())["full"] is True
        await mover.send(
            json.dumps(
                {"type": "scene.patch", "id": "p", "scene": "s1", "upsert": {"tokens": [token("t", 1000, 1500)]}}
            )
        )
        assert json.loads(await mover.recv())["type"] == "scene.patched"
        pushed = json.loads(await asyncio.wait_for(overlay.recv(), timeout=5))
        assert pushed["type"] == "annotations"
        assert pairs(pushed) == {("a", "t"): 0, ("t", "a"): 0, ("b", "t"): 0, ("t", "b"): 0}
    async with connect(bridge) as later:  # the overlay's watch went with its connection
        await hello(later)
        await later.send(
            json.dumps({"type": "scene.patch", "id": "p", "scene": "s1", "upsert": {"tokens": [token("t", 1000, 400)]}})
        )
        assert json.loads(await later.recv())["type"] == "scene.patched"


def test_traveller_annotations_carry_difficulty_asset_and_device() -> None:
    """Annotations carry the ruleset's own fields, so the module can feed twodsix from a watch."""
    client = CheckedClient()
    data = scene(
        tokens=[token("a", 0, 0, "binoculars"), token("t", 1000, 0)],
        ruleset="traveller",
        environment={"light": "day", "weather": "good"},
    )
    data["grid"]["units"] = "m"
    client.sync(data)
    _, full = client.send({"type": "watch", "id": "w", "scene": "s1", "action": "observation"})
    annotation = next(c for c in full["changed"] if (c["actor"], c["target"]) == ("a", "t"))
    assert annotation["difficulty"] and annotation["device"] == "binoculars" and annotation["asset"] == 1


def test_brief_watch_leaves_out_the_texts() -> None:
    """detail 'brief' (the overlay's) carries verdict, MOD, crossings and line, without candidates or texts."""
    client = CheckedClient()
    client.sync(three_tokens())
    _, full = client.send({"type": "watch", "id": "f", "scene": "s1", "action": "bs-attack"})
    _, brief = client.send({"type": "watch", "id": "b", "scene": "s1", "action": "bs-attack", "detail": "brief"})
    assert pairs(brief) == pairs(full)
    pair = next(c for c in brief["changed"] if (c["actor"], c["target"]) == ("a", "t"))
    assert set(pair) == {"actor", "target", "allowed", "modifier", "crossings", "line"}
    assert pair["crossings"] == [{"region": "r-low", "zone": "low", "kind": "through"}]
    assert len(json.dumps(brief)) < len(json.dumps(full))


# A push built from the engine's verdicts is the push built from its rulings.

ALL_ZONE_TYPES = sorted({zone for ruleset in RULESETS.values() for zone in ruleset.zone_types})


@st.composite
def zones_of(draw: st.DrawFn, ruleset: str) -> Zone:
    """A zone of any ruleset's type, with the parameters ``ruleset`` needs when the type is its own."""
    zone_type = draw(st.sampled_from(ALL_ZONE_TYPES))
    params: dict[str, Any] = {}
    if ruleset == "traveller" and zone_type == "smoke":
        params = {"density": draw(st.integers(1, 3))}
    elif ruleset == "traveller" and zone_type == "illuminated":
        params = {"by": draw(st.sampled_from(["ir-spotlight", "white-spotlight", "illumination-round"]))}
    elif ruleset == "gurps-4e" and zone_type == "darkness":
        params = draw(st.sampled_from([{}, {"penalty": -3}, {"total": True}]))
    return Zone.model_validate({"type": zone_type, **params})


@st.composite
def any_ruleset_scenes(draw: st.DrawFn) -> Scene:
    """Random scenes of any ruleset: zones of every ruleset's types (the others' are foreign), tokens with
    Infinity's traits (foreign outside it), walls of every kind, tokens on one spot now and then."""
    ruleset = draw(st.sampled_from(sorted(RULESETS)))
    zone_list = [
        draw(prop.regions(f"r{i}")).model_copy(update={"zone": draw(zones_of(ruleset))})
        for i in range(draw(st.integers(0, 5)))
    ]
    token_list = [draw(prop.tokens(f"t{i}")) for i in range(draw(st.integers(2, 5)))]
    wall_list = [draw(prop.walls(f"w{i}")) for i in range(draw(st.integers(0, 4)))]
    made = prop._scene(zone_list, token_list, wall_list, ruleset=ruleset, locale=draw(st.sampled_from(["en", "es"])))
    if ruleset == "traveller":
        environment = {"light": draw(st.sampled_from(["day", 1, 3])), "weather": "good"}
        made = made.model_copy(update={"environment": environment})
    return made


@given(st.data(), any_ruleset_scenes(), st.booleans())
@settings(max_examples=max(1, prop.EXAMPLES // 2), deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_pushes_from_verdicts_are_the_json_of_the_rulings(data: st.DataObject, scene: Scene, brief: bool) -> None:
    """Pushes built from the engine's verdicts are byte for byte the JSON built from every pair's ruling.

    For every ruleset, action and detail: a watch's first push and its pushes after random patches (as before).
    """
    ruleset = RULESETS[scene.rules.ruleset]
    action = data.draw(st.sampled_from(sorted(ruleset.actions)))
    reaction = data.draw(st.booleans())
    state = SceneState(scene, ruleset)
    fast = SceneVisibility(state, action=action, reaction=reaction)
    plain = SceneVisibility(state, action=action, reaction=reaction)
    first = encode(session_module._annotations("w", state, fast.rulings(), full=True, brief=brief, engine=fast))
    assert first == encode(session_module._annotations("w", state, dict(plain.rulings()), full=True, brief=brief))
    for serial in range(data.draw(st.integers(1, 3))):
        state = SceneState(data.draw(prop.patches(state.scene, serial)), ruleset, version=serial + 1)
        pushed = session_module._annotations("w", state, fast.update(state), full=False, brief=brief, engine=fast)
        expected = session_module._annotations("w", state, dict(plain.update(state)), full=False, brief=brief)
        assert encode(pushed) == encode(expected)


def test_a_brief_push_of_infinity_builds_no_ruling() -> None:
    """On an Infinity scene a brief push reads every pair from the verdicts: the engine hands out no ruling."""
    client = CheckedClient()
    client.sync(three_tokens())
    state = client.session._worlds.get("offline").use("s1")
    assert state is not None
    engine = SceneVisibility(state, action="bs-attack")
    found = dict(engine.verdict_items(engine.rulings()))
    assert len(found) == 6 and all(isinstance(item, LineVerdict) for item in found.values())
    assert found[("a", "t")].modifier == -3 and [c.region for c in found[("a", "t")].crossings] == ["r-low"]
