"""The one palette of zone and sight-line colours (``bridge/palette.json``), shared by the demo's SVG, the
log pages' map and the Foundry module's overlay (which ships the same file as ``palette.json``).

Colours are ``#rrggbb``; a zone type the palette does not name is drawn in :data:`OTHER`.
"""

from __future__ import annotations

import json
import re
from importlib import resources
from types import MappingProxyType
from typing import Any, Final, Literal

__all__ = ["OTHER", "PALETTE", "VERDICTS", "ZONES", "Verdict", "load_palette", "zone_colour"]

Verdict = Literal["clear", "penalised", "blocked", "pending"]
_COLOUR = re.compile(r"#[0-9a-f]{6}")


def load_palette(text: str) -> dict[str, Any]:
    """The palette in ``text``, checked: every colour ``#rrggbb`` (lower case), the four verdicts named."""
    data = json.loads(text)
    zones, other, verdicts = data.get("zones"), data.get("other"), data.get("verdicts")
    if not isinstance(zones, dict) or not isinstance(verdicts, dict) or not isinstance(other, str):
        raise ValueError("palette.json needs zones, other and verdicts")
    if set(verdicts) != {"clear", "penalised", "blocked", "pending"}:
        raise ValueError("palette.json: verdicts must be clear, penalised, blocked and pending")
    for name, colour in [*zones.items(), ("other", other), *verdicts.items()]:
        if not isinstance(colour, str) or not _COLOUR.fullmatch(colour):
            raise ValueError(f"palette.json: {name} is not a #rrggbb colour: {colour!r}")
    return {"zones": dict(zones), "other": other, "verdicts": dict(verdicts)}


PALETTE: Final = MappingProxyType(
    load_palette(resources.files("bridge").joinpath("palette.json").read_text(encoding="utf-8"))
)
ZONES: Final = MappingProxyType(PALETTE["zones"])
OTHER: Final[str] = PALETTE["other"]
VERDICTS: Final = MappingProxyType(PALETTE["verdicts"])


def zone_colour(zone_type: str) -> str:
    """The colour of a zone type; :data:`OTHER` for one the palette does not name."""
    return str(ZONES.get(zone_type, OTHER))
