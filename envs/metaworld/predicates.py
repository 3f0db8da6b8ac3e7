"""MetaWorld's predicates: lyra's core ones (joints, signals, points) say all its tasks need."""

from collections.abc import Callable

from lyra.predicates import Verdict

PREDICATES: dict[str, Callable[..., Verdict]] = {}
