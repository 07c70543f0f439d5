"""The task dependency graph: Kahn layering, shared by wave computation and cycle checks."""

from collections.abc import Iterable


def kahn_layers(nodes: Iterable[str], edges: Iterable[tuple[str, str]]) -> tuple[list[list[str]], list[str]]:
    """Layer `nodes` so that every edge (task, depends_on) points to an earlier layer.

    Returns (layers, cyclic): each layer sorted by key; `cyclic` holds the nodes left over because
    they sit on (or behind) a cycle, sorted — empty when the graph is acyclic.
    """
    remaining: dict[str, set[str]] = {node: set() for node in nodes}
    dependents: dict[str, list[str]] = {node: [] for node in remaining}
    for task, depends_on in edges:
        if task in remaining and depends_on in remaining and depends_on not in remaining[task]:  # once each
            remaining[task].add(depends_on)
            dependents[depends_on].append(task)
    layers: list[list[str]] = []
    ready = sorted(node for node, deps in remaining.items() if not deps)
    while ready:
        layers.append(ready)
        next_ready: list[str] = []
        for node in ready:
            del remaining[node]
            for dependent in dependents[node]:
                deps = remaining[dependent]
                deps.discard(node)
                if not deps:
                    next_ready.append(dependent)
        ready = sorted(next_ready)
    return layers, sorted(remaining)
