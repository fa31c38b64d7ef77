"""Chains as LangGraph nodes (issue 28, SPEC 12.5), the way public agents write them: the
multi-agent tutorial's `prompt | llm.bind_tools(tools)` run through `functools.partial(agent_node,
agent=..., name=...)` (and the teams tutorial's compiled agent given the same way);
`RunnablePassthrough.assign(answer=prompt | llm | StrOutputParser())` as a node; `RunnableLambda(fn) | ...` nodes; a `RunnableParallel` gathering context; a chain held at
module level and `.invoke`d inside the node, and one the node builds itself; and chain steps the exporter cannot read (a Runnable
class of the application's, a retriever, `interrupt()` inside a step)."""

from __future__ import annotations

import functools
from operator import itemgetter
from typing import Any, TypedDict

from langchain_core.documents import Document
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables import Runnable, RunnableLambda, RunnableParallel, RunnablePassthrough
from langchain_core.tools import tool
from langgraph.graph import END, START, MessagesState, StateGraph
from langchain.agents import create_agent as build_agent
from langgraph.prebuilt import ToolNode, tools_condition
from langgraph.types import interrupt

from ._fake import call, scripted


@tool
def read_web(url: str) -> str:
    """Fetch a web page."""
    return f"<html>page at {url}</html>"


@tool
def publish_post(text: str) -> str:
    """Publish a post on the company blog."""
    return "published"


# ------------------------------------------------------------------ the multi-agent tutorial
def create_agent(llm, tools, system_message: str):
    prompt = ChatPromptTemplate.from_messages([("system", system_message), ("placeholder", "{messages}")])
    return prompt | llm.bind_tools(tools)


def agent_node(state, agent, name):
    result = agent.invoke(state)
    return {"messages": [AIMessage(**result.model_dump(exclude={"type", "name"}), name=name)]}


research_llm = scripted([call("read_web", {"url": "https://example.com"})], "Found it.")
research_agent = create_agent(research_llm, [read_web, publish_post], "You research; never publish.")

team = StateGraph(MessagesState)
team.add_node("Researcher", functools.partial(agent_node, agent=research_agent, name="Researcher"))
team.add_node("tools", ToolNode([read_web, publish_post]))
team.add_edge(START, "Researcher")
team.add_conditional_edges("Researcher", tools_condition)
team.add_edge("tools", "Researcher")
collaboration = team.compile(name="collaboration")


# the hierarchical-teams tutorial: a compiled agent given to the node function by the partial
def team_member(state, agent, name):
    result = agent.invoke(state)
    return {"messages": [HumanMessage(content=result["messages"][-1].content, name=name)]}


web_agent = build_agent(scripted([call("read_web", {"url": "https://example.com"})], "Read it."), [read_web],
                        name="web_agent")

search_team = StateGraph(MessagesState)
search_team.add_node("Search", functools.partial(team_member, agent=web_agent, name="Search"))
search_team.add_edge(START, "Search")
search_team.add_edge("Search", END)
teams = search_team.compile(name="teams")


# ------------------------------------------------------------------ a chain as the node
agent_llm = scripted([call("read_web", {"url": "https://example.com"})], "Done.")
agent_prompt = ChatPromptTemplate.from_messages([("system", "Research, then answer."), ("placeholder", "{messages}")])

graph_builder = StateGraph(MessagesState)
graph_builder.add_node("agent", agent_prompt | agent_llm.bind_tools([read_web, publish_post])
                       | (lambda message: {"messages": [message]}))
graph_builder.add_node("tools", ToolNode([read_web, publish_post]))
graph_builder.add_edge(START, "agent")
graph_builder.add_conditional_edges("agent", tools_condition)
graph_builder.add_edge("tools", "agent")
direct = graph_builder.compile(name="direct")


class QA(TypedDict, total=False):
    question: str
    answer: str


answer_llm = scripted("Paris.")
answer_prompt = ChatPromptTemplate.from_messages([("human", "Answer briefly: {question}")])

qa = StateGraph(QA)
qa.add_node("answer", RunnablePassthrough.assign(answer=answer_prompt | answer_llm | StrOutputParser()))
qa.add_edge(START, "answer")
qa.add_edge("answer", END)
assign = qa.compile(name="assign")


def draft(state: QA) -> QA:
    return {"answer": f"Notes on {state['question']}"}


def publish(state: QA) -> QA:
    publish_post.invoke({"text": state["answer"]})
    return state


writer = StateGraph(QA)
writer.add_node("publisher", RunnableLambda(draft) | RunnableLambda(publish))  # <- lambdas
writer.add_edge(START, "publisher")
writer.add_edge("publisher", END)
lambdas = writer.compile(name="lambdas")


def fetch_context(inputs: dict) -> str:
    return read_web.invoke({"url": inputs["question"]})


context_llm = scripted("It is sunny.")
context_prompt = ChatPromptTemplate.from_messages([("human", "Context: {context}\nQuestion: {question}")])
gather = RunnableParallel(context=RunnableLambda(fetch_context), question=itemgetter("question"))

rag = StateGraph(QA)
rag.add_node("respond", RunnablePassthrough.assign(answer=gather | context_prompt | context_llm | StrOutputParser()))
rag.add_edge(START, "respond")
rag.add_edge("respond", END)
parallel = rag.compile(name="parallel")


# ------------------------------------------------------------------ a module-level chain invoked in the node
def post_summary(text: str) -> str:
    publish_post.invoke({"text": text})
    return text


summary_llm = scripted("A short summary.")
summary_prompt = ChatPromptTemplate.from_messages([("system", "Summarise the thread."), ("placeholder", "{messages}")])
summarize_and_post = summary_prompt | summary_llm | StrOutputParser() | RunnableLambda(post_summary)


def summarize(state: MessagesState):
    summary = summarize_and_post.invoke({"messages": state["messages"]})  # <- module chain
    return {"messages": [AIMessage(content=summary)]}


thread = StateGraph(MessagesState)
thread.add_node("summarize", summarize)
thread.add_edge(START, "summarize")
thread.add_edge("summarize", END)
module_chain = thread.compile(name="module_chain")


def post_reply(text: str) -> str:
    publish_post.invoke({"text": text})
    return text


def reply(state: MessagesState):
    chain = summary_prompt | summary_llm | StrOutputParser() | post_reply
    return {"messages": [AIMessage(content=chain.invoke({"messages": state["messages"]}))]}  # <- local chain


replier = StateGraph(MessagesState)
replier.add_node("reply", reply)
replier.add_edge(START, "reply")
replier.add_edge("reply", END)
local_chain = replier.compile(name="local_chain")


# ------------------------------------------------------------------ what cannot be read
class Moderator(Runnable):  # <- custom runnable
    """A Runnable of the application's own: its `invoke` is not a function the chain names."""

    def invoke(self, input: Any, config: Any = None, **kwargs: Any) -> Any:
        return input


class NotesRetriever(BaseRetriever):  # <- retriever
    def _get_relevant_documents(self, query: str, *, run_manager: Any = None) -> list[Document]:
        return [Document(page_content=f"notes about {query}")]


def confirm(text: str) -> str:
    answer = interrupt({"question": "Post this?", "text": text})  # <- chain pause
    return text if answer == "yes" else ""


unread_llm = scripted("Fine.")
unread_prompt = ChatPromptTemplate.from_messages([("human", "{question}")])


def _qa(step: Runnable, name: str):
    b = StateGraph(QA)
    b.add_node("answer", RunnablePassthrough.assign(answer=step))
    b.add_edge(START, "answer")
    b.add_edge("answer", END)
    return b.compile(name=name)


custom = _qa(unread_prompt | unread_llm | StrOutputParser() | Moderator(), "custom")
retrieval = _qa({"context": itemgetter("question") | NotesRetriever(), "question": itemgetter("question")}
                | unread_prompt | unread_llm | StrOutputParser(), "retrieval")
paused = _qa(unread_prompt | unread_llm | StrOutputParser() | RunnableLambda(confirm), "paused")
