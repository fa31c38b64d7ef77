"""Node ids of the export (SPEC 2.2): a framework's node name as a qls-graph/1 id and back. The
ground of the package: it imports nothing, so the exporters, the guards and their traces all
read it without importing one another."""

from __future__ import annotations


def escape_id(name: str) -> str:
    """A LangGraph node name as a qls-graph/1 node id: `%` becomes `%25` and `/` becomes
    `%2F` (qls ids may not contain `/`, which separates subgraph levels). Reversible:
    `unescape_id`. Other characters are kept."""
    return name.replace("%", "%25").replace("/", "%2F")


def unescape_id(node_id: str) -> str:
    """The LangGraph node name of a qls-graph/1 id written by `escape_id`."""
    return node_id.replace("%2F", "/").replace("%25", "%")
