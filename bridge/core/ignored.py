"""What the bridge holds but will not use in rulings, and why — nothing the GM placed is dropped in silence.

Contract (``scene.sync``): when the bridge holds a region, token or wall but will not use it in rulings, the
``scene.synced`` answer (and ``scene.patched``) lists it once with a reason in the scene's locale. The cases:

- ``foreign-zone``: a region whose zone type belongs to another ruleset than the scene's;
- ``missing-parameter``: a zone missing a parameter its ruleset needs (a Traveller smoke without density):
  held, but taken out of the rulings (:func:`ruled_scene`) until the parameter comes;
- ``no-area``: a zone with no shape the bridge can read and no resolved polygons (a V14 shape type sent
  before Foundry resolved its polygons): it covers nothing;
- ``foreign-traits``: a token with traits of another ruleset (once per token, every such trait named);
- ``no-length``: a wall whose two ends are the same point (it can block nothing);
- ``foreign-condition`` (extension): a scene ``environment`` key of another ruleset;
- ``not-held`` (in ``scene.patched`` only): an id a patch removed that the scene did not hold.

Pure: reasons come from the rulesets' labels (:mod:`bridge.core.rules.labels`) and the texts below.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Final, Literal

from .rules import Ruleset
from .rules.base import LocalText, MissingParameter
from .rules.data_files import vocabulary
from .rules.labels import label
from .scene import Region, Scene, Token, Wall

__all__ = [
    "Ignored",
    "IgnoredKey",
    "Kind",
    "diff_ignored",
    "environment_ignored",
    "ignored_after_patch",
    "ignored_in",
    "missing_parameter",
    "not_held",
    "region_ignored",
    "ruled_scene",
    "token_ignored",
    "wall_ignored",
]

Kind = Literal["region", "token", "wall", "light", "environment"]
Cause = Literal[
    "foreign-zone", "missing-parameter", "no-area", "foreign-traits", "no-length", "foreign-condition", "not-held"
]
IgnoredKey = tuple[Kind, str]


@dataclass(frozen=True, slots=True)
class Ignored:
    """One thing held (or named) but not used in rulings: its kind and id, a machine ``cause`` and the
    ``reason`` people read, in the scene's locale."""

    kind: Kind
    id: str
    cause: Cause
    reason: str

    @property
    def key(self) -> IgnoredKey:
        return (self.kind, self.id)


_TEXTS: Final = {
    "foreign-zone": LocalText(
        en="{name}: {zone} is a zone type of {owners}, not of {ruleset}; it is not used in rulings.",
        es="{name}: {zone} es un tipo de zona de {owners}, no de {ruleset}; no se usa en las resoluciones.",
    ),
    "missing-parameter": LocalText(
        en="{name}: a {zone} zone needs {param} under {ruleset}; it is not used in rulings until it has it.",
        es="{name}: una zona de tipo {zone} necesita {param} en {ruleset}; no se usa en las resoluciones "
        "hasta que se indique.",
    ),
    "no-area": LocalText(
        en="{name}: the zone has no shape the bridge can read and no resolved polygons; it covers nothing.",
        es="{name}: la zona no tiene ninguna forma que el puente sepa leer ni polígonos resueltos; no cubre nada.",
    ),
    "foreign-trait": LocalText(
        en="{name}: the trait {traits} belongs to {owners}, not to {ruleset}; it is not used in rulings.",
        es="{name}: el rasgo {traits} es de {owners}, no de {ruleset}; no se usa en las resoluciones.",
    ),
    "foreign-traits": LocalText(
        en="{name}: the traits {traits} belong to {owners}, not to {ruleset}; they are not used in rulings.",
        es="{name}: los rasgos {traits} son de {owners}, no de {ruleset}; no se usan en las resoluciones.",
    ),
    "no-length": LocalText(
        en="A wall with both ends at the same point has no length; it blocks nothing.",
        es="Un muro con ambos extremos en el mismo punto no tiene longitud; no bloquea nada.",
    ),
    "foreign-condition": LocalText(
        en="Scene condition {condition}: read by {owners}, not by {ruleset}; it is not used in rulings.",
        es="Condición de la escena {condition}: la lee {owners}, no {ruleset}; no se usa en las resoluciones.",
    ),
    "not-held": LocalText(
        en="Not in this scene: there was nothing to remove.",
        es="No está en esta escena: no había nada que quitar.",
    ),
}

_UNNAMED: Final = {
    "region": LocalText(en="Unnamed region", es="Región sin nombre"),
    "token": LocalText(en="Unnamed token", es="Ficha sin nombre"),
}

#: The zone parameters a ruleset may require, as people read them.
_PARAMETERS: Final = {
    "density": LocalText(en="a smoke density", es="una densidad de humo"),
    "by": LocalText(en="what lights it (illuminated by)", es="qué la ilumina (iluminada por)"),
    "penalty": LocalText(en="a darkness penalty", es="un penalizador de oscuridad"),
}

#: Scene conditions (``environment`` keys), as people read them.
_CONDITIONS: Final = {
    "darkness": LocalText(en="Darkness", es="Oscuridad"),
    "light": LocalText(en="Light", es="Luz"),
    "weather": LocalText(en="Weather", es="Tiempo atmosférico"),
}


def _rulesets(ids: Iterable[str], locale: str) -> str:
    return ", ".join(label(rid, "ruleset", rid, locale) for rid in dict.fromkeys(ids))


def missing_parameter(ruleset: Ruleset, region: Region) -> str | None:
    """The parameter ``region``'s zone lacks under ``ruleset`` (its own zone type only), else ``None``.

    Any other problem of the zone is the ruleset's ``ValueError``, raised.
    """
    zone = region.zone
    if zone is None or zone.type not in ruleset.zone_types:
        return None
    try:
        ruleset.validate_zone(zone)
    except MissingParameter as exc:
        return exc.parameter
    return None


def region_ignored(region: Region, ruleset: Ruleset, locale: str) -> Ignored | None:
    """Why a zone is not used in rulings under ``ruleset``, or ``None`` (used, or no zone at all)."""
    zone = region.zone
    if zone is None:
        return None  # a region without a zone is no visibility zone (contract): nothing is ignored
    foreign = zone.type not in ruleset.zone_types
    parameter = None if foreign else missing_parameter(ruleset, region)
    no_area = not region.polygons and not any(shape.type in _KNOWN_SHAPES for shape in region.shapes)
    if not (foreign or parameter or no_area):
        return None  # the common case: nothing to say, no label looked up
    name = region.name or _UNNAMED["region"].get(locale)
    values = {
        "name": name,
        "zone": label(ruleset.id, "zone", zone.type, locale),
        "ruleset": label(ruleset.id, "ruleset", ruleset.id, locale),
    }
    if foreign:
        owners = _rulesets(vocabulary().owner_of_zone(zone.type), locale)
        reason = _TEXTS["foreign-zone"].get(locale, owners=owners, **values)
        return Ignored("region", region.id, "foreign-zone", reason)
    if parameter is not None:
        param = _PARAMETERS[parameter].get(locale) if parameter in _PARAMETERS else parameter
        reason = _TEXTS["missing-parameter"].get(locale, param=param, **values)
        return Ignored("region", region.id, "missing-parameter", reason)
    return Ignored("region", region.id, "no-area", _TEXTS["no-area"].get(locale, name=name))


_KNOWN_SHAPES: Final = frozenset(("rectangle", "circle", "ellipse", "polygon"))


def token_ignored(token: Token, ruleset: Ruleset, locale: str) -> Ignored | None:
    """Why some of a token's traits are not used (they belong to another ruleset), or ``None``."""
    if not token.traits:
        return None
    vocab = vocabulary()
    foreign = [trait for trait in dict.fromkeys(token.traits) if not ruleset.knows_trait(trait)]
    if not foreign:
        return None
    owners = _rulesets((owner for trait in foreign for owner in vocab.owner_of_trait(trait)), locale)
    key = "foreign-trait" if len(foreign) == 1 else "foreign-traits"
    reason = _TEXTS[key].get(
        locale,
        name=token.name or _UNNAMED["token"].get(locale),
        traits=", ".join(label(ruleset.id, "trait", trait, locale) for trait in foreign),
        owners=owners,
        ruleset=label(ruleset.id, "ruleset", ruleset.id, locale),
    )
    return Ignored("token", token.id, "foreign-traits", reason)


def wall_ignored(wall: Wall, locale: str) -> Ignored | None:
    """Why a wall can never block (its ends are one point), or ``None``."""
    c = wall.c
    if (c[0], c[1]) != (c[2], c[3]):
        return None
    return Ignored("wall", wall.id, "no-length", _TEXTS["no-length"].get(locale))


def environment_ignored(scene: Scene, ruleset: Ruleset) -> list[Ignored]:
    """The scene conditions (``environment`` keys) that only other rulesets read."""
    locale = scene.rules.locale
    vocab = vocabulary()
    found = []
    for key in scene.environment:
        owners = vocab.owner_of_environment(key)
        if owners and ruleset.id not in owners:
            condition = _CONDITIONS[key].get(locale) if key in _CONDITIONS else key
            reason = _TEXTS["foreign-condition"].get(
                locale,
                condition=condition,
                owners=_rulesets(owners, locale),
                ruleset=label(ruleset.id, "ruleset", ruleset.id, locale),
            )
            found.append(Ignored("environment", key, "foreign-condition", reason))
    return found


def ignored_in(scene: Scene, ruleset: Ruleset) -> dict[IgnoredKey, Ignored]:
    """Everything ``scene`` holds that ``ruleset`` will not use, by (kind, id), in scene order."""
    locale = scene.rules.locale
    found: list[Ignored | None] = [region_ignored(region, ruleset, locale) for region in scene.regions if region.zone]
    found += [token_ignored(token, ruleset, locale) for token in scene.tokens if token.traits]
    # Walls are the many (up to 50,000): only those whose ends meet are looked at again.
    found += [wall_ignored(wall, locale) for wall in scene.walls if wall.c[0] == wall.c[2] and wall.c[1] == wall.c[3]]
    found += environment_ignored(scene, ruleset)
    return {entry.key: entry for entry in found if entry is not None}


def ignored_after_patch(
    previous: Mapping[IgnoredKey, Ignored],
    scene: Scene,
    ruleset: Ruleset,
    *,
    upsert: Mapping[str, Iterable[Region | Token | Wall | object]],
    remove: Mapping[str, Iterable[str]],
) -> dict[IgnoredKey, Ignored]:
    """What ``scene`` (a patched scene under unchanged rules and environment) ignores, found again only for
    the objects the patch upserted or removed."""
    locale = scene.rules.locale
    found = dict(previous)
    kinds: dict[str, Kind] = {"regions": "region", "tokens": "token", "walls": "wall"}
    for plural, ids in remove.items():
        if plural in kinds:
            for item_id in ids:
                found.pop((kinds[plural], item_id), None)
    for plural, items in upsert.items():
        if plural not in kinds:
            continue
        for item in items:
            entry: Ignored | None
            if isinstance(item, Region):
                entry = region_ignored(item, ruleset, locale)
            elif isinstance(item, Token):
                entry = token_ignored(item, ruleset, locale)
            elif isinstance(item, Wall):
                entry = wall_ignored(item, locale)
            else:  # pragma: no cover - upserts are regions, tokens, walls or lights
                continue
            found.pop((kinds[plural], item.id), None)
            if entry is not None:
                found[entry.key] = entry
    return found


def diff_ignored(
    before: Mapping[IgnoredKey, Ignored], after: Mapping[IgnoredKey, Ignored], held: set[IgnoredKey]
) -> tuple[list[Ignored], list[IgnoredKey]]:
    """What a patch newly makes ignored (not ignored before, or for another reason now), and what it makes
    used again (ignored before, used now and still held)."""
    new = [entry for key, entry in after.items() if before.get(key) != entry]
    used = [key for key in before if key not in after and key in held]
    return new, used


def not_held(kind: Kind, item_id: str, locale: str) -> Ignored:
    """A removal of an id the scene did not hold (not an error: Foundry may create and delete between patches)."""
    return Ignored(kind, item_id, "not-held", _TEXTS["not-held"].get(locale))


def ruled_scene(
    scene: Scene, ignored: Mapping[IgnoredKey, Ignored], previous: tuple[Scene, Scene] | None = None
) -> Scene:
    """The scene the rulings see: zones missing a parameter taken out (their regions kept as plain regions).

    ``scene`` itself when no zone is missing a parameter. ``previous`` — the (held, ruled) scenes this one
    follows — lends its ruled regions list when the held one is the very same list, so the geometry of
    unchanged zones is kept (it is reused by identity of the regions list).
    """
    missing = {key[1] for key, entry in ignored.items() if entry.cause == "missing-parameter"}
    if not missing:
        return scene
    if previous is not None and previous[0].regions is scene.regions and _stripped(*previous) == missing:
        regions = previous[1].regions
    else:
        regions = [
            region.model_copy(update={"zone": None}) if region.id in missing else region for region in scene.regions
        ]
    return scene.model_copy(update={"regions": regions})


def _stripped(held: Scene, ruled: Scene) -> set[str]:
    """The regions ``ruled`` took the zone out of (its copies, where ``held`` has the originals)."""
    if held.regions is ruled.regions:
        return set()
    return {mine.id for mine, theirs in zip(held.regions, ruled.regions, strict=True) if mine is not theirs}
