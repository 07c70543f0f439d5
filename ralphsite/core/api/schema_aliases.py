"""The OpenAPI schema lists each enum's input aliases (`ralphsite.core.choices`) as `x-aliases`."""

from typing import Any

from ralphsite.core.choices import choice_aliases_listed


def postprocess_schema_aliases(result: dict[str, Any], generator: Any, **kwargs: Any) -> dict[str, Any]:
    """A drf-spectacular postprocessing hook (after the enum components are built): every enum of
    strings, component or inline parameter, gets `x-aliases` (alias → value), accepted on input only."""
    pending: list[Any] = [result]
    while pending:
        node = pending.pop()
        if isinstance(node, dict):
            values = node.get("enum")
            if isinstance(values, list) and values and all(isinstance(value, str) for value in values):
                aliases = choice_aliases_listed(values)
                if aliases:
                    node["x-aliases"] = aliases
            pending.extend(node.values())
        elif isinstance(node, list):
            pending.extend(node)
    return result
