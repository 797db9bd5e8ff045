"""The sans-I/O session: life cycle, scene state, errors that name the problem and lose nothing."""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime
from typing import Any

import pytest
from pydantic import ValidationError

from bridge import session as session_module
from bridge.core.sight import Point3
from bridge.core.world import SceneLimits
from bridge.errors import TooManyConnections
from bridge.protocol import encode
from bridge.session import MOVE_TOKENS, Close, Limits, Send, Session, StoreThenSend, Worlds, peek_id
from tests.scenes import OfflineClient, on_line_scene, rect_region, scene, token, wall

SECRET = "s3cret"


def authenticate(world: str, secret: str | None) -> bool:
    return secret == SECRET


def hello(world: str = "w1", secret: str | None = SECRET, **extra: Any) -> str:
    return json.dumps({"type": "hello", "protocol": 1, "world": world, "secret": secret, **extra})


def answers(effects: list[Any]) -> list[dict[str, Any]]:
    return [json.loads(encode(e.message)) for e in effects if isinstance(e, Send)]


def online(worlds: Worlds | None = None, world: str = "w1", **kw: Any) -> Session:
    session = Session(worlds or Worlds(), authenticate=authenticate, **kw)
    (welcome,) = answers(session.receive(hello(world)))
    assert welcome["type"] == "welcome"
    return session


def send(session: Session, message: dict[str, Any] | str) -> list[Any]:
    return session.receive(message if isinstance(message, str) else json.dumps(message))


def one(session: Session, message: dict[str, Any] | str) -> dict[str, Any]:
    (answer,) = answers(send(session, message))
    return answer


# --- Life cycle ----------------------------------------------------------------------------------


def test_welcome_lists_rulesets_and_editions() -> None:
    """hello → welcome with protocol 1 and every ruleset with its editions."""
    session = Session(Worlds(), authenticate=authenticate)
    (welcome,) = answers(session.receive(hello()))
    assert welcome["protocol"] == 1
    rulesets = {r["id"]: r["editions"] for r in welcome["rulesets"]}
    assert rulesets["infinity-n4"] == ["original", "1.2", "1.3", "2.1", "current"]
    assert session.state == "ready"


def test_first_message_must_be_hello() -> None:
    """Contract: 'Any other first message gets an error and a close.'"""
    session = Session(Worlds(), authenticate=authenticate)
    effects = send(session, {"type": "ping", "id": "p"})
    assert answers(effects)[0]["code"] == "invalid-message"
    assert isinstance(effects[-1], Close) and effects[-1].code == 4400
    assert session.state == "closed"
    assert session.receive(hello()) == []


def test_wrong_secret_is_unauthorized_and_closes_4401() -> None:
    """Contract: 'A wrong or missing secret: an error with code unauthorized, then close code 4401.'"""
    for secret in ("nope", None):
        session = Session(Worlds(), authenticate=authenticate)
        effects = session.receive(hello(secret=secret))
        assert answers(effects)[0]["code"] == "unauthorized"
        assert effects[-1] == Close(4401, "unauthorized")


def test_unsupported_protocol_closes() -> None:
    """A protocol other than 1 gets unsupported-protocol and a close."""
    session = Session(Worlds(), authenticate=authenticate)
    effects = session.receive(json.dumps({"type": "hello", "protocol": 2, "world": "w", "secret": SECRET}))
    assert answers(effects)[0]["code"] == "unsupported-protocol"
    assert isinstance(effects[-1], Close)


def test_second_hello_is_an_error_but_the_connection_stays() -> None:
    """A repeated hello is refused with invalid-message; the session stays ready."""
    session = online()
    assert one(session, hello())["code"] == "invalid-message"
    assert session.state == "ready"
    assert one(session, {"type": "ping", "id": "p"}) == {"type": "pong", "id": "p"}


def test_a_hello_refused_for_want_of_room_keeps_the_session_awaiting_hello() -> None:
    """A hello its world has no room for: rate-limited, no close, ping answered, hello again admitted."""
    room = [False]
    admitted: list[str] = []

    def admit(world: str) -> TooManyConnections | None:
        if not room[0]:
            return TooManyConnections("no room", limit="connections-per-world", value=3, max=2)
        admitted.append(world)
        return None

    session = Session(Worlds(), authenticate=authenticate, admit=admit)
    effects = session.receive(hello())
    assert answers(effects) == [
        {
            "type": "error",
            "code": "rate-limited",
            "message": "no room",
            "details": {"limit": "connections-per-world", "value": 3, "max": 2},
        }
    ]
    assert not any(isinstance(e, Close) for e in effects)
    assert (session.state, session.world, admitted) == ("awaiting-hello", None, [])
    assert one(session, {"type": "ping", "id": "p"}) == {"type": "pong", "id": "p"}
    assert one(session, hello())["code"] == "rate-limited"
    room[0] = True
    assert one(session, hello())["type"] == "welcome"
    assert (session.state, admitted) == ("ready", ["w1"])


def test_after_a_refused_hello_only_hello_and_ping_are_read() -> None:
    """A hello refused for want of room lets no other message in: a scene.sync still closes the connection 4400."""
    session = Session(Worlds(), authenticate=authenticate, admit=lambda world: "no room")
    assert one(session, hello())["code"] == "rate-limited"
    effects = send(session, {"type": "scene.sync", "id": "q1", "scene": on_line_scene()})
    assert answers(effects)[0]["code"] == "invalid-message"
    assert answers(effects)[0]["message"] == (
        "this connection's hello was refused: send 'hello' again or 'ping', not 'scene.sync'"
    )
    assert effects[-1] == Close(4400, "invalid-message")
    assert session.state == "closed"


# --- Scenes --------------------------------------------------------------------------------------


def test_sync_counts_what_it_holds() -> None:
    """scene.sync answers scene.synced with the counts of regions, tokens and walls."""
    session = online()
    answer = one(session, {"type": "scene.sync", "id": "q1", "scene": on_line_scene()})
    assert answer == {"type": "scene.synced", "id": "q1", "scene": "s1", "regions": 2, "tokens": 2, "walls": 0}


def test_patch_moves_a_token_and_changes_the_ruling() -> None:
    """scene.patch upserts replace whole objects: moving the target away from both zones."""
    client = OfflineClient()
    client.sync(on_line_scene())
    assert client.adjudicate("a", "t")["modifier"] == -6
    moved = {"type": "scene.patch", "id": "p", "scene": "s1", "upsert": {"tokens": [token("t", 1000, 1500)]}}
    assert client.one(moved) == {"type": "scene.patched", "id": "p", "scene": "s1"}
    assert client.adjudicate("a", "t")["modifier"] == 0


def test_moved_tokens_names_a_patch_that_only_moves_held_tokens() -> None:
    """moved_tokens gives the ids of a patch upserting only held tokens; anything else in the patch makes it None."""
    session = online()
    one(session, {"type": "scene.sync", "id": "q1", "scene": on_line_scene()})

    def patch(**fields: Any) -> dict[str, Any]:
        return {"type": "scene.patch", "id": "p", "scene": "s1", **fields}

    moved = {"tokens": [token("t", 1000, 1500), token("a", 0, 300)]}
    assert session.moved_tokens(patch(upsert=moved)) == ("t", "a")
    assert session.moved_tokens(patch(upsert=moved, remove={"tokens": [], "regions": []})) == ("t", "a")
    assert session.moved_tokens(patch(upsert={**moved, "walls": []})) == ("t", "a")
    not_moves = [
        patch(upsert={"tokens": [token("new", 5, 5)]}),  # a new token adds pairs
        patch(upsert={**moved, "regions": [rect_region("r-new", "low", 0, 0, 10, 10)]}),
        patch(upsert=moved, remove={"regions": ["r-low"]}),
        patch(upsert=moved, rules={"lines": "best"}),
        patch(upsert=moved, name="Another name"),
        {**patch(upsert=moved), "scene": "no-such-scene"},
        {**patch(upsert=moved), "type": "scene.sync"},
        patch(upsert={"tokens": [token("t", 0, 0)] * (MOVE_TOKENS + 1)}),
        patch(upsert={"tokens": []}),
        patch(upsert={"tokens": "t"}),
        patch(upsert={"tokens": [{"x": 1}]}),
        patch(upsert=["t"]),
        patch(upsert=moved, remove=["t"]),
        patch(),
        ["scene.patch"],
    ]
    for raw in not_moves:
        assert session.moved_tokens(raw) is None, raw
    assert Session(Worlds(), authenticate=authenticate).moved_tokens(patch(upsert=moved)) is None  # before hello


def test_patch_removes_and_reports_unknown_removals() -> None:
    """Removing a region drops its MOD; removing an id never held is reported in 'ignored', not an error."""
    client = OfflineClient()
    client.sync(on_line_scene())
    answer = client.one({"type": "scene.patch", "id": "p", "scene": "s1", "remove": {"regions": ["r-poor", "ghost"]}})
    assert answer["ignored"] == [
        {"region": "ghost", "cause": "not-held", "reason": "Not in this scene: there was nothing to remove."}
    ]
    assert client.adjudicate("a", "t")["modifier"] == -3


def test_patch_before_sync_is_unknown_scene() -> None:
    """A patch for a scene never synced gets unknown-scene."""
    session = online()
    answer = one(session, {"type": "scene.patch", "id": "p", "scene": "nowhere"})
    assert answer["code"] == "unknown-scene" and answer["id"] == "p"


def test_rejected_patch_leaves_the_scene_unchanged() -> None:
    """A patch that would make the scene invalid changes nothing (the token keeps its place)."""
    client = OfflineClient()
    client.sync(on_line_scene())
    bad_zone = rect_region("r-bad", "fog", 0, 0, 10, 10)
    answer = client.one(
        {
            "type": "scene.patch",
            "id": "p",
            "scene": "s1",
            "upsert": {"tokens": [token("t", 1000, 0)], "regions": [bad_zone]},
        }
    )
    assert answer["code"] == "invalid-message" and "fog" in answer["message"]
    assert client.adjudicate("a", "t")["modifier"] == -6


def test_unknown_ruleset_and_edition() -> None:
    """Contract: 'An unknown ruleset or edition gets unknown-ruleset.'"""
    client = OfflineClient()
    for rules in ({"ruleset": "warhammer"}, {"ruleset": "infinity-n4", "edition": "9.9"}):
        data = {**on_line_scene(), "rules": rules}
        answer = client.one({"type": "scene.sync", "id": "q", "scene": data})
        assert answer["code"] == "unknown-ruleset"


def test_zone_type_or_trait_no_ruleset_knows_is_invalid() -> None:
    """Contract: 'a zone type or trait that no ruleset knows gets invalid-message naming it'."""
    client = OfflineClient()
    zone = client.one({"type": "scene.sync", "id": "q", "scene": scene(regions=[rect_region("r", "fog", 0, 0, 5, 5)])})
    assert zone["code"] == "invalid-message" and "'fog'" in zone["message"]
    assert zone["details"]["field"] == "scene.regions[0].zone.type"
    trait = client.one({"type": "scene.sync", "id": "q", "scene": scene(tokens=[token("a", 0, 0, "x-ray")])})
    assert trait["code"] == "invalid-message" and "'x-ray'" in trait["message"]


def test_invalid_field_is_named_with_its_path() -> None:
    """A wrong type deep in a scene is reported by its path, e.g. scene.regions[0].shapes[0].radius."""
    session = online()
    data = scene(regions=[{"id": "r", "shapes": [{"type": "circle", "x": 0, "y": 0, "radius": "big"}]}])
    answer = one(session, {"type": "scene.sync", "id": "q", "scene": data})
    assert answer["code"] == "invalid-message"
    assert answer["message"].startswith("scene.regions[0].shapes[0].radius:")


@pytest.mark.parametrize(
    ("frame", "needle"),
    [
        ("{not json", "not valid JSON"),
        ("[1, 2]", "JSON object"),
        ('{"id": "x"}', "type"),
        ('{"type": "teleport", "id": "x"}', "type"),
        ('{"type": "adjudicate", "id": "x", "scene": 5}', "scene"),
        (
            '{"type": "scene.sync", "id": "x", "scene": {"id": "s", "rules": {"ruleset": "infinity-n4"}, '
            '"tokens": [{"id": "t", "x": NaN, "y": 0}]}}',
            "scene.tokens[0].x",
        ),
    ],
)
def test_bad_input_gets_a_named_error_and_loses_nothing(frame: str, needle: str) -> None:
    """Malformed JSON, wrong types, unknown types, NaN: a clear error; the held scene survives."""
    session = online()
    one(session, {"type": "scene.sync", "id": "q", "scene": on_line_scene()})
    answer = one(session, frame)
    assert answer["type"] == "error" and answer["code"] == "invalid-message"
    assert needle in answer["message"]
    ruling = one(
        session,
        {
            "type": "adjudicate",
            "id": "a",
            "scene": "s1",
            "actor": "a",
            "target": "t",
            "action": "bs-attack",
            "log": False,
        },
    )
    assert ruling["modifier"] == -6


def test_too_large_frame_is_refused_and_the_connection_stays() -> None:
    """A frame over the limit gets too-large; the session stays ready."""
    session = online(limits=Limits(max_frame_bytes=1000))
    answer = one(session, json.dumps({"type": "ping", "id": "p", "pad": "x" * 2000}))
    assert answer["code"] == "too-large"
    assert session.state == "ready"


def test_unknown_tokens_and_action() -> None:
    """unknown-token names actor or target; an unknown action is invalid-message naming it."""
    client = OfflineClient()
    client.sync(on_line_scene())
    assert client.adjudicate("nobody", "t")["code"] == "unknown-token"
    missing = client.adjudicate("a", "nobody")
    assert missing["code"] == "unknown-token" and missing["details"]["field"] == "target"
    action = client.adjudicate("a", "t", "fireball")
    assert action["code"] == "invalid-message" and "'fireball'" in action["message"]
    assert client.adjudicate("a", None, "bs-attack")["code"] == "invalid-message"


def test_worlds_are_isolated() -> None:
    """One world's scenes are never visible to another."""
    worlds = Worlds()
    ashes, embers = online(worlds, "w-ashes"), online(worlds, "w-embers")
    one(ashes, {"type": "scene.sync", "id": "q", "scene": on_line_scene()})
    answer = one(
        embers, {"type": "adjudicate", "id": "a", "scene": "s1", "actor": "a", "target": "t", "action": "bs-attack"}
    )
    assert answer["code"] == "unknown-scene"
    second = online(worlds, "w-ashes")  # another client of the same world shares its scenes
    ok = one(
        second,
        {
            "type": "adjudicate",
            "id": "a",
            "scene": "s1",
            "actor": "a",
            "target": "t",
            "action": "bs-attack",
            "log": False,
        },
    )
    assert ok["modifier"] == -6


# --- Logging effects -----------------------------------------------------------------------------


def test_logged_ruling_asks_the_store_first() -> None:
    """log: true yields a StoreThenSend carrying a complete record; the answer waits for the store."""
    at = datetime(2026, 11, 30, 20, 0, tzinfo=UTC)
    session = online(clock=lambda: at)
    one(session, {"type": "scene.sync", "id": "q", "scene": on_line_scene()})
    (effect,) = send(
        session,
        {
            "type": "adjudicate",
            "id": "a1",
            "scene": "s1",
            "actor": "a",
            "target": "t",
            "action": "bs-attack",
            "user": {"id": "u1", "name": "Ana"},
        },
    )
    assert isinstance(effect, StoreThenSend) and effect.operation == "append"
    record = effect.record
    assert record is not None and effect.answer is not None
    assert (record.world, record.scene, record.time) == ("w1", "s1", at.isoformat())
    assert (record.actor.id, record.actor.name, record.target and record.target.id) == ("a", "A", "t")
    assert record.user is not None and record.user.name == "Ana"
    assert record.modifier == -6 and record.allowed is True
    assert record.line is not None and record.line["start"] == {"x": 50.0, "y": 450.0, "z": 0.0}
    assert record.snapshot is not None and [r["id"] for r in record.snapshot.regions] == ["r-low", "r-poor"]
    assert effect.answer.modifier == -6


# --- Limits --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "objects"),
    [
        ("regions", [rect_region(f"r{i}", "low", i * 300, 0, 100, 100) for i in range(2)]),
        ("walls", [wall(f"w{i}", i * 10, 500, i * 10 + 5, 600) for i in range(2)]),
        ("lights", [{"id": f"l{i}", "x": i * 100, "y": 0, "radius": 5} for i in range(2)]),
    ],
)
def test_each_scene_object_limit_is_answered_naming_it(kind: str, objects: list[dict[str, Any]]) -> None:
    """Regions, walls or lights over a limit of one are too-large naming scene.<kind>; the connection answers on.

    Two of each, over a limit of one: the answer names the limit, the count and the maximum, with the request id.
    """
    session = online(Worlds(scene_limits=SceneLimits(**{kind: 1})))
    answer = one(session, {"type": "scene.sync", "id": "q", "scene": scene(**{kind: objects})})
    _limit(answer, "too-large", kind, 2, 1, "q")
    assert answer["details"]["field"] == f"scene.{kind}"
    assert one(session, {"type": "ping", "id": "p"}) == {"type": "pong", "id": "p"}


def test_rate_limit_drops_the_excess_and_recovers() -> None:
    """Past the burst a message gets rate-limited; after a second's refill the connection answers again."""
    now = [100.0]
    session = Session(
        Worlds(), authenticate=authenticate, limits=Limits(messages_per_second=2, burst=3), monotonic=lambda: now[0]
    )
    session.receive(hello())
    codes = [answers(send(session, {"type": "ping", "id": str(i)}))[0].get("code") for i in range(3)]
    assert codes == [None, None, "rate-limited"]
    now[0] += 1.0
    assert one(session, {"type": "ping", "id": "later"}) == {"type": "pong", "id": "later"}
    assert session.state == "ready"


def test_scene_over_the_size_limits_is_too_large() -> None:
    """Too many tokens, or too many polygon vertices, are refused with too-large naming the field."""
    worlds = Worlds(scene_limits=SceneLimits(tokens=2, vertices=10))
    session = online(worlds)
    many = scene(tokens=[token(f"t{i}", i * 100, 0) for i in range(3)])
    answer = one(session, {"type": "scene.sync", "id": "q", "scene": many})
    assert answer["code"] == "too-large" and answer["details"]["field"] == "scene.tokens"
    ring = [coord for i in range(12) for coord in (i, i * i)]
    big = scene(regions=[{"id": "r", "polygons": [{"points": ring}], "zone": {"type": "low"}}])
    assert one(session, {"type": "scene.sync", "id": "q", "scene": big})["code"] == "too-large"
    grown = {"type": "scene.patch", "id": "p", "scene": "s1", "upsert": {"tokens": [token("t9", 0, 900)]}}
    one(session, {"type": "scene.sync", "id": "q", "scene": scene(tokens=[token("t0", 0, 0), token("t1", 0, 100)])})
    assert one(session, grown)["code"] == "too-large"


def test_repeated_questions_share_a_ruling_but_different_options_do_not() -> None:
    """A preview and its roll get the same ruling; a different option (GURPS aware) is asked anew."""
    client = OfflineClient()
    data = scene(tokens=[token("a", 0, 0), token("d", 300, 0, "blind")], ruleset="gurps-4e")
    client.sync(data)
    first = client.adjudicate("d", "a", "dodge")
    again = client.adjudicate("d", "a", "dodge")
    unaware = client.adjudicate("d", "a", "dodge", aware=False)
    assert {k: v for k, v in first.items() if k != "id"} == {k: v for k, v in again.items() if k != "id"}
    assert first["allowed"] is True and unaware["allowed"] is False


def test_an_option_the_scenes_ruleset_does_not_read_is_a_note_in_the_adjudication_never_an_error() -> None:
    """Options another ruleset reads, or none does, come back as notes in the scene's locale; the ruling stands.

    Contract: 'Inputs only one ruleset reads go in `options`: Traveller `size` and `other`' — so any scene may get
    them: a Traveller typo, and Traveller's `size` in a Spanish Infinity scene, are named, never silently dropped.
    """
    session = online()
    tokens = [token("a", 0, 0), token("t", 1000, 0)]
    one(session, {"type": "scene.sync", "id": "q1", "scene": scene(tokens=tokens, ruleset="traveller")})
    ask = {"type": "adjudicate", "id": "a1", "scene": "s1", "actor": "a", "target": "t", "action": "observation"}
    ask["log"] = False
    plain = one(session, ask)
    typo = one(session, {**ask, "id": "a2", "options": {"szie": 2}})
    assert plain["type"] == typo["type"] == "adjudication"
    assert typo["notes"] == ["Option “szie” is not an input of Traveller: ignored.", *plain["notes"]]
    assert {k: v for k, v in typo.items() if k not in ("id", "notes")} == {
        k: v for k, v in plain.items() if k not in ("id", "notes")
    }
    one(session, {"type": "scene.sync", "id": "q2", "scene": scene(tokens=tokens, scene_id="s2", locale="es")})
    shot = {**ask, "id": "a3", "scene": "s2", "action": "bs-attack"}
    sized = one(session, {**shot, "options": {"size": 2}})
    assert sized["type"] == "adjudication" and sized["allowed"] is True
    assert sized["notes"][0] == "La opción «size» es un dato de otro reglamento (Traveller): Infinity N4 la ignora."
    assert not any("opción" in note for note in one(session, {**shot, "id": "a4"})["notes"])


# --- Limits on what one message costs (issue 11) -------------------------------------------------


def _limit(answer: dict[str, Any], code: str, limit: str, value: float, most: float, request: str | None) -> None:
    assert answer["type"] == "error" and answer["code"] == code
    assert answer.get("id") == request
    assert {k: answer["details"][k] for k in ("limit", "value", "max")} == {"limit": limit, "value": value, "max": most}


def test_frame_over_the_limit_names_the_limit_and_echoes_the_id_read_from_its_head() -> None:
    """A frame too large to parse is refused with too-large naming frame-bytes; the connection stays.

    The answer gives its size and the maximum, and the id read from its first bytes.
    """
    session = online(limits=Limits(max_frame_bytes=200))
    frame = json.dumps({"type": "scene.sync", "id": "big-1", "scene": scene(tokens=[token("a", 0, 0)])})
    _limit(one(session, frame), "too-large", "frame-bytes", len(frame), 200, "big-1")
    assert one(session, {"type": "ping", "id": "p"}) == {"type": "pong", "id": "p"}


def test_rate_limited_answer_names_the_limit_and_echoes_the_id() -> None:
    """A dropped message's answer carries its id, the messages received this second and the rate allowed."""
    now = [0.0]
    session = Session(
        Worlds(), authenticate=authenticate, limits=Limits(messages_per_second=2, burst=2), monotonic=lambda: now[0]
    )
    assert answers(session.receive(hello()))[0]["type"] == "welcome"
    assert one(session, {"type": "ping", "id": "p1"})["type"] == "pong"
    _limit(one(session, {"type": "ping", "id": "p2"}), "rate-limited", "messages-per-second", 3, 2, "p2")


@pytest.mark.parametrize(
    ("frame", "expected"),
    [
        ('{"type": "ping", "id": "a1"}', "a1"),
        ('{"type": "scene.sync", "scene": {"id": "s-not-this", "regions": []}, "id": "q7"}', "q7"),
        ('{"scene": {"id": "nested"}, "type": "x"}', None),
        ('{"type": "ping", "id": 12}', None),
        ('{"type": "ping", "note": "\\"id\\": \\"fake\\"", "id": "real"}', "real"),
        ('[{"id": "in-a-list"}]', None),
        ("not json at all", None),
        ('{"type": "ping", "pad": "' + "x" * 5000 + '", "id": "late"}', None),
    ],
)
def test_peek_id_reads_only_a_top_level_string_id_from_the_head(frame: str, expected: str | None) -> None:
    """The id of an unparsed frame is its top-level "id" string within the first 4 KiB, never a nested one."""
    assert peek_id(frame) == expected and peek_id(frame.encode()) == expected


def test_a_self_crossing_polygon_is_refused_naming_the_region_and_answers_at_once() -> None:
    """A self-crossing zigzag is refused at once naming its field and region; the scene held before is intact.

    A 500-vertex zigzag (every edge crosses others) is refused with invalid-message, without trying to repair it.
    """
    session = online()
    held = scene(tokens=[token("a", 0, 0), token("b", 300, 0)])
    assert one(session, {"type": "scene.sync", "id": "q0", "scene": held})["type"] == "scene.synced"
    zigzag = [c for i in range(500) for c in ((0 if i % 2 else 1000), (i * 37) % 1000)]
    bad = scene(regions=[{"id": "r-zz", "name": "Zigzag", "shapes": [{"type": "polygon", "points": zigzag}]}])
    answer = one(session, {"type": "scene.sync", "id": "q1", "scene": bad})
    assert answer["code"] == "invalid-message" and answer["id"] == "q1"
    assert answer["details"]["field"] == "scene.regions[0].shapes[0]" and "'Zigzag'" in answer["message"]
    assert "cross" in answer["message"]
    patch = {"type": "scene.patch", "id": "q2", "scene": "s1", "upsert": {"regions": bad["regions"]}}
    assert one(session, patch)["details"]["field"] == "scene.regions[0].shapes[0]"
    ask = {"type": "adjudicate", "id": "q3", "scene": "s1", "actor": "a", "target": "b", "action": "bs-attack"}
    assert one(session, {**ask, "log": False})["type"] == "adjudication"


def test_curves_count_against_the_vertex_limit_by_the_vertices_they_are_drawn_with() -> None:
    """Three circles of radius 1e8 are 3 × 4096 vertices: over a limit of 10,000, too-large naming vertices."""
    session = online(Worlds(scene_limits=SceneLimits(vertices=10_000)))
    circles = [{"type": "circle", "x": 0, "y": 0, "radius": 1e8} for _ in range(3)]
    big = scene(regions=[{"id": "r", "shapes": circles, "zone": {"type": "low"}}])
    _limit(
        one(session, {"type": "scene.sync", "id": "q", "scene": big}), "too-large", "vertices", 3 * 4096, 10_000, "q"
    )
    two = scene(regions=[{"id": "r", "shapes": circles[:2], "zone": {"type": "low"}}])
    assert one(session, {"type": "scene.sync", "id": "q2", "scene": two})["type"] == "scene.synced"


def _best_scene(zones: int, walls: int, tokens: int = 2) -> dict[str, Any]:
    return scene(
        regions=[rect_region(f"r{i}", "low", 500 + i, 0, 5, 100) for i in range(zones)],
        tokens=[token(f"t{i}", i * 200, 0) for i in range(tokens)],
        walls=[{"id": f"w{i}", "c": [400 + i, -100, 400 + i, -50], "sight": 20} for i in range(walls)],
        lines="best",
    )


def test_best_lines_are_limited_by_sampled_lines_times_zones_and_walls() -> None:
    """rules.lines 'best' is limited by the sampled lines times the zones and walls they are tested against.

    One ruling tests 81 lines against 3 zones + 7 walls = 810 line tests; a limit of 800 refuses it (too-large,
    best-line-tests) and a centre-line ruling of the same scene is answered.
    """
    session = online(limits=Limits(best_line_tests=800))
    one(session, {"type": "scene.sync", "id": "q", "scene": _best_scene(3, 7)})
    ask = {"type": "adjudicate", "id": "a1", "scene": "s1", "actor": "t0", "target": "t1", "action": "bs-attack"}
    _limit(one(session, ask), "too-large", "best-line-tests", 810, 800, "a1")
    one(session, {"type": "scene.sync", "id": "q", "scene": {**_best_scene(3, 7), "rules": scene()["rules"]}})
    assert one(session, {**ask, "log": False})["type"] == "adjudication"


def test_a_watch_is_limited_by_the_pairs_it_covers() -> None:
    """A watch is limited by the pairs it covers; a patch that grows it past the limit ends it with the reason.

    Four tokens make 12 ordered pairs: over a limit of 10 the watch is refused; watching one token's pairs (3 + 3 = 6)
    is not.
    """
    session = online(limits=Limits(watch_pairs=10))
    one(
        session,
        {"type": "scene.sync", "id": "q", "scene": scene(tokens=[token(f"t{i}", i * 200, 0) for i in range(4)])},
    )
    watch = {"type": "watch", "id": "w1", "scene": "s1", "action": "bs-attack"}
    _limit(one(session, watch), "too-large", "watch-pairs", 12, 10, "w1")
    (watching, _) = answers(send(session, {**watch, "tokens": ["t0"]}))
    assert watching["type"] == "watching"
    more = [token(f"t{i}", i * 200, 500) for i in range(4, 6)]  # 6 tokens: 5 + 5 = 10 pairs, still within
    assert [
        a["type"]
        for a in answers(send(session, {"type": "scene.patch", "id": "p1", "scene": "s1", "upsert": {"tokens": more}}))
    ] == [
        "scene.patched",
        "annotations",
    ]
    grown = {"type": "scene.patch", "id": "p2", "scene": "s1", "upsert": {"tokens": [token("t9", 0, 900)]}}
    patched, ended = answers(send(session, grown))
    assert patched["type"] == "scene.patched" and ended["type"] == "unwatched" and ended["watch"] == "w1"
    assert "watch-pairs" not in ended["reason"] and "12 (actor, target) pairs" in ended["reason"]


def test_a_watch_is_limited_by_the_segment_tests_it_costs() -> None:
    """A watch costs its pairs × (the scene's vertices + walls) segment tests; over the limit it is refused or ended.

    Three 1×1 tokens (4 vertices each), a rectangle zone (4) and a wall make 6 pairs × 17 = 102 tests, over a limit of
    100, refused naming watch-tests; one token's pairs (4 × 17 = 68) fit; a patch adding a wall (4 × 18 = 72) still
    fits, one adding a token (6 pairs × 22 = 132) ends it with the reason.
    """
    session = online(limits=Limits(watch_tests=100))
    tokens = [token(f"t{i}", i * 200, 0) for i in range(3)]
    walled = scene(
        tokens=tokens, regions=[rect_region("z", "poor", 0, 300, 100, 100)], walls=[wall("w", 0, 500, 9, 500)]
    )
    one(session, {"type": "scene.sync", "id": "q", "scene": walled})
    watch = {"type": "watch", "id": "w1", "scene": "s1", "action": "bs-attack"}
    _limit(one(session, watch), "too-large", "watch-tests", 102, 100, "w1")
    (watching, _) = answers(send(session, {**watch, "tokens": ["t0"]}))
    assert watching["type"] == "watching"
    one_wall = {"type": "scene.patch", "id": "p1", "scene": "s1", "upsert": {"walls": [wall("w2", 0, 600, 9, 600)]}}
    assert answers(send(session, one_wall))[0]["type"] == "scene.patched"
    more = {"type": "scene.patch", "id": "p2", "scene": "s1", "upsert": {"tokens": [token("t9", 0, 900)]}}
    patched, ended = answers(send(session, more))
    assert patched["type"] == "scene.patched" and ended["type"] == "unwatched" and ended["watch"] == "w1"
    assert "segment tests, over the limit of 100" in ended["reason"]


def test_a_watch_on_a_best_scene_counts_its_line_tests() -> None:
    """In a 'best' scene a watch costs pairs × 81 × (zones + walls): 2 pairs × 81 × 5 = 810 > 800."""
    session = online(limits=Limits(best_line_tests=800))
    one(session, {"type": "scene.sync", "id": "q", "scene": _best_scene(2, 3)})
    answer = one(session, {"type": "watch", "id": "w", "scene": "s1", "action": "bs-attack"})
    _limit(answer, "too-large", "best-line-tests", 810, 800, "w")


def test_watches_per_connection_are_limited() -> None:
    """Past its limit of open watches a connection's next watch is refused; unwatching one makes room."""
    session = online(limits=Limits(watches=2))
    one(session, {"type": "scene.sync", "id": "q", "scene": scene(tokens=[token("a", 0, 0), token("b", 300, 0)])})
    for watch_id in ("w1", "w2"):
        assert answers(send(session, {"type": "watch", "id": watch_id, "scene": "s1", "action": "bs-attack"}))[0][
            "type"
        ] == ("watching")
    third = {"type": "watch", "id": "w3", "scene": "s1", "action": "bs-attack"}
    _limit(one(session, third), "too-large", "watches-per-connection", 3, 2, "w3")
    assert one(session, {"type": "unwatch", "id": "u", "watch": "w1"})["type"] == "unwatched"
    assert answers(send(session, third))[0]["type"] == "watching"


def test_scenes_per_world_forget_the_least_recently_used_unwatched_one() -> None:
    """With room for 2 scenes, a third forgets the one used least recently, unless both held ones are watched.

    When both held ones are watched, a new one is refused (too-large, scenes-per-world) and nothing is forgotten.
    """
    session = online(Worlds(scene_limits=SceneLimits(scenes=2)))
    tokens = [token("a", 0, 0), token("b", 300, 0)]
    for scene_id in ("s1", "s2"):
        one(session, {"type": "scene.sync", "id": "q", "scene": scene(tokens=tokens, scene_id=scene_id)})
    ask = {"type": "adjudicate", "scene": "s1", "actor": "a", "target": "b", "action": "bs-attack", "log": False}
    assert one(session, {**ask, "id": "a1"})["type"] == "adjudication"  # s1 is now the most recently used
    one(session, {"type": "scene.sync", "id": "q3", "scene": scene(tokens=tokens, scene_id="s3")})
    assert one(session, {**ask, "id": "a2", "scene": "s2"})["code"] == "unknown-scene"
    assert one(session, {**ask, "id": "a3"})["type"] == "adjudication"
    for scene_id in ("s1", "s3"):
        send(session, {"type": "watch", "id": f"w-{scene_id}", "scene": scene_id, "action": "bs-attack"})
    refused = one(session, {"type": "scene.sync", "id": "q4", "scene": scene(tokens=tokens, scene_id="s4")})
    _limit(refused, "too-large", "scenes-per-world", 3, 2, "q4")
    assert one(session, {**ask, "id": "a4"})["type"] == "adjudication"


def test_a_large_frames_parsed_json_is_freed_in_slices(monkeypatch: pytest.MonkeyPatch) -> None:
    """A large frame's parsed JSON is handed to free_in_slices; a small frame's is not.

    For a frame of 256 KiB or more: the frame itself first, then each wall, not left to one cascade of deallocations.
    """
    handed: list[list[Any]] = []
    real = session_module.free_in_slices

    def spy(found: list[Any]) -> None:
        handed.append(list(found))
        real(found)

    monkeypatch.setattr(session_module, "free_in_slices", spy)
    session = online()
    walls = [wall(f"w{i}", i, 0, i, 10) for i in range(6000)]
    frame = json.dumps({"type": "scene.sync", "id": "q", "scene": scene(walls=walls)})
    assert len(frame) >= session_module.SLICED_PARSE_BYTES
    assert one(session, frame)["type"] == "scene.synced"
    parsed = [found for found in handed if found and isinstance(found[0], dict) and found[0].get("id") == "q"]
    assert len(parsed) == 1
    assert sum(isinstance(part, dict) and str(part.get("id", "")).startswith("w") for part in parsed[0]) == 6000
    handed.clear()
    small = {"type": "scene.sync", "id": "small", "scene": scene(walls=walls[:10])}
    assert one(session, small)["type"] == "scene.synced"
    assert not [found for found in handed if found and isinstance(found[0], dict) and found[0].get("id") == "small"]


@pytest.mark.parametrize(
    "fields",
    [
        {},
        {"target": None, "reaction": True, "aware": False, "log": False, "options": {"x": 1}},
        {"user": {"id": "u1", "name": "Ana"}},
        {"actor": ""},
        {"actor": 7},
        {"reaction": "yes"},
        {"reaction": 1},
        {"id": "x" * 129},
        {"surplus": 1},
        {"options": []},
    ],
)
def test_an_adjudicate_is_validated_as_the_union_validates_it(fields: dict[str, Any]) -> None:
    """The `adjudicate` fast path gives the union's model (fields set included) or the union's error answer."""
    from bridge.protocol import CLIENT_MESSAGE

    raw = {"type": "adjudicate", "id": "q", "scene": "s1", "actor": "a", "target": "t", "action": "bs-attack"}
    raw.update(fields)
    session = Session(Worlds(), offline=True)
    try:
        expected = CLIENT_MESSAGE.validate_python(raw)
    except ValidationError as exc:
        (answer,) = [e.message for e in send(session, raw) if isinstance(e, Send)]
        assert encode(answer) == encode(
            session_module.error_message(session_module._invalid(exc), session_module._request_id(raw))
        )
        return
    got = session._validate(raw)
    assert got == expected and type(got) is type(expected)
    assert got.model_fields_set == expected.model_fields_set


def test_a_pushs_line_pieces_after_a_move_equal_those_made_afresh_and_earlier_ones_stay() -> None:
    """The start/end pieces of a push's lines, made again only for moved centres, equal every centre's own."""
    rng = random.Random(7)
    points = [Point3(float(i), 2.0 * i, 0.0) for i in range(12)]
    handed: list[tuple[list[bytes], list[bytes], list[bytes], list[bytes]]] = []
    for step in range(300):
        points = list(points)
        change = rng.choice(["none", "one", "two", "many", "length"])
        if change == "length":
            points = points[:-1] if len(points) > 2 and rng.random() < 0.5 else [*points, Point3(step, 0.5, 1.0)]
        elif change != "none":
            for k in rng.sample(range(len(points)), {"one": 1, "two": 2, "many": len(points) // 2 + 1}[change]):
                points[k] = Point3(rng.uniform(-9, 9), rng.uniform(-9, 9), rng.choice([0.0, 1.5]))
        starts, ends = session_module._line_fragments(points)
        expected = [session_module._point_json(p) for p in points]
        assert starts == [pieces[0] for pieces in expected] and ends == [pieces[1] for pieces in expected]
        handed.append((starts, list(starts), ends, list(ends)))
    assert all(starts == kept and ends == kept_ends for starts, kept, ends, kept_ends in handed)


@pytest.mark.parametrize("kind", ["frame-bytes", "depth", "option-values"])
def test_a_refused_frame_is_freed_at_once_not_left_to_the_cyclic_collector(kind: str) -> None:
    """A refused frame (over the frame limit, too deep, too many option values) is freed with its answer, no gc run.

    Its error's traceback kept the frames holding the text in a reference cycle: with the bridge's collector
    freezing large frames unscanned, every refused 16 MiB frame stayed (RSS +11-16 MiB a frame).
    """
    import gc
    import tracemalloc

    session = online(limits=Limits(max_frame_bytes=1 << 20))
    session.receive(json.dumps({"type": "scene.sync", "id": "q", "scene": on_line_scene()}))
    frames = {
        "frame-bytes": b'{"type": "ping", "id": "p", "pad": "' + b"x" * (3 << 20) + b'"}',
        "depth": b'{"type": "ping", "id": "p", "pad": "'
        + b"x" * (600 << 10)
        + b'", "d": '
        + b"[" * 40
        + b"]" * 40
        + b"}",
        "option-values": json.dumps(
            {
                "type": "adjudicate",
                "id": "a",
                "scene": "s1",
                "actor": "a",
                "target": "t",
                "action": "bs-attack",
                "log": False,
                "options": {f"k{i}": "x" * 200 for i in range(3_000)},
            }
        ).encode(),
    }
    enabled = gc.isenabled()
    gc.disable()
    tracemalloc.start()
    try:
        for _ in range(3):
            (answer,) = answers(session.receive(bytes(bytearray(frames[kind]))))  # a copy made while traced
            assert answer["details"]["limit"] == kind
        held, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
        if enabled:
            gc.enable()
    assert held < 256 * 1024, f"{held:,} bytes still held after three refused frames"
