"""MCP: Ralph Site's tools for coding agents, at `/mcp/` (Streamable HTTP, JSON answers, stateless).

`protocol` is the JSON-RPC layer (both the handshake era and 2026-07-28), `registry` what a tool is and
how one call runs, `tools` and `orchestration` the tool table (the agents' tools, the orchestrator's),
`schemas` the pieces of their output schemas, `toolsets` the role sets `?tools=` asks for, `views` the
Django view that authenticates the caller as the REST API does. The server side is a small view of our own
rather than the official SDK's server: the SDK's Streamable HTTP server is an ASGI (Starlette) application
built around sessions, SSE streams and an event loop, which a synchronous WSGI worker would have to run in
a thread per request; a tools-only, stateless, JSON-only server is a few hundred lines, answers in the
worker's own thread with the API's authentication, and costs one request's time, not an event loop's. The
tests drive it with the SDK's client.
"""
