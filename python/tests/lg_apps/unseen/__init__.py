"""Agents in the shapes issue 28 item 1 found unread, written the way public LangGraph agents
write them (the react-agent and memory-agent templates, research agents): a model made at run
time, tools reached indirectly from a step, a hand-written tool node over plain functions."""
