"""The module the exporter imports (`app:graph`): it only calls the factory."""

from __future__ import annotations

from .factory import build_graph

graph = build_graph()
