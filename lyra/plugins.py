"""Plug-ins found by name: registered in code, or offered by installed packages' entry points."""

from __future__ import annotations

from collections.abc import Callable
from importlib.metadata import entry_points
from typing import Generic, Protocol, TypeVar, cast

from lyra.errors import LyraError


class Named(Protocol):
    """Anything registered under its name."""

    @property
    def name(self) -> str:
        """The name it is found by."""
        ...


T = TypeVar("T", bound=Named)


class Registry(Generic[T]):
    """Things of one kind by name: an entry-point group's, and those registered here.

    Args:
        group: the entry-point group, e.g. ``lyra.backends``.
        kind: the type each entry point's object must have.
        what: how an error names that type, e.g. ``lyra.backend.BackendSpec``.
        unknown: the error for a name nothing is registered under, given the known names.
    """

    def __init__(
        self,
        group: str,
        kind: type,
        what: str,
        unknown: Callable[[str, list[str]], LyraError],
    ) -> None:
        self.group = group
        self.kind = kind
        self.what = what
        self.unknown = unknown
        self.items: dict[str, T] = {}
        self._installed: tuple[T, ...] | None = None

    def register(self, item: T) -> None:
        """Register ``item`` under its name (a later registration of the name replaces it)."""
        self.items[item.name] = item

    def registered(self) -> dict[str, T]:
        """Everything registered, by name: the installed packages' and those registered here."""
        found = {item.name: item for item in self._entry_points()}
        found.update(self.items)
        return dict(sorted(found.items()))

    def get(self, name: str) -> T:
        """The one registered under ``name``.

        Raises:
            LyraError: nothing is (the ``unknown`` error, listing what is).
        """
        found = self.registered()
        if name not in found:
            raise self.unknown(name, list(found))
        return found[name]

    def _entry_points(self) -> tuple[T, ...]:
        if self._installed is None:
            loaded: list[T] = []
            for point in entry_points(group=self.group):
                value = point.load()
                if not isinstance(value, self.kind):
                    raise LyraError(
                        f"the '{point.name}' entry point of the group {self.group} names "
                        f"{point.value}, which is not a {self.what}"
                    )
                loaded.append(cast(T, value))  # checked against `kind` just above
            self._installed = tuple(loaded)
        return self._installed
