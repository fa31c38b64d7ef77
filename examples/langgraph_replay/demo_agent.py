"""The graph of the corpus export `react_agent.json`, as an application writes it: LangGraph's
prebuilt ReAct agent over its own model and tools. The replay harness runs it unmodified
(`--graph demo_agent:graph`), putting its scripted model and stub tools in their place."""

from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.prebuilt import create_react_agent


@tool
def read_inbox(folder: str = "inbox") -> str:
    """Read the newest e-mails in the user's mailbox folder."""
    raise RuntimeError("the real mailbox is not read in a replay")


@tool
def get_order(order_id: str) -> str:
    """Look up an order by id."""
    raise RuntimeError("the real shop is not called in a replay")


@tool
def refund_order(order_id: str, amount: float) -> str:
    """Refund an order."""
    raise RuntimeError("no money moves in a replay")


class ProviderModel(FakeListChatModel):
    """Stands for a provider's chat model (which binds tools as this does); never answers in a
    replay, where the harness's scripted model answers instead."""

    def bind_tools(self, tools, **kwargs):
        return self.bind(tools=[t.name for t in tools], **kwargs)


#: The application's model.
model = ProviderModel(responses=["the real model is not called in a replay"])
tools = [read_inbox, get_order, refund_order]

graph = create_react_agent(model, tools)

#: The same agent pausing before its tool node (the export `react_agent_interrupt.json`).
graph_with_interrupt = create_react_agent(model, tools, interrupt_before=["tools"], checkpointer=InMemorySaver())
