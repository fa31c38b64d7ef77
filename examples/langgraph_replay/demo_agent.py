"""The graph of the corpus export `react_agent.json`: LangGraph's prebuilt ReAct agent.

`build(model, tools)` builds it as the application would, with the model and tools given,
so the replay harness can run it with a scripted model and stub tools.
"""

from langgraph.prebuilt import create_react_agent


def build(model, tools):
    return create_react_agent(model, tools)


def build_with_interrupt(model, tools):
    """The same agent pausing before its tool node (the export `react_agent_interrupt.json`)."""
    from langgraph.checkpoint.memory import InMemorySaver

    return create_react_agent(model, tools, interrupt_before=["tools"], checkpointer=InMemorySaver())
