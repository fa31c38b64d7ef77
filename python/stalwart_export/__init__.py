"""stalwart-export: write a LangGraph graph as qls-graph/1 for stalwart-verify.

    from stalwart_export import export_graph, export_catalogue
    graph_json = export_graph(app)                 # app = StateGraph(...).compile() or create_agent(...)
    catalogue = export_catalogue(app, words={"refund_order": {"kind": "write"}})

Then: `stalwart verify --graph graph.json --catalogue catalogue.json`.

The guard (the tool check at run time, SPEC 12.1): `Guard(catalogue, ...)`, used as
`create_agent(..., middleware=[guard])`, `guard.tool_node(tools)` or `guard.call(tool, args,
state)`; see `stalwart_export.guard`.
Tested with langgraph 1.2.24 (see python/requirements-test.txt).
"""

from .catalogue import catalogue_words, export_catalogue, tool_words
from ._ids import escape_id, unescape_id
from .graph import export_graph, graph_tools
from .guard import HISTORY_KEY, Guard, GuardConfigError, GuardHistory, GuardState, read_history

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
