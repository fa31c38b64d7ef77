"""The guard's LangGraph adapter (SPEC 12.1): the tool check at run time in a LangGraph agent.

    from stalwart_export import Guard
    guard = Guard("catalogue.json", rulebook="compiled/", facts="agent.yaml", trace="runs.jsonl")
    agent = guard.traced(create_agent(model, tools, middleware=[guard], checkpointer=saver))

It decides through the ground every framework shares (`stalwart_export.guard`: the catalogue,
the rules, the history, a batch through the check) and holds what LangGraph and LangChain need,
each module one job: `middleware` (the `Guard`), `node` (`guard.tool_node`), `channel` (the
history as a state channel, `GuardHistory`), `run` (the run's config, interrupts and messages),
`handoff` (the history in a hand-off's update), `turns` (a tool answer never starts a turn),
`attempts` (calls started, so a retry sees them), `callables` (what `guard.call`/`guard.acall`
run: tools, plain functions, injected arguments), `trace` (the `--traces` lines).
"""

from .channel import GuardHistory
from .middleware import CallResult, Guard, GuardState

__all__ = ["CallResult", "Guard", "GuardHistory", "GuardState"]
