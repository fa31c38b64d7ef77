"""What an OpenAI Agents SDK `Agent` is, read without importing the SDK: the lowest module of this
folder, so the exporter, its hooks, the guard and the ground's loader each read it."""

from __future__ import annotations

from typing import Any


def is_agent(obj: Any) -> bool:
    """Is `obj` an OpenAI Agents SDK `Agent` (without importing the SDK when it is not loaded)?"""
    return any(c.__name__ == "Agent" and c.__module__ == "agents.agent" for c in type(obj).__mro__)
