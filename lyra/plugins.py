"""Plug-ins found by name: what installed packages offer through an entry-point group."""

from __future__ import annotations

from importlib.metadata import entry_points
from typing import Any

from lyra.errors import LyraError


def entry_point_objects(group: str, kind: type, what: str) -> list[Any]:
    """Load every entry point of ``group``; each must name an instance of ``kind``.

    Args:
        group: the entry-point group, e.g. ``lyra.backends``.
        kind: the type each entry point's object must have.
        what: how an error names that type, e.g. ``lyra.backend.BackendSpec``.

    Raises:
        LyraError: an entry point names something else; the message says which.
    """
    found = []
    for point in entry_points(group=group):
        value = point.load()
        if not isinstance(value, kind):
            raise LyraError(
                f"the '{point.name}' entry point of the group {group} names "
                f"{point.value}, which is not a {what}"
            )
        found.append(value)
    return found
