"""Success predicates over a world state, shared by curricula, plans and regression checks.

Each predicate takes the world state a backend reports (a mapping of object names to
:class:`~lyra.embodiment.ObjectState`, with joint values and the environment's own signals
beside it) and gives a :class:`Verdict` whose reason says what is wrong in words a person or an
LLM can act on. This module holds the backend-neutral core: distances, points, joint values,
signals, and ``eventually`` (held at some point of the run rather than at its end); a backend
adds its own (the tabletop's ``stacked``, ``on_top`` ... assume boxes on a table), marking with
:func:`names_objects` and :func:`list_argument` how a curriculum's YAML names their arguments.
Curricula name predicates in YAML (``{stacked: [a, b, c]}``); :func:`from_spec` turns such a
list into one :class:`Check`. Lengths are metres and angles degrees.
"""

from __future__ import annotations

import contextlib
import inspect
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from lyra.embodiment import ObjectState
from lyra.errors import LyraError
from lyra.geometry import Point

State = Mapping[str, ObjectState]


@dataclass(frozen=True)
class Verdict:
    """Whether a predicate holds, and why not."""

    ok: bool
    reason: str = ""

    def __bool__(self) -> bool:
        return self.ok


Predicate = Callable[[State], Verdict]
PASS = Verdict(True)
F = TypeVar("F", bound=Callable[..., Verdict])
# Arguments that are lengths or angles of slack: a negative one could never pass.
_NON_NEGATIVE = frozenset(
    {"tolerance", "xy_tolerance", "tolerance_deg", "margin", "distance", "gap"}
)


def names_objects(*params: str) -> Callable[[F], F]:
    """Declare which parameters of a predicate name objects of the scene.

    A curriculum checks those names against the objects its scene lays out, at load time.
    """

    def mark(function: F) -> F:
        setattr(function, "_lyra_objects", params)  # noqa: B010 (a function's own attribute)
        return function

    return mark


def list_argument(param: str) -> Callable[[F], F]:
    """Declare the parameter that a bare YAML list fills whole, as in ``{stacked: [a, b, c]}``.

    Without it a list gives the predicate's parameters in order (``{next_to: [a, b]}``).
    """

    def mark(function: F) -> F:
        setattr(function, "_lyra_list", param)  # noqa: B010 (a function's own attribute)
        return function

    return mark


class PredicateError(LyraError):
    """A predicate names an object that is not there or is written wrongly."""


def get_object(state: State, name: str) -> ObjectState:
    """The object called ``name``, or a PredicateError that lists the objects there are."""
    if name not in state:
        raise PredicateError(
            f"the predicate names '{name}', which is not in the scene "
            f"(objects: {', '.join(sorted(state))})"
        )
    return state[name]


def fmt_mm(value: float) -> str:
    """A length in metres as millimetres, the way verdicts quote them."""
    return f"{value * 1000:.1f} mm"


@names_objects("name", "other")
def within_distance(state: State, name: str, other: str, distance: float) -> Verdict:
    """The centres of ``name`` and ``other`` are at most ``distance`` apart horizontally."""
    a, b = get_object(state, name).pose.position, get_object(state, other).pose.position
    actual = math.hypot(a.x - b.x, a.y - b.y)
    if actual > distance:
        return Verdict(
            False, f"'{name}' is {fmt_mm(actual)} from '{other}', more than {fmt_mm(distance)}"
        )
    return PASS


@names_objects("name", "reference")
def offset(
    state: State, name: str, reference: str, dx: float, dy: float, tolerance: float = 0.002
) -> Verdict:
    """``name``'s centre sits (dx, dy) from ``reference``'s centre, along the world x and y axes."""
    a, b = get_object(state, name).pose.position, get_object(state, reference).pose.position
    off_x, off_y = a.x - b.x - dx, a.y - b.y - dy
    if math.hypot(off_x, off_y) > tolerance:
        return Verdict(
            False,
            f"'{name}' is offset ({fmt_mm(a.x - b.x)}, {fmt_mm(a.y - b.y)}) from '{reference}', "
            f"not ({fmt_mm(dx)}, {fmt_mm(dy)})",
        )
    return PASS


@names_objects("name")
def at_point(state: State, name: str, point: Sequence[float], tolerance: float = 0.01) -> Verdict:
    """``name``'s centre is within ``tolerance`` of ``point`` ([x, y, z]), in three dimensions."""
    if len(point) != 3:
        raise PredicateError(f"at_point needs the point as [x, y, z], got {point!r}")
    spot = Point(*(float(v) for v in point))
    where = get_object(state, name).pose.position
    away = where.distance_to(spot)
    if away > tolerance:
        return Verdict(
            False,
            f"'{name}' is at ({where.x:.3f}, {where.y:.3f}, {where.z:.3f}), {fmt_mm(away)} from "
            f"({spot.x:.3f}, {spot.y:.3f}, {spot.z:.3f}) (at most {fmt_mm(tolerance)})",
        )
    return PASS


def joint_value(
    state: State, joint: str, at_least: float | None = None, at_most: float | None = None
) -> Verdict:
    """An articulated object's joint (a door's hinge, a drawer's slide) lies in a range."""
    if at_least is None and at_most is None:
        raise PredicateError("joint_value needs at_least, at_most or both")
    joints: Mapping[str, float] = getattr(state, "joints", {})
    if joint not in joints:
        raise PredicateError(
            f"the predicate names the joint '{joint}', which this scene does not have "
            f"(joints: {', '.join(sorted(joints)) or 'none'})"
        )
    value = joints[joint]
    if at_least is not None and value < at_least:
        return Verdict(False, f"the joint '{joint}' is at {value:.3f}, below {at_least:.3f}")
    if at_most is not None and value > at_most:
        return Verdict(False, f"the joint '{joint}' is at {value:.3f}, above {at_most:.3f}")
    return PASS


def signal(state: State, name: str, at_least: float = 1.0) -> Verdict:
    """The environment's own signal ``name`` (for example its ``success``) is at least a value."""
    signals: Mapping[str, float] = getattr(state, "signals", {})
    if name not in signals:
        raise PredicateError(
            f"the backend gives no signal '{name}' "
            f"(signals: {', '.join(sorted(signals)) or 'none'})"
        )
    if signals[name] < at_least:
        return Verdict(False, f"the environment's '{name}' is {signals[name]:g}, not {at_least:g}")
    return PASS


CORE: dict[str, Callable[..., Verdict]] = {
    "within_distance": within_distance,
    "offset": offset,
    "at_point": at_point,
    "joint_value": joint_value,
    "signal": signal,
}
# Not a function over one state: it watches the whole run (see Check.observe).
EVENTUALLY = "eventually"


class Check:
    """Predicates that must all hold; ``eventually`` parts remember what the run went through.

    The runner calls :meth:`observe` after each primitive call when :attr:`watches` is true;
    calling the check judges the final state. A check belongs to one run: make a new one (with
    :func:`from_spec`) for the next.
    """

    def __init__(
        self, parts: list[Predicate], watchers: list[_Eventually], objects: frozenset[str]
    ) -> None:
        self.parts = parts
        self.watchers = watchers
        self.objects = objects

    @property
    def watches(self) -> bool:
        """Whether a part holds "at any step" and so needs to see the states along the way."""
        return bool(self.watchers)

    def observe(self, state: State) -> None:
        """Let the ``eventually`` parts see a state of the run."""
        for watcher in self.watchers:
            watcher.observe(state)

    def __call__(self, state: State) -> Verdict:
        """Judge a state (the final one): the first part that fails, or a pass."""
        for part in self.parts:
            verdict = part(state)
            if not verdict:
                return verdict
        return PASS


class _Eventually:
    """Holds once its predicates all held in one observed state, whatever came after."""

    def __init__(self, inner: Check) -> None:
        self.inner = inner
        self.held = False

    def observe(self, state: State) -> None:
        self.inner.observe(state)
        if not self.held:
            # A predicate that cannot be judged is reported by the final judgement.
            with contextlib.suppress(PredicateError):
                self.held = self.inner(state).ok

    def __call__(self, state: State) -> Verdict:
        self.observe(state)
        if self.held:
            return PASS
        return Verdict(
            False, f"it did not hold at any point of the run: {self.inner(state).reason}"
        )


def _bind(
    name: str, args: Any, functions: Mapping[str, Callable[..., Verdict]]
) -> tuple[Predicate, list[_Eventually], set[str]]:
    if name == EVENTUALLY:
        inner = from_spec(args, functions)
        watcher = _Eventually(inner)
        return watcher, [watcher], set(inner.objects)
    function = functions.get(name)
    if function is None:
        known = sorted([*functions, EVENTUALLY])
        raise PredicateError(f"unknown predicate '{name}': use one of {', '.join(known)}")
    params = list(inspect.signature(function).parameters)[1:]
    whole = getattr(function, "_lyra_list", None)
    if isinstance(args, Mapping):
        kwargs = dict(args)
    elif isinstance(args, list) and whole is not None:
        kwargs = {whole: args}
    elif isinstance(args, list):
        kwargs = dict(zip(params, args, strict=False))
    else:
        kwargs = {params[0]: args}
    try:
        inspect.signature(function).bind(None, **kwargs)
    except TypeError as error:
        raise PredicateError(f"predicate '{name}': {error}; it takes {', '.join(params)}") from None
    for param, value in kwargs.items():
        if param in _NON_NEGATIVE and isinstance(value, int | float) and value < 0:
            raise PredicateError(
                f"predicate '{name}': {param} must be 0 or more, got {value}: a negative one "
                "can never be met"
            )
    objects: set[str] = set()
    for param in getattr(function, "_lyra_objects", ()):
        value = kwargs.get(param)
        objects.update(
            [value] if isinstance(value, str) else [v for v in value or [] if isinstance(v, str)]
        )
    return (lambda state: function(state, **kwargs)), [], objects


def from_spec(
    spec: Sequence[Mapping[str, Any]] | Mapping[str, Any],
    functions: Mapping[str, Callable[..., Verdict]] | None = None,
) -> Check:
    """Build one check, true when all listed predicates hold, from its YAML form.

    Example: ``[{stacked: [red_block, blue_block]}, {eventually: [{signal: {name: success}}]}]``.

    Args:
        spec: the list of ``name: arguments`` pairs (or one pair).
        functions: the predicates a name may refer to: a backend's own and the core ones
            (default: the core ones alone).

    Raises:
        PredicateError: a name is unknown or its arguments do not fit.
    """
    functions = {**CORE, **(functions or {})}
    items = [spec] if isinstance(spec, Mapping) else list(spec)
    parts: list[Predicate] = []
    watchers: list[_Eventually] = []
    objects: set[str] = set()
    for item in items:
        if not isinstance(item, Mapping) or len(item) != 1:
            raise PredicateError(f"each predicate is one `name: arguments` pair, got {item!r}")
        ((name, args),) = item.items()
        part, watching, named = _bind(str(name), args, functions)
        parts.append(part)
        watchers.extend(watching)
        objects |= named
    return Check(parts, watchers, frozenset(objects))
