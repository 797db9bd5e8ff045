"""bridge.core.rules' registry: every ruleset known by id, each loaded and validated on its first read."""

from __future__ import annotations

import subprocess
import sys
import weakref
from typing import Any

import pytest

from bridge.core import rules
from bridge.core.rules import RULESETS, RulesetLoadError, load_all


def fresh_interpreter(code: str) -> str:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return done.stdout.strip()


def test_the_registry_lists_every_ruleset_in_order() -> None:
    """The ids, in the order the bridge lists them, each the id its loaded ruleset gives itself."""
    assert list(RULESETS) == ["infinity-n4", "infinity-codeone", "gurps-4e", "traveller"]
    assert len(RULESETS) == 4
    assert [ruleset.id for ruleset in RULESETS.values()] == list(RULESETS)
    assert RULESETS.get("no-such-ruleset") is None
    assert "no-such-ruleset" not in RULESETS
    with pytest.raises(KeyError):
        RULESETS["no-such-ruleset"]


def test_a_ruleset_is_loaded_on_its_first_read_only() -> None:
    """Importing the rules loads no ruleset; reading one loads that one alone (its module and its data)."""
    out = fresh_interpreter(
        "import sys; from bridge.core.rules import RULESETS;"
        "print(repr(RULESETS)); assert 'gurps-4e' in RULESETS; print(repr(RULESETS));"
        "ruleset = RULESETS.get('traveller'); print(repr(RULESETS));"
        "print(sorted(m for m in sys.modules if m.startswith('bridge.core.rules.') and m.rsplit('.', 1)[1] in"
        " ('infinity', 'gurps', 'traveller')))"
    )
    assert out.splitlines() == [
        "RULESETS(infinity-n4, infinity-codeone, gurps-4e, traveller; loaded: none)",
        "RULESETS(infinity-n4, infinity-codeone, gurps-4e, traveller; loaded: none)",
        "RULESETS(infinity-n4, infinity-codeone, gurps-4e, traveller; loaded: traveller)",
        "['bridge.core.rules.traveller']",
    ]


def test_a_ruleset_whose_data_is_bad_fails_at_its_load_naming_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """Bad data is refused when its ruleset loads, by an error naming the ruleset and the data's fault.

    It is never read as an unknown ruleset, and it is raised again at the next read (nothing half-loaded is kept).
    """
    from bridge.core.rules import gurps

    real = gurps.load_toml

    def broken(name: str) -> dict[str, Any]:
        raw = real(name)
        raw["zones"]["smoke"]["no_such_key"] = 1
        return raw

    monkeypatch.setattr(gurps, "load_toml", broken)
    registry = rules._Rulesets(rules._LOADERS)  # a registry of its own: RULESETS may hold GURPS already
    for read in (registry.get, registry.__getitem__, registry.get):
        with pytest.raises(RulesetLoadError, match=r"(?s)ruleset 'gurps-4e' could not be loaded: .*no_such_key"):
            read("gurps-4e")
    assert registry["traveller"].id == "traveller"  # the others still load
    monkeypatch.setattr(gurps, "load_toml", real)
    assert registry["gurps-4e"].id == "gurps-4e"


def test_load_all_loads_every_ruleset_and_the_server_calls_it() -> None:
    """``load_all`` validates every ruleset; importing the server loads them all, so bad rules data stops the start.

    ``sightline serve`` imports the server before it is ready.
    """
    load_all()
    assert repr(RULESETS).endswith("loaded: infinity-n4, infinity-codeone, gurps-4e, traveller)")
    out = fresh_interpreter("import bridge.server; from bridge.core.rules import RULESETS; print(repr(RULESETS))")
    assert out.endswith("loaded: infinity-n4, infinity-codeone, gurps-4e, traveller)")


def test_forgetting_the_scene_memos_lets_a_dropped_scenes_objects_go_and_answers_stay_the_same() -> None:
    """forget_scene_memos frees a scene's regions list the memos held; the next answers equal the memoised ones.

    It empties the memos filled from scenes: citations, traits, lists by id, unit circles.
    """
    from bridge.core import geometry
    from bridge.core.rules import data_files, forget_scene_memos, notes
    from bridge.core.rules.infinity import load_infinity

    class Region:
        def __init__(self, region_id: str) -> None:
            self.id = region_id
            self.name = f"Zone {region_id}"

    class Regions(list[Region]):
        """A list a weak reference can watch."""

    class Scene:
        def __init__(self) -> None:
            self.regions: list[Region] = Regions([Region("r1"), Region("r2")])

    data = load_infinity("infinity-n4")
    keys = tuple(list(data.passages)[:3])
    edition = next(iter(data.editions))
    cited = data_files.cite(data.passages, keys, edition=edition, locale="es")
    trait = data_files.vocabulary().rulesets["gurps-4e"].knows_trait("night-vision-3")
    scene = Scene()
    assert notes.region_name(scene, "r2") == "Zone r2"
    circle = geometry._unit_circle(48)
    regions = weakref.ref(scene.regions)
    assert data_files._CITED and notes._BY_ID and geometry._unit_circle.cache_info().currsize

    forget_scene_memos()
    assert not data_files._CITED and not notes._BY_ID
    assert geometry._unit_circle.cache_info().currsize == 0
    assert data_files._knows_trait.cache_info().currsize == 0
    scene.regions = []
    assert regions() is None  # nothing but the memo held it
    assert data_files.cite(data.passages, keys, edition=edition, locale="es") == cited
    assert data_files.vocabulary().rulesets["gurps-4e"].knows_trait("night-vision-3") == trait
    again = geometry._unit_circle(48)
    assert again[0].tobytes() == circle[0].tobytes() and again[1].tobytes() == circle[1].tobytes()
