"""Claude Code as a Ralph Site client: its hooks (`ralph hook <event>` posts them) and its Ralph loop."""
