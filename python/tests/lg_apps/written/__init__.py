"""Issue 28 item 2: steps that run a tool with arguments the model wrote (QG017/QG018)."""
