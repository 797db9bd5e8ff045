"""``sightline demo``: a short Infinity N4 skirmish played through a real bridge, for a first look.

A bridge is started in this process (``127.0.0.1``, a free port, a throwaway data directory and a
random secret) and a real WebSocket client talks to it exactly as the Foundry module does: ``hello``,
``scene.sync`` of a small docks scene, a scripted list of ``adjudicate`` messages chosen to show the
rules, one ``scene.patch`` moving a token, and the rulings again where they change. Every answer is
printed as a plain-text table and the scene, with every sight line, is drawn to an SVG file.

The script (:data:`SCRIPT`) and the scene (:func:`demo_scene`) are data: a newcomer can read what is
asked; the answers are the bridge's own, never made up here.
"""

from __future__ import annotations

import asyncio
import copy
import errno
import json
import math
import shlex
import sys
import tempfile
import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from websockets.asyncio.client import ClientConnection, connect

from . import __version__
from .config import BridgeConfig, new_secret
from .core.rules import RULESETS
from .core.rules.infinity import InfinityRuleset
from .core.rules.labels import label
from .core.scene import Scene
from .protocol import PROTOCOL
from .server import run_bridge
from .svg import result_of, scene_svg

__all__ = ["SCRIPT", "DemoError", "Step", "demo_scene", "format_ruling", "play", "run_demo"]

SCENE_ID: Final = "s-docks"
WORLD_ID: Final = "w-sightline-demo"
#: Seconds to wait for any one answer before giving up.
ANSWER_TIMEOUT: Final = 15.0


class DemoError(RuntimeError):
    """The bridge answered something the demo did not expect (an ``error``, a wrong ``id`` …)."""


# --- The scene ------------------------------------------------------------------------------------


def _token(token_id: str, name: str, cx: float, cy: float, traits: Sequence[str] = ()) -> dict[str, Any]:
    """A 1×1 token centred on ``(cx, cy)`` (Foundry stores the top-left corner)."""
    return {
        "id": token_id,
        "name": name,
        "x": cx - 50,
        "y": cy - 50,
        "width": 1,
        "height": 1,
        "elevation": 0,
        "traits": list(traits),
    }


def demo_scene(locale: str) -> dict[str, Any]:
    """The docks: 1500×1000 px, 100 px = 1 in; four zones, a shed wall, five troopers (``scene.sync`` form)."""
    names = _TEXTS[locale]
    return {
        "id": SCENE_ID,
        "name": names["scene"],
        "grid": {"size": 100, "distance": 1, "units": "in"},
        "rules": {"ruleset": "infinity-n4", "edition": "current", "locale": locale},
        "environment": {},
        "regions": [
            {
                # A Low zone with a hole: the lit site office in the middle of the haze is clear.
                "id": "r-haze",
                "name": names["haze"],
                "elevation": {"bottom": None, "top": None},
                "shapes": [
                    {"type": "rectangle", "x": 430, "y": 90, "width": 300, "height": 280, "rotation": 0, "hole": False},
                    {"type": "rectangle", "x": 520, "y": 140, "width": 110, "height": 80, "rotation": 0, "hole": True},
                ],
                "zone": {"type": "low"},
            },
            {
                "id": "r-flicker",
                "name": names["flicker"],
                "elevation": {"bottom": None, "top": None},
                "shapes": [{"type": "circle", "x": 900, "y": 250, "radius": 120, "hole": False}],
                "zone": {"type": "poor"},
            },
            {
                "id": "r-smoke",
                "name": names["smoke"],
                "elevation": {"bottom": None, "top": None},
                "shapes": [
                    {
                        "type": "ellipse",
                        "x": 600,
                        "y": 650,
                        "radiusX": 150,
                        "radiusY": 70,
                        "rotation": -20,
                        "hole": False,
                    }
                ],
                "zone": {"type": "smoke"},
            },
            {
                "id": "r-noise",
                "name": names["noise"],
                "elevation": {"bottom": None, "top": None},
                "shapes": [{"type": "polygon", "points": [1180, 290, 1300, 420, 1180, 560, 1060, 420], "hole": False}],
                "zone": {"type": "white-noise"},
            },
        ],
        "tokens": [
            _token("t-ana", "Ana", 150, 250),
            _token("t-kai", "Kai", 150, 650, ["multispectral-visor-1"]),
            _token("t-vik", "Vik", 450, 900, ["marksmanship"]),
            _token("t-lin", "Lin", 1350, 250),
            _token("t-sol", "Sol", 1000, 650),
        ],
        "walls": [{"id": "w-shed", "c": [800, 720, 800, 1000], "sight": 20}],
    }


# --- The script -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Step:
    """One thing the demo asks: an ``adjudicate`` (with ``actor``) or a ``scene.patch`` (with ``move``).

    ``expect`` is what the narration says will happen — ``(allowed, modifier)``; a different answer is
    printed as a warning, never hidden.
    """

    title: Mapping[str, str]
    actor: str = ""
    target: str | None = None
    action: str = "bs-attack"
    reaction: bool = False
    expect: tuple[bool, int | None] | None = None
    move: tuple[str, float, float] | None = None  # token id, new centre x, y


SCRIPT: Final[tuple[Step, ...]] = (
    Step(
        {"en": "A clear line: nothing stands between Sol and Ana", "es": "Línea despejada: nada entre Sol y Ana"},
        "t-sol",
        "t-ana",
        expect=(True, 0),
    ),
    Step(
        {
            "en": "Low (-3) and Poor (-6) on one line do not stack: only -6",
            "es": "Baja (-3) y Mala (-6) en una línea no se acumulan: sólo -6",
        },
        "t-ana",
        "t-lin",
        expect=(True, -6),
    ),
    Step(
        {
            "en": "Smoke (Zero Visibility) blocks a plain trooper",
            "es": "El Humo (Visibilidad Nula) bloquea a una tropa normal",
        },
        "t-sol",
        "t-kai",
        expect=(False, None),
    ),
    Step(
        {
            "en": "A Multispectral Visor L1 sees through the smoke at -6",
            "es": "Un Visor Multiespectral N1 ve a través del humo con -6",
        },
        "t-kai",
        "t-sol",
        expect=(True, -6),
    ),
    Step(
        {
            "en": "Sol answers Kai's attack (ARO): the smoke counts as Poor, -6",
            "es": "Sol responde al ataque de Kai (ARO): el humo cuenta como Mala, -6",
        },
        "t-sol",
        "t-kai",
        reaction=True,
        expect=(True, -6),
    ),
    Step(
        {
            "en": "White Noise blocks the trooper with a Multispectral Visor",
            "es": "El Ruido Blanco bloquea a la tropa con Visor Multiespectral",
        },
        "t-kai",
        "t-lin",
        expect=(False, None),
    ),
    Step(
        {
            "en": "… but not a plain trooper on the same line",
            "es": "… pero no a una tropa normal en la misma línea",
        },
        "t-lin",
        "t-kai",
        expect=(True, 0),
    ),
    Step(
        {"en": "… and it blocks Marksmanship too", "es": "… y también bloquea a Puntería"},
        "t-vik",
        "t-lin",
        expect=(False, None),
    ),
    Step(
        {"en": "The shed wall blocks a BS Attack", "es": "El muro del cobertizo bloquea un Ataque CD"},
        "t-vik",
        "t-sol",
        expect=(False, None),
    ),
    Step(
        {
            "en": "A Speculative Attack needs no LoF: its own -6 only",
            "es": "Un Ataque Especulativo no requiere LDT: sólo su -6 propio",
        },
        "t-vik",
        "t-sol",
        action="speculative-attack",
        expect=(True, -6),
    ),
    Step(
        {
            "en": "scene.patch: Sol leaves the smoke's shadow for the flickering lights",
            "es": "scene.patch: Sol sale de la sombra del humo hacia las luces parpadeantes",
        },
        move=("t-sol", 830, 360),
    ),
    Step(
        {
            "en": "Sol shoots Kai again: no smoke on the line now, but Sol stands in Poor: -6",
            "es": "Sol dispara otra vez a Kai: ya no hay humo, pero Sol está en Mala: -6",
        },
        "t-sol",
        "t-kai",
        expect=(True, -6),
    ),
    Step(
        {
            "en": "A Combat Jump onto Sol's new spot is refused: it is inside a zone",
            "es": "Un Salto de Combate al nuevo sitio de Sol se deniega: está dentro de una zona",
        },
        "t-sol",
        None,
        action="combat-jump",
        expect=(False, None),
    ),
    Step(
        {
            "en": "A Combat Jump onto Lin's spot is allowed: no zone touches it",
            "es": "Un Salto de Combate al sitio de Lin se permite: ninguna zona lo toca",
        },
        "t-lin",
        None,
        action="combat-jump",
        expect=(True, 0),
    ),
)


# --- Texts ----------------------------------------------------------------------------------------

_TEXTS: Final[Mapping[str, Mapping[str, str]]] = {
    "en": {
        "world": "Sightline demo",
        "scene": "Docks",
        "haze": "Harbour haze",
        "flicker": "Flickering lights",
        "smoke": "Smoke",
        "noise": "White Noise",
        "header": "Sightline demo: bridge {version} on {url} — {ruleset} ({edition}), locale {locale}",
        "synced": "scene.sync: {scene} — {regions} zones, {tokens} troopers, {walls} wall",
        "patched": "    {token} moved {distance} inches; the bridge answered scene.patched",
        "col_number": "#",
        "col_who": "Actor → Target",
        "col_action": "Action",
        "col_allowed": "Allowed",
        "col_result": "Result",
        "col_mod": "MOD",
        "col_zones": "Zones crossed (how)",
        "yes": "yes",
        "no": "no",
        "clear": "clear",
        "penalised": "penalised",
        "blocked": "blocked",
        "refused": "refused",
        "allowed": "allowed",
        "inside": "inside",
        "none": "none",
        "no_lof": "no LoF",
        "applied": "✓ applied",
        "not_applied": "✗ not applied",
        "note": "note:",
        "aro": "ARO",
        "from": "from",
        "into": "into",
        "within": "within",
        "through": "through",
        "position": "(position)",
        "unexpected": "warning: ruling {number} differs from the script (expected allowed={allowed}, MOD {modifier})",
        "svg": "Scene picture written to {path}",
        "kept": "Rulings logged in {path}; to look at them: sightline log sessions --data-dir {folder}",
        "no_svg": "cannot write the scene picture {path}: {reason}",
        "no_log": "cannot keep the log in {path}: {reason}",
        "before": "{name} (before)",
        "failed": "sightline demo: {error}",
    },
    "es": {
        "world": "Demo de Sightline",
        "scene": "Muelles",
        "haze": "Bruma del puerto",
        "flicker": "Luces parpadeantes",
        "smoke": "Humo",
        "noise": "Ruido Blanco",
        "header": "Demo de Sightline: puente {version} en {url} — {ruleset} ({edition}), idioma {locale}",
        "synced": "scene.sync: {scene} — {regions} zonas, {tokens} tropas, {walls} muro",
        "patched": "    {token} se mueve {distance} pulgadas; el puente respondió scene.patched",
        "col_number": "#",
        "col_who": "Actor → Objetivo",
        "col_action": "Acción",
        "col_allowed": "Permitida",
        "col_result": "Resultado",
        "col_mod": "MOD",
        "col_zones": "Zonas atravesadas (cómo)",
        "yes": "sí",
        "no": "no",
        "clear": "despejada",
        "penalised": "penalizada",
        "blocked": "bloqueada",
        "refused": "denegado",
        "allowed": "permitido",
        "inside": "dentro",
        "none": "ninguna",
        "no_lof": "sin LDT",
        "applied": "✓ aplicado",
        "not_applied": "✗ no aplicado",
        "note": "nota:",
        "aro": "ARO",
        "from": "desde",
        "into": "hacia",
        "within": "dentro",
        "through": "a través",
        "position": "(posición)",
        "unexpected": "aviso: el dictamen {number} no es el del guion (se esperaba allowed={allowed}, MOD {modifier})",
        "svg": "Imagen de la escena escrita en {path}",
        "kept": "Resoluciones registradas en {path}; para verlas: sightline log sessions --data-dir {folder}",
        "no_svg": "no se puede escribir la imagen de la escena {path}: {reason}",
        "no_log": "no se puede guardar el registro en {path}: {reason}",
        "before": "{name} (antes)",
        "failed": "sightline demo: {error}",
    },
}

#: Widths of the table's columns (the last one runs free).
_WIDTHS: Final = (4, 19, 22, 11, 12, 8)
_WRAP: Final = 110


# --- Playing the script ---------------------------------------------------------------------------


@dataclass
class Played:
    """What the demo saw: the welcome, each ruling with its step, the scene as it ends, the moves made."""

    url: str
    welcome: dict[str, Any]
    synced: dict[str, Any]
    rulings: list[tuple[Step, dict[str, Any]]] = field(default_factory=list)
    patches: list[tuple[Step, dict[str, Any]]] = field(default_factory=list)
    scene: dict[str, Any] = field(default_factory=dict)
    moved_from: dict[str, dict[str, Any]] = field(default_factory=dict)


class _Client:
    """One request, one answer: sends a message and waits for the answer carrying its ``id``."""

    def __init__(self, ws: ClientConnection) -> None:
        self._ws = ws

    async def ask(self, message: Mapping[str, Any], expect: str) -> dict[str, Any]:
        await self._ws.send(json.dumps(message))
        async with asyncio.timeout(ANSWER_TIMEOUT):
            raw = await self._ws.recv()
        answer = json.loads(raw)
        if not isinstance(answer, dict):
            raise DemoError(f"the bridge sent a non-object frame: {raw!r}")
        if answer.get("type") == "error":
            raise DemoError(f"{message.get('type')} was refused: {answer.get('code')}: {answer.get('message')}")
        if answer.get("type") != expect or answer.get("id") != message.get("id"):
            raise DemoError(f"expected {expect!r} answering {message.get('id')!r}, got {raw!r}")
        return answer


async def play(locale: str = "en", *, log_dir: Path | None = None) -> Played:
    """Start a bridge, play :data:`SCRIPT` against it over a WebSocket, shut it down; return the answers.

    With ``log_dir`` the rulings are logged there (``sightline.db``), one game session, and kept: the
    demo's session to browse, export or re-judge afterwards. Otherwise nothing is kept.
    """
    secret = new_secret()
    scene = demo_scene(locale)
    with tempfile.TemporaryDirectory(prefix="sightline-demo-") as scratch:
        data_dir = log_dir or Path(scratch)
        config = BridgeConfig(host="127.0.0.1", port=0, data_dir=data_dir, secret=secret)
        async with run_bridge(config) as (host, port):
            url = f"ws://{host}:{port}/ws"
            async with connect(url, open_timeout=ANSWER_TIMEOUT) as ws:
                client = _Client(ws)
                hello = {
                    "type": "hello",
                    "protocol": PROTOCOL,
                    "world": WORLD_ID,
                    "world_name": _TEXTS[locale]["world"],
                    "secret": secret,
                    "client": {"name": "sightline-demo", "version": __version__},
                    "user": {"id": "demo", "name": "Demo", "gm": True},
                }
                welcome = await client.ask(hello, "welcome")
                synced = await client.ask({"type": "scene.sync", "id": "sync", "scene": scene}, "scene.synced")
                played = Played(url=url, welcome=welcome, synced=synced, scene=copy.deepcopy(scene))
                for number, step in enumerate(SCRIPT, start=1):
                    if step.move is not None:
                        await _move(client, played, step, number)
                    else:
                        ruling = await client.ask(_adjudicate(step, number, log=log_dir is not None), "adjudication")
                        played.rulings.append((step, ruling))
    return played


def _adjudicate(step: Step, number: int, *, log: bool = False) -> dict[str, Any]:
    message: dict[str, Any] = {
        "type": "adjudicate",
        "id": f"step-{number}",
        "scene": SCENE_ID,
        "actor": step.actor,
        "action": step.action,
        "reaction": step.reaction,
        "log": log,
    }
    if step.target is not None:
        message["target"] = step.target
    return message


async def _move(client: _Client, played: Played, step: Step, number: int) -> None:
    assert step.move is not None
    token_id, cx, cy = step.move
    tokens: list[dict[str, Any]] = played.scene["tokens"]
    index = next(i for i, token in enumerate(tokens) if token["id"] == token_id)
    played.moved_from.setdefault(token_id, copy.deepcopy(tokens[index]))
    moved = {**tokens[index], "x": cx - 50, "y": cy - 50}
    patch = {"type": "scene.patch", "id": f"step-{number}", "scene": SCENE_ID, "upsert": {"tokens": [moved]}}
    answer = await client.ask(patch, "scene.patched")
    tokens[index] = moved
    played.patches.append((step, answer))


# --- Showing the answers --------------------------------------------------------------------------


def format_ruling(number: int, step: Step, ruling: Mapping[str, Any], scene: Mapping[str, Any], locale: str) -> str:
    """One ruling as table rows: the main row, then every candidate MOD (applied or not) and the notes."""
    t = _TEXTS[locale]
    names = {token["id"]: token["name"] for token in scene["tokens"]}
    regions = {region["id"]: region for region in scene["regions"]}
    actor = names.get(ruling["actor"], ruling["actor"])
    target = ruling.get("target")
    who = f"{actor} → {names.get(target, target)}" if target else f"{actor} {t['position']}"
    action = _action_label(ruling["action"], locale)
    if ruling.get("reaction") or step.reaction:
        action = f"{action} ({t['aro']})"
    result = result_of(ruling)
    placement = not ruling.get("line") and not target
    verdict = t[result]
    if placement:
        verdict = t["allowed"] if ruling.get("allowed") else t["refused"]
    modifier = ruling.get("modifier")
    mod = _signed(modifier) if ruling.get("allowed") and isinstance(modifier, int) else "—"
    zones = [
        f"{_zone_label(c['zone'], locale)} · {regions.get(c['region'], {}).get('name') or c['region']}: "
        f"{t['inside'] if placement else t.get(c['kind'], c['kind'])}"
        for c in ruling.get("crossings", [])
    ] or [t["none"]]
    cells = [str(number), who, action, t["yes"] if ruling.get("allowed") else t["no"], verdict, mod]
    lines = [_row(cells, zones[0])]
    lines += [_row([""] * len(cells), zone) for zone in zones[1:]]
    for entry in ruling.get("modifiers", []):
        state = t["applied"] if entry.get("applied") else t["not_applied"]
        value = entry.get("value")
        shown = _signed(value) if isinstance(value, int) else "—" if placement else t["no_lof"]
        region = entry.get("region")
        where = regions.get(region, {}).get("name") if region else None
        label = f"{entry.get('label', '')} · {where}" if where else str(entry.get("label", ""))
        text = f"{state:<15} {shown:>7}  {label}"
        if entry.get("reason"):
            text += f" — {entry['reason']}"
        lines.append(textwrap.fill(text, _WRAP, initial_indent="      ", subsequent_indent=" " * 31))
    for note in ruling.get("notes", []):
        lines.append(textwrap.fill(f"{t['note']} {note}", _WRAP, initial_indent="      ", subsequent_indent=" " * 12))
    return "\n".join(lines)


def _header(locale: str) -> str:
    t = _TEXTS[locale]
    cells = [t["col_number"], t["col_who"], t["col_action"], t["col_allowed"], t["col_result"], t["col_mod"]]
    head = _row(cells, t["col_zones"])
    rule = _row(["-" * (w - 2) for w in _WIDTHS], "-" * len(t["col_zones"]))
    return f"{head}\n{rule}"


def _row(cells: Sequence[str], last: str) -> str:
    """Cells padded to their column, never closer than two spaces: the columns split on any double space."""
    return ("".join(cell.ljust(width - 2) + "  " for cell, width in zip(cells, _WIDTHS, strict=True)) + last).rstrip()


def _signed(value: int) -> str:
    return f"{value:+d}" if value else "0"


def _ruleset() -> InfinityRuleset:
    ruleset = RULESETS["infinity-n4"]
    assert isinstance(ruleset, InfinityRuleset)
    return ruleset


def _action_label(action: str, locale: str) -> str:
    rules = _ruleset().data.actions.get(action)
    return rules.label.get(locale) if rules else action


def _zone_label(zone: str, locale: str) -> str:
    rules = _ruleset().data.zones.get(zone)
    return rules.label.get(locale) if rules else zone


def report(played: Played, locale: str) -> str:
    """Everything the demo prints: header, the table of rulings (and the move between them)."""
    t = _TEXTS[locale]
    rules = played.scene["rules"]
    lines = [
        t["header"].format(
            version=played.welcome.get("bridge", {}).get("version", "?"),
            url=played.url,
            ruleset=label(rules["ruleset"], "ruleset", rules["ruleset"], locale),
            edition=label(rules["ruleset"], "edition", rules["edition"], locale),
            locale=locale,
        ),
        t["synced"].format(
            scene=played.scene["name"],
            regions=played.synced["regions"],
            tokens=played.synced["tokens"],
            walls=played.synced["walls"],
        ),
        "",
        _header(locale),
    ]
    rulings = iter(played.rulings)
    number = 0
    names = {token["id"]: token["name"] for token in played.scene["tokens"]}
    for step in SCRIPT:
        if step.move is not None:
            token_id, x, y = step.move
            before = played.moved_from.get(token_id)
            grid = played.scene["grid"]
            distance = 0.0
            if before is not None:  # centre to centre, in the scene's own units (Infinity measures in inches)
                dx, dy = x - (before["x"] + 50), y - (before["y"] + 50)
                distance = math.hypot(dx, dy) / grid["size"] * grid["distance"]
            shown = f"{distance:.1f}".replace(".", ",") if locale == "es" else f"{distance:.1f}"
            lines += ["", f">> {step.title[locale]}", t["patched"].format(token=names[token_id], distance=shown)]
            continue
        number += 1
        _, ruling = next(rulings)
        lines += ["", f"{number}. {step.title[locale]}", format_ruling(number, step, ruling, played.scene, locale)]
        if step.expect is not None and (ruling.get("allowed"), ruling.get("modifier")) != step.expect:
            allowed, modifier = step.expect
            lines.append(t["unexpected"].format(number=number, allowed=allowed, modifier=modifier))
    return "\n".join(lines)


def picture(played: Played, locale: str) -> str:
    """The SVG of the scene as it ends, every ruling drawn; a moved token also shows where it stood."""
    scene = copy.deepcopy(played.scene)
    for token_id, before in played.moved_from.items():
        ghost = {**before, "id": f"{token_id}-before", "name": _TEXTS[locale]["before"].format(name=before["name"])}
        scene["tokens"].append(ghost)
    return scene_svg(Scene.model_validate(scene), [ruling for _, ruling in played.rulings], locale=locale)


def run_demo(*, svg_path: str | Path = "sightline-demo.svg", locale: str = "en", log_dir: Path | None = None) -> int:
    """Play the demo, write its picture, print its table; 0 on success, 1 when the bridge misbehaved, 2 when
    the picture or the kept log cannot go where asked (one line naming the path: nothing else is printed)."""
    if locale not in _TEXTS:
        locale = "en"
    t = _TEXTS[locale]
    reconfigure = getattr(sys.stdout, "reconfigure", None)
    if reconfigure is not None:
        reconfigure(errors="replace")
    if log_dir is not None:
        try:
            if log_dir.exists() and not log_dir.is_dir():
                raise NotADirectoryError(errno.ENOTDIR, "Not a directory")
            log_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            error = t["no_log"].format(path=log_dir.absolute(), reason=_reason(exc))
            print(t["failed"].format(error=error), file=sys.stderr)
            return 2
    try:
        played = asyncio.run(play(locale, log_dir=log_dir))
    except (DemoError, OSError, TimeoutError) as exc:
        print(t["failed"].format(error=exc), file=sys.stderr)
        return 1
    path = Path(svg_path)
    try:  # before the table, so that a picture that cannot be written leaves one line and no half-done output
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(picture(played, locale), encoding="utf-8")
    except OSError as exc:
        error = t["no_svg"].format(path=path.absolute(), reason=_reason(exc))
        print(t["failed"].format(error=error), file=sys.stderr)
        return 2
    print(report(played, locale))
    print()
    print(t["svg"].format(path=path.resolve()))
    if log_dir is not None:
        folder = log_dir.resolve()
        print(t["kept"].format(path=folder / "sightline.db", folder=shlex.quote(str(folder))))
    return 0


def _reason(exc: OSError) -> str:
    """What went wrong, as the system says it ("Is a directory", "Permission denied"), without the path."""
    return exc.strerror or str(exc)
