"""Small OpenAI Agents SDK applications written as the SDK's own examples write them (issue 30
item 4), one pattern a module; `test_openai_agents.py` exports, verifies and runs each. Importing
them needs `openai-agents` (the test module skips, saying so, without it). The model is given at
run time (`RunConfig(model=ScriptedModel(...))`), as the SDK's tests do."""
