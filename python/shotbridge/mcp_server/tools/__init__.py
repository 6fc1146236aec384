"""One module per MCP tool; each has ``register(server, state)``."""
