"""Traveller's encounter range from the command line and over the protocol (seed 000's worked cases)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.scenes import OfflineClient

SIGHTLINE = str(Path(sys.executable).parent / "sightline")


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["1200"], 1200.0),
        (["1200", "--weather", "poor"], 600.0),  # "In poor weather, halve all encounter ranges"
        (["1200", "--weather", "very-poor"], 300.0),  # "In very poor weather, quarter all encounter ranges"
        (["1200", "--light", "2", "--weather", "poor"], 100.0),  # "divide … by 3× the background light level, then"
        (["1200", "--light", "3", "--weather", "very-poor", "--woods"], 1200.0),  # "Woods are unaffected"
    ],
)
def test_encounter_range_command(args: list[str], expected: float) -> None:
    """000: `sightline traveller encounter-range` divides by 3× the light at night, then applies the weather.

    000: 'At night, divide all encounter ranges (except in woods) by 3× the background light level, then modify for poor
    or very poor weather.'
    """
    done = subprocess.run([SIGHTLINE, "traveller", "encounter-range", *args, "--json"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert answer["range"] == pytest.approx(expected)
    assert answer["citations"][0].startswith("Traveller tactical visibility rules (2011-03-17) — Encounter Ranges: ")


def test_encounter_range_message_keeps_fractions() -> None:
    """Over the protocol: 1000 m at light level 3 in very poor weather is 1000/36 m, not a rounded step."""
    client = OfflineClient()
    answer = client.one(
        {"type": "traveller.encounter-range", "id": "e", "base": 1000, "light": 3, "weather": "very-poor"}
    )
    assert answer["type"] == "traveller.encounter-range.result"
    assert answer["range"] == pytest.approx(1000 / 36)
    assert len(answer["steps"]) == 4


def test_encounter_range_message_refuses_bad_weather() -> None:
    """An unknown weather is invalid-message naming the field."""
    answer = OfflineClient().one({"type": "traveller.encounter-range", "id": "e", "base": 10, "weather": "fog"})
    assert answer["code"] == "invalid-message" and answer["message"].startswith("weather")


def test_the_encounter_range_help_and_schema_name_the_source_by_its_title() -> None:
    """The command's help and the message's schema text name 000 by its title, never by a seed file or number.

    rules-notes, "How sources are named": '000 | Traveller tactical visibility rules (2011-03-17) — the section quoted'.
    """
    from bridge.core.rules.data_files import load_toml
    from bridge.schema import protocol_schema

    title = load_toml("traveller")["passages"]["encounter-000"]["title"]
    shown = subprocess.run([SIGHTLINE, "traveller", "--help"], capture_output=True, text=True, check=True).stdout
    schema = protocol_schema()["$defs"]["EncounterRangeRequest"]["description"]
    for text in (" ".join(shown.split()), schema):
        assert title in text and "seed" not in text
