"""The committed JSON Schema matches the pydantic models, and it accepts what the bridge really sends."""

from __future__ import annotations

import json

from bridge.schema import SCHEMA_PATH, main, rendered_schema
from tests.scenes import OfflineClient, on_line_scene


def test_committed_schema_matches_the_models() -> None:
    """Drift check: regenerate with `python -m bridge.schema` when this fails."""
    assert SCHEMA_PATH.read_text(encoding="utf-8") == rendered_schema()
    assert main(["--check"]) == 0


def test_schema_names_every_message_type() -> None:
    """Both unions are in the document, discriminated on type."""
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    client = schema["$defs"]["ClientMessage"]["discriminator"]["mapping"]
    bridge = schema["$defs"]["BridgeMessage"]["discriminator"]["mapping"]
    assert {"hello", "scene.sync", "scene.patch", "adjudicate", "ping"} <= set(client)
    assert {"welcome", "scene.synced", "scene.patched", "adjudication", "pong", "error"} <= set(bridge)


def test_real_answers_validate_against_the_schema() -> None:
    """Every answer of a real session validates against the exported schema (jsonschema, draft 2020-12)."""
    import jsonschema

    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    validator = jsonschema.Draft202012Validator(schema)
    client = OfflineClient()
    answers = client.send({"type": "scene.sync", "id": "q", "scene": on_line_scene()})
    answers += client.send(
        {"type": "adjudicate", "id": "a", "scene": "s1", "actor": "a", "target": "t", "action": "bs-attack"}
    )
    answers += client.send({"type": "adjudicate", "id": "b", "scene": "s1", "actor": "a", "action": "combat-jump"})
    answers += client.send({"type": "adjudicate", "id": "c", "scene": "nope", "actor": "a", "action": "bs-attack"})
    answers += client.send({"type": "ping", "id": "p"})
    assert [a["type"] for a in answers] == ["scene.synced", "adjudication", "adjudication", "error", "pong"]
    for answer in answers:
        validator.validate(answer)


def test_a_patch_that_leaves_out_its_parts_gets_empty_ones_of_its_own_and_the_schema_states_them() -> None:
    """A patch's absent upsert/remove parts are new empty lists per message, and the schema says their defaults."""
    from bridge.protocol import CLIENT_MESSAGE, ScenePatch

    first, second = (CLIENT_MESSAGE.validate_python({"type": "scene.patch", "id": i, "scene": "s"}) for i in "ab")
    assert isinstance(first, ScenePatch) and isinstance(second, ScenePatch)
    for kind in ("tokens", "regions", "walls", "lights"):
        assert getattr(first.upsert, kind) == [] and getattr(first.remove, kind) == []
        assert getattr(first.upsert, kind) is not getattr(second.upsert, kind)
        assert getattr(first.remove, kind) is not getattr(second.remove, kind)
    assert first.model_fields_set == {"type", "id", "scene"}
    defs = json.loads(rendered_schema())["$defs"]
    patch = defs["ScenePatch"]["properties"]
    empty = {"tokens": [], "regions": [], "walls": [], "lights": []}
    assert patch["upsert"]["default"] == empty and patch["remove"]["default"] == empty
    upsert = defs["PatchUpsert"]["properties"]
    assert all(upsert[kind]["default"] == [] for kind in empty)
