"""What agents run against the apps: the MCP endpoint (`mcp`), the `ralph` command (`cli`) and `make demo`'s
simulated loop (`demo`)."""
