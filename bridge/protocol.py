"""Every wire message of protocol 1, as pydantic models discriminated on ``type``.

The contract (``shared/contract/protocol-v1.md``) is the source; this module is its executable form.
Client messages validate through :data:`CLIENT_MESSAGE`, bridge messages dump through
:func:`dump_message`. The JSON Schema of both unions is exported to ``schema/protocol-v1.schema.json``
(``python -m bridge.schema``) and a test fails when that file drifts from these models.

Extensions to the contract (new types and optional fields) are marked ``Extension`` and documented in
``docs/protocol.md``.
"""

from __future__ import annotations

import logging
from typing import Annotated, Any, Literal

import orjson
from pydantic import BaseModel, ConfigDict, Field, SkipValidation, TypeAdapter
from pydantic.config import JsonDict

from .core.scene import Grid, Identifier, Light, Region, Rules, Scene, Token, Wall

__all__ = [
    "CLIENT_MESSAGE",
    "PROTOCOL",
    "Adjudicate",
    "Adjudication",
    "Annotations",
    "BridgeMessage",
    "ClientMessage",
    "EncounterRangeRequest",
    "EncounterRangeResult",
    "ErrorMessage",
    "Hello",
    "IgnoredEntry",
    "IgnoredRef",
    "Ping",
    "Pong",
    "Prebuilt",
    "RulingOverridden",
    "RulingOverride",
    "ScenePatch",
    "ScenePatched",
    "SceneSync",
    "SceneSynced",
    "SessionEnd",
    "SessionEnded",
    "SessionStart",
    "SessionStarted",
    "Unwatch",
    "Unwatched",
    "Watch",
    "Watching",
    "Welcome",
    "dump_message",
    "encode",
    "encode_frames",
    "prune_wire",
]

PROTOCOL = 1
_log = logging.getLogger(__name__)

RequestId = Annotated[str, Field(min_length=1, max_length=128)]


class Message(BaseModel):
    """Base of every wire message: unknown fields are an error that names them; numbers are finite."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False, frozen=True)


# --- Client → bridge ------------------------------------------------------------------------------


class ClientInfo(Message):
    name: str = ""
    version: str = ""
    foundry: str = ""
    system: str = ""


class UserInfo(Message):
    id: str = ""
    name: str = ""
    gm: bool = False


class Hello(Message):
    """Must be the first message; ``secret`` is the world's (or the bridge's) secret.

    Extension: ``world_name``, the world's title as people know it (Foundry's ``game.world.title``), which
    the log pages show instead of the id; absent or empty = unknown.
    """

    type: Literal["hello"] = "hello"
    protocol: int
    world: Identifier
    world_name: Annotated[str, Field(max_length=200)] = ""
    secret: str | None = None
    client: ClientInfo = ClientInfo()
    user: UserInfo = UserInfo()


class SceneSync(Message):
    """The whole scene; replaces whatever the bridge held under that scene id."""

    type: Literal["scene.sync"] = "scene.sync"
    id: RequestId
    scene: Scene


# A patch's absent parts come from factories, not ``= []`` / ``= PatchRemove()``: pydantic deep-copies a
# mutable default (``copy.deepcopy``, in Python) for every message that leaves it out — a one-token move
# leaves out six of them. The schema still says ``"default"`` as before.
def _no_items() -> Any:
    """An absent list of a patch: a new empty list, from a factory."""
    return Field(default_factory=list, json_schema_extra={"default": []})


class PatchUpsert(Message):
    tokens: list[Token] = _no_items()
    regions: list[Region] = _no_items()
    walls: list[Wall] = _no_items()
    lights: list[Light] = _no_items()


class PatchRemove(Message):
    tokens: list[Identifier] = _no_items()
    regions: list[Identifier] = _no_items()
    walls: list[Identifier] = _no_items()
    lights: list[Identifier] = _no_items()


class ScenePatch(Message):
    """Changes since the last sync; upserts replace whole objects, removals name ids.

    Extension: ``name``, ``grid``, ``rules`` and ``environment`` replace the scene's own when given.
    """

    type: Literal["scene.patch"] = "scene.patch"
    id: RequestId
    scene: Identifier
    upsert: PatchUpsert = Field(default_factory=PatchUpsert, json_schema_extra={"default": PatchUpsert().model_dump()})
    remove: PatchRemove = Field(default_factory=PatchRemove, json_schema_extra={"default": PatchRemove().model_dump()})
    name: str | None = None
    grid: Grid | None = None
    rules: Rules | None = None
    environment: dict[str, Any] | None = None


class Adjudicate(Message):
    """One action from one token at another (no ``target`` for Combat Jump).

    Extension: ``user`` (who asked, for the log; the module relays players through the GM's client)
    and ``options`` (ruleset-specific inputs, documented per ruleset).
    """

    type: Literal["adjudicate"] = "adjudicate"
    id: RequestId
    scene: Identifier
    actor: Identifier
    target: Identifier | None = None
    action: Identifier
    reaction: bool = False
    aware: bool = True
    log: bool = True
    user: UserInfo | None = None
    # A factory, not ``= {}``: pydantic deep-copies a mutable default for every message (a third of an
    # ``adjudicate``'s validation); the schema still says ``"default": {}``.
    options: dict[str, Any] = Field(default_factory=dict, json_schema_extra={"default": {}})


class Ping(Message):
    type: Literal["ping"] = "ping"
    id: RequestId | None = None


class SessionStart(Message):
    """Extension: open a named game session for this world (closing the open one)."""

    type: Literal["session.start"] = "session.start"
    id: RequestId
    name: Annotated[str, Field(max_length=200)] = ""


class SessionEnd(Message):
    """Extension: close this world's open game session."""

    type: Literal["session.end"] = "session.end"
    id: RequestId


class RulingOverride(Message):
    """Extension: a GM overrides a logged ruling; kept as its own record beside the original."""

    type: Literal["ruling.override"] = "ruling.override"
    id: RequestId
    record: Identifier
    modifier: int | None
    allowed: bool = True
    reason: Annotated[str, Field(min_length=1, max_length=2000)]


class EncounterRangeRequest(Message):
    """Extension: Traveller's encounter range after night and weather; no scene needed.

    Source: "Traveller tactical visibility rules (2011-03-17) — Encounter Ranges".
    """

    type: Literal["traveller.encounter-range"] = "traveller.encounter-range"
    id: RequestId
    base: Annotated[float, Field(ge=0, le=1e9)]
    light: Literal["day", 1, 2, 3] = "day"
    weather: Literal["good", "poor", "very-poor"] = "good"
    woods: bool = False
    locale: Literal["en", "es"] = "en"


class Watch(Message):
    """Extension: subscribe to a scene's rulings for one action.

    All pairs of tokens, or (``tokens``) the pairs in which one of these tokens takes part. The bridge
    answers ``watching``, pushes one ``annotations`` with every pair (``full: true``), then pushes
    ``annotations`` with only the pairs whose ruling changed, whenever the scene changes. ``detail:
    "brief"`` (for overlays) leaves out the candidates (``modifiers``), notes and citations.
    """

    type: Literal["watch"] = "watch"
    id: RequestId
    scene: Identifier
    action: Identifier
    reaction: bool = False
    tokens: list[Identifier] | None = None
    detail: Literal["full", "brief"] = "full"


class Unwatch(Message):
    """Extension: end a subscription made with ``watch``."""

    type: Literal["unwatch"] = "unwatch"
    id: RequestId
    watch: Identifier


ClientMessage = Annotated[
    Hello
    | SceneSync
    | ScenePatch
    | Adjudicate
    | Ping
    | SessionStart
    | SessionEnd
    | RulingOverride
    | EncounterRangeRequest
    | Watch
    | Unwatch,
    Field(discriminator="type"),
]

#: Validates one decoded client message (a ``dict``) into its model.
CLIENT_MESSAGE: TypeAdapter[ClientMessage] = TypeAdapter(ClientMessage)


# --- Bridge → client ------------------------------------------------------------------------------


class RulesetInfo(Message):
    id: str
    editions: list[str]


class BridgeInfo(Message):
    version: str


class Palette(Message):
    """Sightline's one palette (``bridge/palette.json``): ``#rrggbb`` per zone type, for any other zone
    type, and per verdict of a sight line."""

    zones: dict[str, str]
    other: str
    verdicts: dict[str, str]


class Welcome(Message):
    """Extension: ``palette``, the colours the log pages and the demo draw with, so a client's overlay
    draws in the same ones."""

    type: Literal["welcome"] = "welcome"
    protocol: int = PROTOCOL
    bridge: BridgeInfo
    rulesets: list[RulesetInfo]
    palette: Palette | None = None


_ONE_KIND: JsonDict = {"oneOf": [{"required": [kind]} for kind in ("region", "token", "wall", "light", "environment")]}


class IgnoredRef(Message):
    """One held thing, named by its kind: exactly one of ``region``, ``token``, ``wall`` (contract), ``light``
    or ``environment`` (an environment key; extensions)."""

    model_config = ConfigDict(json_schema_extra=_ONE_KIND)
    region: str | None = None
    token: str | None = None
    wall: str | None = None
    light: str | None = None
    environment: str | None = None


class IgnoredEntry(IgnoredRef):
    """Something the bridge holds but will not use in rulings (contract: ``scene.synced.ignored``), with the
    ``reason`` in the scene's locale. Extension: ``cause``, a fixed code for programs (``foreign-zone``,
    ``missing-parameter``, ``no-area``, ``foreign-traits``, ``no-length``, ``foreign-condition``, and in
    ``scene.patched`` ``not-held``: a removed id the scene did not hold)."""

    reason: str
    cause: Literal[
        "foreign-zone", "missing-parameter", "no-area", "foreign-traits", "no-length", "foreign-condition", "not-held"
    ]


class SceneSynced(Message):
    """``ignored`` (contract): everything the scene holds that the bridge will not use, each once; left out
    when nothing is."""

    type: Literal["scene.synced"] = "scene.synced"
    id: str
    scene: str
    regions: int
    tokens: int
    walls: int
    ignored: list[IgnoredEntry] | None = None


class ScenePatched(Message):
    """``ignored`` (contract): what this patch newly makes ignored — not ignored before it, or for another
    reason now — and (extension) the removed ids the scene did not hold (``cause: "not-held"``, not an error).
    Extension ``used``: what was ignored before the patch and is used now. Both left out when empty."""

    type: Literal["scene.patched"] = "scene.patched"
    id: str
    scene: str
    ignored: list[IgnoredEntry] | None = None
    used: list[IgnoredRef] | None = None


class WireCrossing(Message):
    region: str
    zone: str
    kind: Literal["from", "into", "within", "through"]


class WireModifier(Message):
    source: str
    value: int | None
    applied: bool
    label: str
    region: str | None = None
    zone: str | None = None
    reason: str | None = None
    citation: str | None = None


class WirePoint(Message):
    x: float
    y: float
    z: float


class WireLine(Message):
    """Extension: the sight line the ruling used, to redraw it."""

    start: WirePoint
    end: WirePoint


class Adjudication(Message):
    """The ruling. ``modifier`` is null exactly when ``allowed`` is false.

    Extensions: ``line``; ``logged`` (whether the ruling was committed to the log before this answer)
    and ``record`` (its log record id); ruleset fields (Traveller ``difficulty``, ``asset``,
    ``device``, …) in ``details`` and, for those the contract names, at the top level.
    """

    type: Literal["adjudication"] = "adjudication"
    id: str
    scene: str
    actor: str
    target: str | None
    action: str
    reaction: bool = False
    ruleset: str
    edition: str
    allowed: bool
    modifier: int | None
    crossings: list[WireCrossing]
    modifiers: list[WireModifier]
    notes: list[str]
    citations: list[str]
    line: WireLine | None = None
    logged: bool = False
    record: str | None = None
    difficulty: str | None = None
    asset: int | None = None
    device: str | None = None
    details: dict[str, Any] = {}


class Pong(Message):
    type: Literal["pong"] = "pong"
    id: str | None = None


class GameSession(Message):
    id: str
    world: str
    name: str
    started: str
    ended: str | None = None


class SessionStarted(Message):
    type: Literal["session.started"] = "session.started"
    id: str
    session: GameSession


class SessionEnded(Message):
    type: Literal["session.ended"] = "session.ended"
    id: str
    session: GameSession | None


class RulingOverridden(Message):
    type: Literal["ruling.overridden"] = "ruling.overridden"
    id: str
    record: str
    original: str


class EncounterRangeResult(Message):
    """Answer to ``traveller.encounter-range``: the range (fractions kept until here) and each step."""

    type: Literal["traveller.encounter-range.result"] = "traveller.encounter-range.result"
    id: str
    range: float
    steps: list[str]
    citations: list[str]


class Watching(Message):
    type: Literal["watching"] = "watching"
    id: str
    watch: str
    scene: str
    action: str


class Unwatched(Message):
    """Answer to ``unwatch``, or pushed (``id`` null, ``reason`` set) when the bridge ends a watch."""

    type: Literal["unwatched"] = "unwatched"
    id: str | None = None
    watch: str
    reason: str | None = None


class Annotation(Message):
    """One pair's ruling inside ``annotations`` (the adjudication's fields, without the envelope)."""

    actor: str
    target: str
    allowed: bool
    modifier: int | None
    crossings: list[WireCrossing]
    modifiers: list[WireModifier] = []
    notes: list[str] = []
    citations: list[str] = []
    line: WireLine | None = None
    difficulty: str | None = None
    asset: int | None = None
    device: str | None = None
    details: dict[str, Any] = {}


class TokenPair(Message):
    actor: str
    target: str


class Annotations(Message):
    """Pushed to a watcher: the pairs whose ruling changed (all pairs once, with ``full``), and pairs gone."""

    type: Literal["annotations"] = "annotations"
    watch: str
    scene: str
    version: int
    full: bool = False
    changed: list[Annotation]
    removed: list[TokenPair] = []
    more: bool = False


class ErrorMessage(Message):
    type: Literal["error"] = "error"
    id: str | None = None
    code: str
    message: str
    details: dict[str, Any] = {}


BridgeMessage = Annotated[
    Welcome
    | SceneSynced
    | ScenePatched
    | Adjudication
    | Pong
    | SessionStarted
    | SessionEnded
    | RulingOverridden
    | EncounterRangeResult
    | Watching
    | Unwatched
    | Annotations
    | ErrorMessage,
    Field(discriminator="type"),
]

BRIDGE_MESSAGE: TypeAdapter[BridgeMessage] = TypeAdapter(BridgeMessage)

#: Fields that stay on the wire even when null (the contract shows them).
_KEEP_NULL = frozenset({"modifier", "target", "value", "session"})


class Prebuilt(BaseModel):
    """A bridge message already in wire form (a plain dict), for hot paths that skip model building.

    Only for messages whose model exists above (``annotations``): the tests validate what is sent
    against the exported schema, so the two cannot drift apart unseen.
    """

    model_config = ConfigDict(frozen=True)
    #: Taken as it is: neither validated nor copied (a dict its maker just built; ``Prebuilt(payload=…)``
    #: then costs a third of ``model_construct``, on every answer).
    payload: SkipValidation[dict[str, Any]]


def dump_message(message: BaseModel) -> dict[str, Any]:
    """The wire form of a bridge message: optional fields left out when empty."""
    if isinstance(message, Prebuilt):
        return message.payload
    data = _prune(message.model_dump(mode="json"))
    if isinstance(message, ErrorMessage):
        data["details"] = data.get("details", {})  # the contract's error shape: always an object
    return data


def prune_wire(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` as :func:`dump_message` writes a message's dictionary: ``None`` left out (but where the
    contract keeps it), an empty ``details`` left out, at every depth."""
    return _prune(data)


def _prune(data: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in data.items():
        if value is None and key not in _KEEP_NULL:
            continue
        if key == "details" and value == {}:
            continue
        if isinstance(value, dict):
            value = _prune(value)
        elif isinstance(value, list):
            value = [_prune(item) if isinstance(item, dict) else item for item in value]
        out[key] = value
    return out


def encode(message: BaseModel) -> str:
    """One text frame (orjson: compact UTF-8, the same JSON as the standard library's, several times faster).

    Never raises: an answer that cannot be written as JSON (a lone surrogate, nesting past orjson's limit —
    both refused on the way in, so this is a bug) becomes an ``internal-error`` answer to the same request,
    and is logged. A connection's writer must never die on its way out.
    """
    try:
        return orjson.dumps(dump_message(message)).decode()
    except (TypeError, ValueError, RecursionError) as exc:
        _log.error("could not encode a %s answer: %s", type(message).__name__, exc)
        request = getattr(message, "id", None)
        if isinstance(message, Prebuilt):
            request = message.payload.get("id")
        error = {"type": "error", "code": "internal-error", "message": "the bridge could not write its answer"}
        if isinstance(request, str):
            error["id"] = request.encode("utf-8", "replace").decode("utf-8")
        error["details"] = {}  # type: ignore[assignment]
        return orjson.dumps(error).decode()


def encode_frames(message: BaseModel, max_bytes: int) -> list[bytes]:
    """The text frames that carry ``message``, as UTF-8 (orjson's bytes, written to the socket as they are:
    no ``str`` round trip): one, unless it is an ``annotations`` push in wire form (:class:`Prebuilt`, as
    the session builds every push) over ``max_bytes``.

    Such a push is split into parts of the same ``watch``, ``scene`` and ``version``, each within
    ``max_bytes``: the first keeps ``full``, the later ones say ``full: false``, and every part but the
    last says ``more: true`` (docs/protocol.md, "Large pushes"). A pair that does not fit within the limit
    together with the part's envelope still goes, alone, in a part of its own (over the limit).
    """
    try:
        raw = orjson.dumps(dump_message(message))
    except (TypeError, ValueError, RecursionError):
        return [encode(message).encode()]  # the internal-error answer, logged
    if len(raw) <= max_bytes or not isinstance(message, Prebuilt) or message.payload.get("type") != "annotations":
        return [raw]
    return _split_annotations(message.payload, max_bytes)


def _split_annotations(payload: dict[str, Any], max_bytes: int) -> list[bytes]:
    items = [(b"changed", orjson.dumps(entry)) for entry in payload.get("changed", ())]
    items += [(b"removed", orjson.dumps(entry)) for entry in payload.get("removed", ())]
    envelope = {key: payload[key] for key in ("type", "watch", "scene", "version")}
    first_full = bool(payload.get("full", False))
    # The largest envelope a part can have: full/more both false (a byte longer than true), both lists present;
    # each pair is then counted with a comma, which the first of each list does not have.
    overhead = len(orjson.dumps({**envelope, "full": False, "more": False, "changed": [], "removed": []}))
    parts: list[tuple[list[bytes], list[bytes]]] = []
    changed: list[bytes] = []
    removed: list[bytes] = []
    size = overhead
    for kind, encoded in items:
        if (changed or removed) and size + len(encoded) + 1 > max_bytes:
            parts.append((changed, removed))
            changed, removed, size = [], [], overhead
        (changed if kind == b"changed" else removed).append(encoded)
        size += len(encoded) + 1
    parts.append((changed, removed))
    frames = []
    for index, (part_changed, part_removed) in enumerate(parts):
        head = {**envelope, "full": first_full and index == 0, "more": index < len(parts) - 1}
        text = orjson.dumps(head)[:-1] + b',"changed":[' + b",".join(part_changed) + b"]"
        text += b',"removed":[' + b",".join(part_removed) + b"]}"
        frames.append(text)
    return frames
