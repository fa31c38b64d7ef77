"""A prebuilt agent made in a module of its own."""

from __future__ import annotations

from langgraph.prebuilt import create_react_agent

from .nodes import llm
from .tools import MAIL_TOOLS

agent = create_react_agent(llm, MAIL_TOOLS)  # <- react agent
