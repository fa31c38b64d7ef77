"""The LangGraph side of stalwart_export: its exporter (`graph.py`, `export_graph`) and the
guard's adapter (`guard/`, `Guard`). It reads the ground every framework shares (the catalogue
and words, the guard's decisions and history) and never the OpenAI Agents SDK's side
(`stalwart_export.openai_agents`); the ground never imports it at module level. Importing it
imports LangGraph.
"""
