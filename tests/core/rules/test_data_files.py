"""Rules data is validated at load: a broken data file is refused before any ruling is made."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from bridge.core.rules import RULESETS
from bridge.core.rules.data_files import Passage, load_toml, vocabulary
from bridge.core.rules.gurps import GurpsData
from bridge.core.rules.infinity import InfinityData
from bridge.core.rules.traveller import TravellerData


def infinity_raw() -> dict[str, Any]:
    return load_toml("infinity-n4")


def test_shipped_rulesets_load_and_match_the_contract_vocabulary() -> None:
    """Every ruleset in the registry uses exactly its row of the contract vocabulary."""
    vocab = vocabulary()
    for ruleset_id, ruleset in RULESETS.items():
        row = vocab.rulesets[ruleset_id]
        assert ruleset.zone_types == frozenset(row.zones)
        assert ruleset.actions == frozenset(row.actions)
        assert set(ruleset.data.options) == set(row.options)  # type: ignore[attr-defined]
        assert ruleset.editions[-1] == "current"


def test_infinity_n4_has_the_five_editions_of_the_contract() -> None:
    """Contract: infinity-n4 editions are original, 1.2, 1.3, 2.1, current."""
    assert RULESETS["infinity-n4"].editions == ("original", "1.2", "1.3", "2.1", "current")


def test_a_citation_to_a_missing_passage_is_refused() -> None:
    """Each rule cites the seed; a cite key naming no passage fails validation."""
    raw = infinity_raw()
    raw["zones"]["low"]["cite"] = ["no-such-passage"]
    with pytest.raises(ValidationError, match="no-such-passage"):
        InfinityData.model_validate(raw)


def test_a_translation_of_no_passage_is_refused() -> None:
    """A Spanish passage names the English one it stands for; naming none that exists is a data error."""
    raw = infinity_raw()
    raw["passages"]["zero-004"]["translates"] = "zero-999"
    with pytest.raises(ValidationError, match="zero-999"):
        InfinityData.model_validate(raw)


def test_a_zero_zone_with_a_mod_is_refused() -> None:
    """Only Low and Poor zones carry a MOD; a Zero zone with one is a data error."""
    raw = infinity_raw()
    raw["zones"]["zero"]["mod"] = -9
    with pytest.raises(ValidationError, match="carry a mod"):
        InfinityData.model_validate(raw)


def test_a_zone_type_outside_the_vocabulary_is_refused() -> None:
    """The data may not invent zone types the contract does not list."""
    raw = infinity_raw()
    raw["zones"]["fog"] = dict(raw["zones"]["low"])
    with pytest.raises(ValidationError, match="vocabulary"):
        InfinityData.model_validate(raw)


def test_an_option_the_vocabulary_does_not_give_the_ruleset_is_refused_as_is_one_left_out() -> None:
    """The options a ruleset reads are its data's ``[options.*]``, exactly its vocabulary row's: more or fewer fail."""
    label = {"label": {"en": "Cover", "es": "Cobertura"}}
    raw = infinity_raw()
    raw["options"] = {"cover": label}
    with pytest.raises(ValidationError, match="options"):
        InfinityData.model_validate(raw)
    gurps = load_toml("gurps-4e")
    del gurps["options"]["warm"]
    with pytest.raises(ValidationError, match="options"):
        GurpsData.model_validate(gurps)
    traveller = load_toml("traveller")
    traveller["options"]["size"] = {"label": {"en": "Size"}}
    with pytest.raises(ValidationError, match="es"):
        TravellerData.model_validate(traveller)
    assert TravellerData.model_validate(load_toml("traveller")).options["size"].label.en == "Target size"


def test_a_text_missing_its_spanish_is_refused() -> None:
    """Every note and reason exists in English and Spanish."""
    raw = infinity_raw()
    raw["texts"]["blocks"] = {"en": "blocked"}
    with pytest.raises(ValidationError, match="es"):
        InfinityData.model_validate(raw)


def test_rules_data_is_read_only() -> None:
    """Rules are read-only data: a loaded zone cannot be changed in place."""
    data = RULESETS["infinity-n4"].data  # type: ignore[attr-defined]
    with pytest.raises(ValidationError):
        data.zones["low"].mod = 0


def test_every_citation_names_its_source_as_people_know_it() -> None:
    """rules-notes: a citation starts with its source's title, never a seed file name or rules-notes.md.

    rules-notes "How sources are named": each passage keeps its seed file as provenance; a web page shows its URL after
    the title.
    """
    for name in ("infinity-n4", "gurps-4e", "traveller"):
        for key, raw in load_toml(name)["passages"].items():
            citation = Passage.model_validate(raw).citation()
            assert citation.startswith(raw["title"] + (f" ({raw['source']})" if "://" in raw["source"] else "") + ": ")
            assert ".txt" not in citation.split(": ", 1)[0] and "rules-notes.md" not in citation, (name, key)
    quoted = {raw["title"] for raw in load_toml("infinity-n4")["passages"].values()}
    assert {
        "Infinity N4 Core Rules — Visibility Conditions",
        "Infinity N4 Reglamento — Condiciones de Visibilidad",
    } <= quoted


def test_a_passage_titled_with_a_seed_file_name_is_refused() -> None:
    """A title that is a seed's file name is provenance leaking to people: refused at load."""
    raw = infinity_raw()
    raw["passages"]["low-001"]["title"] = "001_a0e8dce3ac9e4c22.txt"
    with pytest.raises(ValidationError, match="not a file name"):
        InfinityData.model_validate(raw)
