"""The guard: the tool check at run time for LangGraph agents (SPEC 12.1).

    from stalwart_export import Guard
    guard = Guard("catalogue.json", rulebook="compiled/", facts="agent.yaml", trace="runs.jsonl")
    agent = guard.traced(create_agent(model, tools, middleware=[guard], checkpointer=saver))

Modules, each one job: `doc` (reading JSON/YAML with positions, as the verifier), `catalogue`,
`facts`, `rulebook` (the compiled record and its routes), `history` (the hash chain in the
graph's state), `args` (argument schema and destinations), `decide` (the rules, in order),
`review` (what the person is asked and their answer), `core` (a batch through the check),
`attempts` (calls started, so a retry sees them), `concurrent` (calls of concurrent branches
serialised), `handoff` (the history in a hand-off's update), `turns` (a tool answer never starts a turn),
`middleware` (the `Guard`), `node` (`guard.tool_node`), `trace` (the `--traces` lines),
`state` (the graph's state as a mapping, dataclass or pydantic model), `callables` (what
`guard.call`/`guard.acall` run: tools, plain functions, injected arguments), `lazy` (the
catalogue read at the first call when it is not written yet).
"""

from .decide import REASON_TEXT
from .doc import GuardConfigError
from .history import HISTORY_KEY, GuardHistory, merge_history, read_history
from .. import _lazy

#: The LangGraph adapter's names, imported when first read (PEP 562): the ground above imports no
#: framework, so the OpenAI Agents SDK's guard reads it without LangGraph.
_ADAPTER = {"Guard": ".middleware", "GuardState": ".middleware", "CallResult": ".middleware"}


__getattr__ = _lazy.names(__name__, _ADAPTER, globals())

__all__ = ["Guard", "GuardConfigError", "GuardHistory", "GuardState", "CallResult", "HISTORY_KEY",
           "REASON_TEXT", "merge_history", "read_history"]
