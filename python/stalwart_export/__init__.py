"""stalwart-export: write a LangGraph graph as qls-graph/1 for stalwart-verify.

    from stalwart_export import export_graph, export_catalogue
    graph_json = export_graph(app)                 # app = StateGraph(...).compile() or create_agent(...)
    catalogue = export_catalogue(app, words={"refund_order": {"kind": "write"}})

Then: `stalwart verify --graph graph.json --catalogue catalogue.json`.

The guard (the tool check at run time, SPEC 12.1): `Guard(catalogue, ...)`, used as
`create_agent(..., middleware=[guard])`, `guard.tool_node(tools)` or `guard.call(tool, args,
state)`; see `stalwart_export.langgraph.guard` (the LangGraph adapter) and
`stalwart_export.guard` (the ground every framework's guard decides through).
Tested with langgraph 1.2.24 (see python/requirements-test.txt).
"""

from . import _lazy

#: Each public name and the module it is read from. The names are imported when first read (PEP
#: 562), so importing the package, the guard's framework-free ground (`guard.decide`, `guard.core`,
#: `guard.history`, ...) or the OpenAI Agents SDK side (`openai_agents`) does not import LangGraph;
#: `from stalwart_export import Guard, export_graph` works as before.
_PUBLIC = {
    "export_graph": ".langgraph.graph", "graph_tools": ".langgraph.graph",
    "export_catalogue": ".catalogue", "catalogue_words": ".catalogue", "tool_words": ".catalogue",
    "escape_id": "._ids", "unescape_id": "._ids",
    "Guard": ".langgraph.guard", "GuardConfigError": ".guard", "GuardHistory": ".langgraph.guard",
    "GuardState": ".langgraph.guard",
    "HISTORY_KEY": ".guard", "read_history": ".guard",
}


__getattr__ = _lazy.names(__name__, _PUBLIC, globals())


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_PUBLIC))


__all__ = [
    "export_graph",
    "export_catalogue",
    "catalogue_words",
    "graph_tools",
    "tool_words",
    "escape_id",
    "unescape_id",
    "Guard",
    "GuardConfigError",
    "GuardHistory",
    "GuardState",
    "HISTORY_KEY",
    "read_history",
]
__version__ = "0.1.0"
