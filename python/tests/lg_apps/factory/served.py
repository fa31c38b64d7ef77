"""The module the exporter imports (`served:graph`) re-exports an agent made elsewhere."""

from __future__ import annotations

from .react_agent import agent as graph

__all__ = ["graph"]
