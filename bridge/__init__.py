"""Sightline bridge: line-of-sight adjudication through visibility zones for Foundry VTT."""

__version__ = "0.1.0"
