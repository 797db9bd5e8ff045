"""``adjudicate`` answered from the scene's kept engine (bridge.engines) against the per-pair path."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bridge import warmup
from bridge.core.scene import Scene
from bridge.engines import SceneEngines
from bridge.errors import BridgeError
from bridge.log.effects import unlogged_answer
from bridge.protocol import Adjudicate, encode
from bridge.session import Limits, Send, Session, StoreThenSend, Worlds, _adjudication, _adjudication_answer

from .core.test_visibility_properties import EXAMPLES, scenes
from .scenes import rect_region, scene, token

#: What each ruleset's zones and traits may be in a random scene (Infinity's come from the strategy).
ZONES: dict[str, list[dict[str, Any]]] = {
    "gurps-4e": [{"type": "darkness", "penalty": -3}, {"type": "darkness", "total": True}, {"type": "smoke"}],
    "traveller": [{"type": "smoke", "density": 2}, {"type": "woods"}, {"type": "illuminated", "by": "day"}],
}
TRAITS: dict[str, list[str]] = {
    "gurps-4e": ["night-vision-3", "infravision", "dark-vision", "blind"],
    "traveller": ["binoculars", "image-intensifier", "ir-goggles", "thermal-viewer"],
}
ACTIONS: dict[str, list[str]] = {
    "infinity-n4": ["bs-attack", "dodge", "discover", "combat-jump", "speculative-attack"],
    "infinity-codeone": ["bs-attack", "discover", "speculative-attack"],
    "gurps-4e": ["attack", "dodge", "parry"],
    "traveller": ["observation", "sensors"],
}


class Client:
    """A real offline session spoken to in JSON; ``engines=False`` keeps every answer on the per-pair path."""

    def __init__(self, *, engines: bool) -> None:
        self.worlds = Worlds()
        self.session = Session(self.worlds, offline=True, limits=Limits(engine_pairs=40_000 if engines else 0))
        self.count = 0

    def send(self, message: dict[str, Any]) -> dict[str, Any]:
        self.count += 1
        (effect,) = self.session.receive(json.dumps({"id": f"m{self.count}", **message}))
        assert isinstance(effect, Send | StoreThenSend)
        wire = encode(effect.message if isinstance(effect, Send) else unlogged_answer(effect))
        answer: dict[str, Any] = json.loads(wire)
        answer.pop("id", None)
        return answer

    @property
    def engines(self) -> SceneEngines:
        return self.worlds.engines_of("offline")


def _as_ruleset(data: Any, ruleset: str, scene_data: dict[str, Any]) -> dict[str, Any]:
    """The random Infinity scene recast in ``ruleset``'s zones and traits, with lights where they count."""
    scene_data["rules"] = {**scene_data["rules"], "ruleset": ruleset, "edition": "current"}
    if ruleset in ZONES:
        for region in scene_data["regions"]:
            if region.get("zone") is not None:
                region["zone"] = data.draw(st.sampled_from(ZONES[ruleset]))
        for item in scene_data["tokens"]:
            item["traits"] = data.draw(st.lists(st.sampled_from(TRAITS[ruleset]), max_size=2, unique=True))
            if data.draw(st.integers(0, 3)) == 0:
                item["light"] = {"radius": data.draw(st.sampled_from([1, 3])), "kind": "white"}
        scene_data["lights"] = [
            {"id": f"lamp{k}", "x": data.draw(st.integers(0, 600)), "y": data.draw(st.integers(0, 600)), "radius": 2}
            for k in range(data.draw(st.integers(0, 2)))
        ]
        if ruleset == "gurps-4e":
            scene_data["environment"] = {"darkness": data.draw(st.sampled_from([0, -4, -10]))}
    return scene_data


@pytest.mark.parametrize("ruleset", sorted(ACTIONS))
@given(data=st.data(), random=scenes())
@settings(max_examples=max(1, EXAMPLES // 3), deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_answers_from_the_engine_equal_the_per_pair_path(data: st.DataObject, random: Scene, ruleset: str) -> None:
    """On random scenes of the three rulesets, the engine answers every pair exactly as the per-pair path does.

    Rulings, candidates, reasons, citations and errors are the same, before and after a patch.
    """
    scene_data = _as_ruleset(data, ruleset, random.model_dump(mode="json"))
    scene_data["rules"]["lines"] = data.draw(st.sampled_from(["center", "center", "center", "best"]))
    engine, plain = Client(engines=True), Client(engines=False)
    synced = engine.send({"type": "scene.sync", "scene": scene_data})
    assert synced == plain.send({"type": "scene.sync", "scene": scene_data})
    if synced["type"] != "scene.synced":
        return
    ids = [item["id"] for item in scene_data["tokens"]]
    for round_ in range(2):
        action = data.draw(st.sampled_from(ACTIONS[ruleset]))
        reaction = data.draw(st.booleans())
        extra = data.draw(st.sampled_from([{}, {}, {"aware": False}, {"aware": True, "options": {"warm": False}}]))
        for actor in ids:
            for target in [*ids, None]:
                ask = {"type": "adjudicate", "scene": scene_data["id"], "actor": actor, "action": action}
                ask.update(reaction=reaction, log=False, **extra)
                if target is not None:
                    ask["target"] = target
                assert engine.send(ask) == plain.send(ask), (actor, target, action, reaction, extra)
                _same_as_the_model(engine.session, ask)
        if round_ == 0:  # a token moves: the kept engine is updated, not rebuilt
            x, y = data.draw(st.integers(0, 600)), data.draw(st.integers(0, 600))
            moved = {**scene_data["tokens"][0], "x": x, "y": y}
            patch = {"type": "scene.patch", "scene": scene_data["id"], "upsert": {"tokens": [moved]}}
            assert engine.send(patch) == plain.send(patch)
    assert len(plain.engines) == 0


def _same_as_the_model(session: Session, ask: dict[str, Any]) -> None:
    """The answer built straight into wire form is the very JSON text the ``Adjudication`` model encodes to."""
    message = Adjudicate.model_validate({"id": "x", **ask})
    assert session.world is not None
    state = session.world.scenes[message.scene]
    try:
        ruling = session.rule(state, message)
    except BridgeError:
        return
    assert encode(_adjudication_answer(message, state, ruling)) == encode(_adjudication(message, state, ruling))


def _open_field() -> dict[str, Any]:
    return scene(
        regions=[rect_region("smoke", "smoke", 300, 0, 100, 400), rect_region("dark", "low", 600, 0, 100, 400)],
        tokens=[token("a", 0, 100), token("b", 900, 100), token("c", 900, 300, "multispectral-visor-2")],
    )


def test_a_second_question_on_an_unchanged_scene_is_a_look_up() -> None:
    """The first question builds the scene's engine; another pair on the same version computes no geometry."""
    client = Client(engines=True)
    client.send({"type": "scene.sync", "scene": _open_field()})
    first = client.send({"type": "adjudicate", "scene": "s1", "actor": "a", "target": "b", "action": "bs-attack"})
    assert first["type"] == "adjudication" and client.engines.builds == 1
    held = client.session.world.scenes["s1"]  # type: ignore[union-attr]
    second = client.send({"type": "adjudicate", "scene": "s1", "actor": "c", "target": "a", "action": "bs-attack"})
    assert second["type"] == "adjudication" and second["actor"] == "c"
    assert (client.engines.builds, client.engines.updates) == (1, 0)
    assert "geometry" not in held.__dict__  # the per-pair path's SceneGeometry was never built


def test_while_the_engine_loads_in_the_background_the_per_pair_path_answers(monkeypatch: pytest.MonkeyPatch) -> None:
    """A first chat card never waits for the engine's import: the per-pair path answers while it loads.

    While ``sightline serve`` loads the engine in the background, a question builds no engine and gets the per-pair
    answer; once loaded, the engine answers.
    """
    monkeypatch.setattr(warmup, "_status", "loading")
    client, plain = Client(engines=True), Client(engines=False)
    for each in (client, plain):
        each.send({"type": "scene.sync", "scene": _open_field()})
    ask = {"type": "adjudicate", "scene": "s1", "actor": "a", "target": "b", "action": "bs-attack"}
    assert client.send(ask) == plain.send(ask)
    assert client.engines.builds == 0
    monkeypatch.setattr(warmup, "_status", "ready")
    ask = {**ask, "actor": "c", "target": "a"}
    assert client.send(ask) == plain.send(ask)
    assert client.engines.builds == 1


def test_a_patch_updates_the_engine_at_the_next_question() -> None:
    """After a move the kept engine is updated once (not rebuilt), whatever the number of patches."""
    client = Client(engines=True)
    client.send({"type": "scene.sync", "scene": _open_field()})
    client.send({"type": "adjudicate", "scene": "s1", "actor": "a", "target": "b", "action": "bs-attack"})
    for x in (100, 200):
        client.send({"type": "scene.patch", "scene": "s1", "upsert": {"tokens": [token("a", x, 100)]}})
    assert client.engines.updates == 0
    answer = client.send({"type": "adjudicate", "scene": "s1", "actor": "a", "target": "b", "action": "bs-attack"})
    assert answer["line"]["start"]["x"] == 250
    assert (client.engines.builds, client.engines.updates) == (1, 1)


def test_engines_are_bounded_and_dropped_when_idle() -> None:
    """A world keeps a few engines holding a bounded number of pairs, and none not asked for long.

    Past the bound, the least recently asked engine is dropped first.
    """
    now = [0.0]
    worlds = Worlds()
    session = Session(worlds, offline=True, monotonic=lambda: now[0])
    session.receive(json.dumps({"type": "scene.sync", "id": "s", "scene": _open_field()}))
    for action in ("bs-attack", "dodge", "discover", "speculative-attack", "combat-jump"):
        ask = {"type": "adjudicate", "id": action, "scene": "s1", "actor": "a", "target": "b", "action": action}
        session.receive(json.dumps(ask))
        now[0] += 60  # past the pause after a build
    engines = worlds.engines_of("offline")
    assert len(engines) == engines.limit == 4
    engines.pair_budget = 12  # two engines of this 3-token scene (6 pairs each)
    session.receive(
        json.dumps(
            {"type": "adjudicate", "id": "again", "scene": "s1", "actor": "a", "target": "c"} | {"action": "bs-attack"}
        )
    )
    assert len(engines) == 2
    now[0] += engines.idle_seconds + 1
    session.receive(json.dumps({"type": "scene.patch", "id": "p", "scene": "s1", "upsert": {"tokens": []}}))
    assert len(engines) == 0


def test_questions_the_engine_cannot_express_take_the_per_pair_path() -> None:
    """Per-request options, an unaware target, no target, or a scene over the pair limit build no engine."""
    client = Client(engines=True)
    client.send({"type": "scene.sync", "scene": _open_field()})
    base = {"type": "adjudicate", "scene": "s1", "actor": "a", "action": "bs-attack"}
    client.send({**base, "target": "b", "aware": False})
    client.send({**base, "target": "b", "options": {"size": 1}})
    client.send({**base, "action": "combat-jump"})
    assert client.engines.builds == 0
    small = Client(engines=True)
    small.session = Session(small.worlds, offline=True, limits=Limits(engine_pairs=5))  # 3 tokens: 6 pairs
    small.send({"type": "scene.sync", "scene": _open_field()})
    assert small.send({**base, "target": "b"})["type"] == "adjudication"
    assert small.engines.builds == 0


def test_a_watch_of_the_scene_answers_without_an_engine_of_its_own() -> None:
    """A question after a move is read from an open watch's engine: no second engine is built, the answer is the same.

    The overlay's watch is open on the scene for the same action; its engine is already updated by the patch.
    """
    client, plain = Client(engines=True), Client(engines=False)
    for each in (client, plain):
        each.send({"type": "scene.sync", "scene": _open_field()})
    client.session.receive(json.dumps({"type": "watch", "id": "w", "scene": "s1", "action": "bs-attack"}))
    for x in (100, 700):
        patch = {"type": "scene.patch", "scene": "s1", "upsert": {"tokens": [token("a", x, 100)]}}
        client.session.receive(json.dumps({"id": f"p{x}", **patch}))
        plain.send(patch)
        for actor, target in (("a", "b"), ("c", "a"), ("b", "c")):
            ask = {"type": "adjudicate", "scene": "s1", "actor": actor, "target": target, "action": "bs-attack"}
            assert client.send(ask) == plain.send(ask)
    assert client.engines.builds == 0
    dodge = {"type": "adjudicate", "scene": "s1", "actor": "a", "target": "b", "action": "dodge"}
    assert client.send(dodge) == plain.send(dodge)
    assert client.engines.builds == 1  # another action: the watch does not hold it


def test_whole_scene_builds_take_a_bounded_share_of_a_worlds_time() -> None:
    """Right after one engine is built, a question needing another is answered per-pair, with the same answer.

    Once the pause is over, the next is built.
    """
    now = [100.0]
    worlds = Worlds()
    session = Session(worlds, offline=True, monotonic=lambda: now[0])
    plain = Client(engines=False)
    for each in (session.receive, lambda text: plain.session.receive(text)):
        each(json.dumps({"type": "scene.sync", "id": "s", "scene": _open_field()}))
    engines = worlds.engines_of("offline")

    def ask(action: str) -> None:
        text = json.dumps(
            {
                "type": "adjudicate",
                "id": "q",
                "scene": "s1",
                "actor": "a",
                "target": "b",
                "action": action,
                "log": False,
            }
        )
        (answer,) = session.receive(text)
        (expected,) = plain.session.receive(text)
        assert (
            isinstance(answer, Send)
            and isinstance(expected, Send)
            and encode(answer.message) == encode(expected.message)
        )

    ask("bs-attack")
    assert engines.builds == 1 and engines.next_build > now[0]
    ask("dodge")
    assert engines.builds == 1
    now[0] = engines.next_build
    ask("discover")  # (dodge's answer is now remembered by the scene version: asked again, no engine is needed)
    assert engines.builds == 2


def test_a_note_naming_the_actor_names_each_actor() -> None:
    """Traveller's "Sensors needs a radar or a ladar; X carries neither" names each pair's own actor.

    The two tokens read alike (same traits, no names, one spot: the same line both ways), yet the engine does not share
    one's ruling with the other.
    """
    field = scene(ruleset="traveller", tokens=[token("t0", 0, 0), token("t1", 0, 0)])
    for item in field["tokens"]:
        item["name"] = ""
    client, plain = Client(engines=True), Client(engines=False)
    for each in (client, plain):
        each.send({"type": "scene.sync", "scene": field})
    for actor, target in (("t0", "t1"), ("t1", "t0")):
        ask = {"type": "adjudicate", "scene": "s1", "actor": actor, "target": target, "action": "sensors"}
        answer = client.send(ask)
        assert answer == plain.send(ask)
        assert any(f"{actor} carries neither" in note for note in answer["notes"])
    assert client.engines.builds == 1


def test_the_whole_scene_pass_of_a_lazy_engine_pauses_new_builds() -> None:
    """The question that rules a lazy engine's whole scene holds back new engines as a build would (``BUILD_SHARE``).

    An engine is built compiled but unruled (its first question rules one pair); the question that then rules the whole
    scene counts as a build of that pass.
    """
    now = [100.0]
    worlds = Worlds()
    session = Session(worlds, offline=True, monotonic=lambda: now[0])
    session.receive(json.dumps({"type": "scene.sync", "id": "s", "scene": _open_field()}))
    engines = worlds.engines_of("offline")
    base = {"type": "adjudicate", "scene": "s1", "action": "bs-attack", "log": False}
    session.receive(json.dumps({**base, "id": "q1", "actor": "a", "target": "b"}))
    (kept,) = engines._kept.values()
    assert engines.builds == 1 and engines.next_build > now[0] and kept.engine.pass_seconds == 0.0
    engines.next_build = float("-inf")  # (the build's pause over)
    session.receive(json.dumps({**base, "id": "q2", "actor": "c", "target": "a"}))
    assert kept.engine.pass_seconds > 0
    assert engines.next_build == now[0] + kept.engine.pass_seconds / engines.build_share
