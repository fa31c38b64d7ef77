"""Helpers of the application: a model loader (react-agent template's `utils.load_chat_model`) and
a helper that publishes."""

from __future__ import annotations

from langchain.chat_models import init_chat_model

from . import tools


def load_chat_model(fully_specified_name: str):
    """Load a chat model from a fully specified name (`provider/model`)."""
    provider, model = fully_specified_name.split("/", maxsplit=1)
    return init_chat_model(model, model_provider=provider)


def share(text: str) -> str:
    return tools.publish_post.invoke({"text": text})


def share_named(name: str, text: str) -> str:
    """Publishes with the tool named at run time."""
    return getattr(tools, name).invoke({"text": text})
