"""Small agents in the style of public LangGraph code (issue 16), one pattern a module.

Each module builds a compiled `graph` with a scripted fake chat model, and gives `INPUT` (what a
run starts with) and `RESUMES` (answers to its pauses, as helpers.run_steps takes them). They are
written here in the shape the tutorials and public repositories use (LangGraph's customer-support
and SQL tutorials, the e-mail assistant, MCP tools), not copied. The exporter's tests import them
as `lg_apps.<module>`, and the CLI tests export them as `lg_apps.<module>:graph`.
"""
