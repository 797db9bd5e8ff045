"""Export the JSON Schema of every wire message to ``schema/protocol-v1.schema.json``.

``python -m bridge.schema`` writes it; ``python -m bridge.schema --check`` exits 1 when the committed
file differs from the models (a test runs the same comparison). The Foundry module's tests validate
the messages they build against this file.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from .protocol import BRIDGE_MESSAGE, CLIENT_MESSAGE, PROTOCOL

__all__ = ["SCHEMA_PATH", "protocol_schema", "rendered_schema"]

SCHEMA_PATH = Path(__file__).resolve().parent.parent / "schema" / "protocol-v1.schema.json"
_REF = "#/$defs/{model}"


def protocol_schema() -> dict[str, Any]:
    """One document: ``$defs.ClientMessage`` (as validated), ``$defs.BridgeMessage`` (as sent), either at the top."""
    client = CLIENT_MESSAGE.json_schema(mode="validation", ref_template=_REF)
    bridge = BRIDGE_MESSAGE.json_schema(mode="serialization", ref_template=_REF)
    defs: dict[str, Any] = {}
    for part in (client, bridge):
        for name, definition in part.pop("$defs", {}).items():
            if name in defs and defs[name] != definition:
                name_in_use = f"{name} differs between client and bridge messages"
                raise ValueError(name_in_use)
            defs[name] = definition
    defs["ClientMessage"] = client
    defs["BridgeMessage"] = bridge
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": f"https://sightline.invalid/protocol-v{PROTOCOL}.schema.json",
        "title": f"Sightline bridge protocol {PROTOCOL}",
        "description": "Every client message (ClientMessage) and bridge message (BridgeMessage).",
        "anyOf": [{"$ref": "#/$defs/ClientMessage"}, {"$ref": "#/$defs/BridgeMessage"}],
        "$defs": dict(sorted(defs.items())),
    }


def rendered_schema() -> str:
    return json.dumps(protocol_schema(), indent=2, ensure_ascii=False, sort_keys=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bridge.schema")
    parser.add_argument("--check", action="store_true", help="fail if the committed schema is out of date")
    args = parser.parse_args(argv)
    text = rendered_schema()
    if args.check:
        current = SCHEMA_PATH.read_text(encoding="utf-8") if SCHEMA_PATH.exists() else ""
        if current != text:
            print(f"{SCHEMA_PATH} is out of date: run python -m bridge.schema", file=sys.stderr)
            return 1
        return 0
    SCHEMA_PATH.parent.mkdir(parents=True, exist_ok=True)
    SCHEMA_PATH.write_text(text, encoding="utf-8")
    print(f"wrote {SCHEMA_PATH}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
