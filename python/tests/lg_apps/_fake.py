"""The scripted chat model the agents run with (no network)."""

from __future__ import annotations

from typing import Any

from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage
from langchain_core.utils.function_calling import convert_to_openai_tool


class ScriptedChatModel(FakeMessagesListChatModel):
    """Answers with its turns in order; `bind_tools` binds the tools' schemas as a provider's
    model does (langchain-core's fakes raise NotImplementedError there)."""

    def bind_tools(self, tools: Any, **kwargs: Any):
        return self.bind(tools=[convert_to_openai_tool(t) for t in tools], **kwargs)


def call(name: str, args: dict | None = None, i: int = 0) -> dict:
    """A tool call as a model's message carries it."""
    return {"name": name, "args": args or {}, "id": f"call_{name}_{i}", "type": "tool_call"}


def scripted(*turns: list[dict] | str) -> ScriptedChatModel:
    """A model answering with the turns: a list of tool calls, or a final text."""
    msgs = [AIMessage(content=t) if isinstance(t, str) else AIMessage(content="", tool_calls=t) for t in turns]
    return ScriptedChatModel(responses=msgs)
