"""Scene builders shared by the tests: plain contract dicts, as a client would send them."""

from __future__ import annotations

import json
from typing import Any

from bridge.log.effects import unlogged_answer
from bridge.protocol import encode
from bridge.session import Send, Session, StoreThenSend, Worlds

GRID = 100  # pixels per grid space; 1 grid space = 1 distance unit


def rect_region(
    region_id: str,
    zone: str | None,
    x: float,
    y: float,
    width: float,
    height: float,
    *,
    bottom: float | None = None,
    top: float | None = None,
    **params: Any,
) -> dict[str, Any]:
    """A rectangular region carrying a zone of type ``zone`` (``None``: not a visibility zone)."""
    region: dict[str, Any] = {
        "id": region_id,
        "name": region_id,
        "elevation": {"bottom": bottom, "top": top},
        "shapes": [{"type": "rectangle", "x": x, "y": y, "width": width, "height": height, "hole": False}],
    }
    if zone is not None:
        region["zone"] = {"type": zone, **params}
    return region


def token(token_id: str, x: float, y: float, *traits: str, elevation: float = 0, **extra: Any) -> dict[str, Any]:
    """A 1×1 token whose top-left corner is at ``x``, ``y``."""
    return {
        "id": token_id,
        "name": token_id.title(),
        "x": x,
        "y": y,
        "width": 1,
        "height": 1,
        "elevation": elevation,
        "traits": list(traits),
        **extra,
    }


def wall(wall_id: str, x0: float, y0: float, x1: float, y1: float, **fields: Any) -> dict[str, Any]:
    return {"id": wall_id, "c": [x0, y0, x1, y1], "sight": 20, **fields}


def scene(
    *,
    regions: list[dict[str, Any]] = (),  # type: ignore[assignment]
    tokens: list[dict[str, Any]] = (),  # type: ignore[assignment]
    walls: list[dict[str, Any]] = (),  # type: ignore[assignment]
    ruleset: str = "infinity-n4",
    edition: str = "current",
    locale: str = "en",
    lines: str = "center",
    scene_id: str = "s1",
    environment: dict[str, Any] | None = None,
    lights: list[dict[str, Any]] = (),  # type: ignore[assignment]
) -> dict[str, Any]:
    return {
        "id": scene_id,
        "name": "Test scene",
        "grid": {"size": GRID, "distance": 1, "units": "in"},
        "rules": {"ruleset": ruleset, "edition": edition, "locale": locale, "lines": lines},
        "environment": environment or {},
        "regions": list(regions),
        "tokens": list(tokens),
        "walls": list(walls),
        "lights": list(lights),
    }


class OfflineClient:
    """Talks to a real offline :class:`Session` in JSON, as ``sightline replay`` does."""

    def __init__(self) -> None:
        self.session = Session(Worlds(), offline=True)
        self._ids = 0

    def send(self, message: dict[str, Any]) -> list[dict[str, Any]]:
        answers = []
        for effect in self.session.receive(json.dumps(message)):
            if isinstance(effect, Send):
                answers.append(json.loads(encode(effect.message)))
            elif isinstance(effect, StoreThenSend):
                answers.append(json.loads(encode(unlogged_answer(effect))))
        return answers

    def one(self, message: dict[str, Any]) -> dict[str, Any]:
        answers = self.send(message)
        assert len(answers) == 1, answers
        return answers[0]

    def sync(self, scene_data: dict[str, Any]) -> dict[str, Any]:
        answer = self.one({"type": "scene.sync", "id": self._next(), "scene": scene_data})
        assert answer["type"] == "scene.synced", answer
        return answer

    def adjudicate(self, actor: str, target: str | None, action: str = "bs-attack", **fields: Any) -> dict[str, Any]:
        message = {"type": "adjudicate", "id": self._next(), "scene": fields.pop("scene", "s1"), "actor": actor}
        if target is not None:
            message["target"] = target
        message.update(action=action, log=False, **fields)
        return self.one(message)

    def _next(self) -> str:
        self._ids += 1
        return f"m{self._ids}"


def rule(
    scene_data: dict[str, Any], actor: str, target: str | None, action: str = "bs-attack", **fields: Any
) -> dict[str, Any]:
    """Sync ``scene_data`` into a fresh offline session and adjudicate one action."""
    client = OfflineClient()
    client.sync(scene_data)
    answer = client.adjudicate(actor, target, action, **fields)
    assert answer["type"] == "adjudication", answer
    return answer


def applied(answer: dict[str, Any]) -> list[dict[str, Any]]:
    return [m for m in answer["modifiers"] if m["applied"]]


def by_region(answer: dict[str, Any], region: str) -> dict[str, Any]:
    return next(m for m in answer["modifiers"] if m.get("region") == region)


def on_line_scene(**kw: Any) -> dict[str, Any]:
    """A small standard scene: actor ``a`` and target ``t`` with a Low and a Poor zone between them."""
    return scene(
        regions=[rect_region("r-low", "low", 250, 350, 200, 200), rect_region("r-poor", "poor", 600, 350, 200, 200)],
        tokens=[token("a", 0, 400), token("t", 1000, 400)],
        **kw,
    )
