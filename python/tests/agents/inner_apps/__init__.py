"""Apps that build an agent inside a node function (issue 28 item 1, issue 29 item 3), written the
way public multi-agent examples write them."""
