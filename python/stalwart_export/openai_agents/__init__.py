"""The OpenAI Agents SDK (`openai-agents`) side of stalwart_export (SPEC 13.1): its exporter.

    from stalwart_export.openai_agents import export_agent, export_agent_catalogue
    graph_json = export_agent(triage_agent)                      # the starting Agent
    catalogue = export_agent_catalogue(triage_agent, words={"refund": {"kind": "write"}})

or `python -m stalwart_export app:triage_agent -o graph.json --catalogue catalogue.json`; and its
guard (`guard.py`, SPEC 13.1): `AgentGuard(catalogue).wrap(triage_agent)`. The SDK
is imported only when an export is made (`is_agent` does not import it).
Tested with openai-agents 0.24.0 (see python/requirements-test.txt).
"""

from ._tools import guarded_tool
from ._agent import is_agent
from .export import export_agent, export_agent_catalogue, init_agent_words
from .guard import AgentGuard

__all__ = ["AgentGuard", "export_agent", "export_agent_catalogue", "guarded_tool", "init_agent_words", "is_agent"]
