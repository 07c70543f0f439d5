"""The `ralph` command: a thin client of the REST API for shell-driven loops.

It imports neither Django nor anything of the server (standard library only), so it starts in a few
tens of milliseconds and runs on machines without the server installed alongside.
"""
