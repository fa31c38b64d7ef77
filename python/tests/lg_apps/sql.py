"""A SQL agent in the shape of LangGraph's SQL tutorial: a toolkit hands out a list of tools, and
the graph's steps take one of them by name (`next(tool for tool in tools if tool.name == ...)`),
both at module level and inside a step."""

from __future__ import annotations

from typing import Literal

from langchain_core.messages import AIMessage
from langchain_core.tools import tool
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode

from ._fake import call, scripted


def make_db_tools() -> list:
    """What a database toolkit's get_tools() returns: four tools, one of them destructive."""

    @tool("sql_db_list_tables")
    def list_tables_tool(tool_input: str = "") -> str:
        """List the tables of the database."""
        return "albums, artists, tracks"

    @tool("sql_db_schema")
    def schema_tool(table_names: str) -> str:
        """The schema of the given tables."""
        return f"CREATE TABLE {table_names} (id INTEGER)"

    @tool("sql_db_query")
    def query_tool(query: str) -> str:
        """Run a SQL query and return the rows."""
        return "[(1,)]"

    @tool("sql_db_drop_table")
    def drop_tool(table: str) -> str:
        """Drop a table."""
        return f"dropped {table}"

    return [list_tables_tool, schema_tool, query_tool, drop_tool]


tools = make_db_tools()
get_schema_tool = next(tool for tool in tools if tool.name == "sql_db_schema")
run_query_tool = next(tool for tool in tools if tool.name == "sql_db_query")
get_schema_node = ToolNode([get_schema_tool], name="get_schema")
run_query_node = ToolNode([run_query_tool], name="run_query")

llm = scripted(
    [call("sql_db_schema", {"table_names": "albums"})],
    [call("sql_db_query", {"query": "SELECT COUNT(*) FROM albums"})],
    "There is one album.",
)


def list_tables(state: MessagesState):
    tool_call = {"name": "sql_db_list_tables", "args": {}, "id": "abc123", "type": "tool_call"}
    tool_call_message = AIMessage(content="", tool_calls=[tool_call])
    list_tables_tool = next(tool for tool in tools if tool.name == "sql_db_list_tables")
    tool_message = list_tables_tool.invoke(tool_call)
    response = AIMessage(f"Available tables: {tool_message.content}")
    return {"messages": [tool_call_message, tool_message, response]}


def call_get_schema(state: MessagesState):
    llm_with_tools = llm.bind_tools([get_schema_tool], tool_choice="any")
    response = llm_with_tools.invoke(state["messages"])
    return {"messages": [response]}


def generate_query(state: MessagesState):
    llm_with_tools = llm.bind_tools([run_query_tool])
    response = llm_with_tools.invoke(state["messages"])
    return {"messages": [response]}


def should_continue(state: MessagesState) -> Literal[END, "run_query"]:
    last_message = state["messages"][-1]
    if not last_message.tool_calls:
        return END
    return "run_query"


builder = StateGraph(MessagesState)
builder.add_node(list_tables)
builder.add_node(call_get_schema)
builder.add_node(get_schema_node, "get_schema")
builder.add_node(generate_query)
builder.add_node(run_query_node, "run_query")
builder.add_edge(START, "list_tables")
builder.add_edge("list_tables", "call_get_schema")
builder.add_edge("call_get_schema", "get_schema")
builder.add_edge("get_schema", "generate_query")
builder.add_conditional_edges("generate_query", should_continue)
builder.add_edge("run_query", "generate_query")

graph = builder.compile()

INPUT = {"messages": [("user", "How many albums are there?")]}
RESUMES: list = []
WORDS = {"sql_db_list_tables": {"kind": "read"}, "sql_db_schema": {"kind": "read"},
         "sql_db_query": {"kind": "read", "args": {"query": {"role": "sql"}}}}


def choose_by_variable(name: str):
    """A step that takes a tool by a name it is given: the exporter cannot narrow it."""

    def run_named(state: MessagesState):
        picked = next(t for t in tools if t.name == name)
        return {"messages": [AIMessage(str(picked.invoke({})))]}

    b = StateGraph(MessagesState)
    b.add_node("run_named", run_named)
    b.add_edge(START, "run_named")
    return b.compile()
