"""The tabletop's predicates: boxes lying on a table whose top is z = 0.

Each takes the world state and gives a :class:`~lyra.predicates.Verdict` whose reason says what
is wrong in words a person or an LLM can act on. Footprint geometry assumes boxes lying flat,
the shape of every tabletop object; lengths are metres and angles degrees.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Mapping, Sequence
from typing import TypeVar

from lyra.embodiment import ObjectState
from lyra.geometry import Point
from lyra.predicates import (
    PASS,
    PredicateError,
    State,
    Verdict,
    fmt_mm,
    get_object,
    list_argument,
    names_objects,
)


def _bottom(obj: ObjectState) -> float:
    return obj.pose.position.z - _height(obj) / 2


def _top(obj: ObjectState) -> float:
    return obj.pose.position.z + _height(obj) / 2


def _height(obj: ObjectState) -> float:
    rotation = obj.pose.rotation_matrix()
    return float(
        sum(abs(rotation[2, i]) * e for i, e in enumerate((obj.size.x, obj.size.y, obj.size.z)))
    )


def _in_frame(obj: ObjectState, point: Point) -> tuple[float, float]:
    """``point`` in ``obj``'s horizontal frame (x along its own x axis)."""
    dx, dy = point.x - obj.pose.position.x, point.y - obj.pose.position.y
    c, s = math.cos(obj.pose.yaw), math.sin(obj.pose.yaw)
    return c * dx + s * dy, -s * dx + c * dy


def _half_extents_in(obj: ObjectState, frame: ObjectState) -> tuple[float, float]:
    """Half extents of ``obj``'s footprint along the axes of ``frame`` (a bounding rectangle)."""
    return _half_extents_along(obj, frame.pose.yaw)


def _half_extents_along(obj: ObjectState, yaw: float) -> tuple[float, float]:
    """Half extents of ``obj``'s footprint along axes turned by ``yaw`` (0: the world's)."""
    turn = obj.pose.yaw - yaw
    c, s = abs(math.cos(turn)), abs(math.sin(turn))
    return (
        0.5 * (c * obj.size.x + s * obj.size.y),
        0.5 * (s * obj.size.x + c * obj.size.y),
    )


@names_objects("upper", "lower")
def on_top(state: State, upper: str, lower: str, tolerance: float = 0.005) -> Verdict:
    """``upper`` rests on ``lower``: its bottom at ``lower``'s top, their footprints overlapping."""
    a, b = get_object(state, upper), get_object(state, lower)
    u, v = _in_frame(b, a.pose.position)
    half = _half_extents_in(a, b)
    # A block bridging two others rests on both though its centre is over neither: ask for a
    # real overlap of the footprints (5 mm each way) rather than a centre over ``lower``.
    overlap = min(
        half[0] + b.size.x / 2 - abs(u),
        half[1] + b.size.y / 2 - abs(v),
    )
    if overlap < 0.005:
        return Verdict(False, f"'{upper}' is not over '{lower}'")
    gap = _bottom(a) - _top(b)
    if abs(gap) > tolerance:
        where = "above" if gap > 0 else "into"
        return Verdict(False, f"'{upper}' is {fmt_mm(abs(gap))} {where} the top of '{lower}'")
    return PASS


@names_objects("names")
@list_argument("names")
def stacked(
    state: State, names: Sequence[str], xy_tolerance: float = 0.01, tolerance: float = 0.005
) -> Verdict:
    """``names`` form a column, bottom first: the first on the table, each centred on the last."""
    if len(names) < 2:
        raise PredicateError("stacked needs at least two objects, bottom first")
    bottom = get_object(state, names[0])
    if abs(_bottom(bottom)) > tolerance:
        return Verdict(False, f"the bottom object '{names[0]}' is not on the table")
    for lower, upper in itertools.pairwise(names):
        verdict = on_top(state, upper, lower, tolerance)
        if not verdict:
            return verdict
        offset = get_object(state, upper).pose.position - get_object(state, lower).pose.position
        off = math.hypot(offset.x, offset.y)
        if off > xy_tolerance:
            return Verdict(
                False,
                f"'{upper}' is {fmt_mm(off)} off the centre of '{lower}' "
                f"(at most {fmt_mm(xy_tolerance)})",
            )
    return PASS


@names_objects("name")
def on_table(state: State, name: str, tolerance: float = 0.003) -> Verdict:
    """``name`` rests directly on the table (the surface at z = 0)."""
    bottom = _bottom(get_object(state, name))
    if abs(bottom) > tolerance:
        return Verdict(False, f"'{name}' is {fmt_mm(bottom)} above the table")
    return PASS


def _gap(a: ObjectState, b: ObjectState) -> float:
    """Clearance between two footprints, measured in ``b``'s frame (negative: they overlap)."""
    u, v = _in_frame(b, a.pose.position)
    ha = _half_extents_in(a, b)
    return max(abs(u) - ha[0] - b.size.x / 2, abs(v) - ha[1] - b.size.y / 2)


@names_objects("a", "b")
def next_to(state: State, a: str, b: str, gap: float = 0.0, tolerance: float = 0.004) -> Verdict:
    """``a`` stands beside ``b`` at the same level, not overlapping, with ``gap`` between faces."""
    first, second = get_object(state, a), get_object(state, b)
    if abs(_bottom(first) - _bottom(second)) > tolerance:
        return Verdict(False, f"'{a}' and '{b}' are not at the same level")
    actual = _gap(first, second)
    if actual < -1e-3:
        return Verdict(False, f"'{a}' overlaps '{b}' by {fmt_mm(-actual)}")
    if abs(actual - gap) > tolerance:
        return Verdict(
            False, f"the gap between '{a}' and '{b}' is {fmt_mm(actual)}, not {fmt_mm(gap)}"
        )
    return PASS


@names_objects("name", "reference")
def rotated_by(
    state: State,
    name: str,
    degrees: float,
    reference: str | None = None,
    tolerance_deg: float = 3.0,
) -> Verdict:
    """``name`` is turned by ``degrees`` about the vertical, from world x or from ``reference``.

    A box looks the same after a half turn (a square one after a quarter turn), so yaws are
    compared modulo that symmetry.
    """
    obj = get_object(state, name)
    base = get_object(state, reference).pose.yaw if reference else 0.0
    period = math.pi / 2 if abs(obj.size.x - obj.size.y) < 1e-6 else math.pi
    error = (obj.pose.yaw - base - math.radians(degrees)) % period
    error = min(error, period - error)
    if math.degrees(error) > tolerance_deg:
        return Verdict(
            False, f"'{name}' is {math.degrees(error):.1f} degrees off the asked rotation"
        )
    return PASS


@names_objects("a", "b")
def aligned(state: State, a: str, b: str, how: str = "edges", tolerance: float = 0.004) -> Verdict:
    """``a`` lines up with ``b``, in one of three ways.

    ``edges``: parallel, touching, with a pair of edges flush; ``corners``: parallel and
    touching corner to corner; ``centres``: centred on one of ``b``'s axes.
    """
    if how not in ("edges", "corners", "centres"):
        raise PredicateError(f"aligned takes how = edges, corners or centres, not '{how}'")
    first, second = get_object(state, a), get_object(state, b)
    parallel = rotated_by(
        state, a, 0.0, reference=b, tolerance_deg=3.0 if how != "centres" else 360
    )
    if not parallel and how != "centres":
        return Verdict(False, f"'{a}' is not parallel to '{b}'")
    u, v = _in_frame(second, first.pose.position)
    ha = _half_extents_in(first, second)
    hb = (second.size.x / 2, second.size.y / 2)
    if how == "centres":
        off = min(abs(u), abs(v))
        if off > tolerance:
            return Verdict(False, f"'{a}' is {fmt_mm(off)} off the centre line of '{b}'")
        return PASS
    # Flush edges: along one axis the faces meet or the edges line up; corners: both axes meet.
    touch = [abs(abs(d) - (h + k)) for d, h, k in zip((u, v), ha, hb, strict=True)]
    flush = [
        min(abs((d - h) - (-k)), abs((d + h) - k)) for d, h, k in zip((u, v), ha, hb, strict=True)
    ]
    if how == "corners":
        ok = max(touch) <= tolerance
        return PASS if ok else Verdict(False, f"'{a}' does not touch '{b}' corner to corner")
    ok = (touch[0] <= tolerance and flush[1] <= tolerance) or (
        touch[1] <= tolerance and flush[0] <= tolerance
    )
    return PASS if ok else Verdict(False, f"no edge of '{a}' is flush with an edge of '{b}'")


@names_objects("name", "zone")
def inside(state: State, name: str, zone: str, margin: float = 0.0) -> Verdict:
    """``name``'s footprint lies within ``zone``'s (a zone, a bowl or any object)."""
    obj, area = get_object(state, name), get_object(state, zone)
    u, v = _in_frame(area, obj.pose.position)
    ha = _half_extents_in(obj, area)
    over = max(abs(u) + ha[0] - area.size.x / 2, abs(v) + ha[1] - area.size.y / 2) + margin
    if over > 1e-3:
        return Verdict(False, f"'{name}' sticks {fmt_mm(over)} out of '{zone}'")
    return PASS


@names_objects("names")
def fills(
    state: State,
    names: Sequence[str],
    points: Sequence[Sequence[float]],
    yaw_deg: float | None = None,
    tolerance: float = 0.006,
) -> Verdict:
    """``names`` occupy ``points`` (x, y, z of a centre), one each, in any order.

    The order-free form of "these parts make this structure": a wall of blocks, a layer of
    planks, a ring of blocks. With ``yaw_deg``, every one of them is also turned by that much.
    """
    if len(names) != len(points):
        raise PredicateError(
            f"fills needs as many names as points, got {len(names)} and {len(points)}"
        )
    if len(set(names)) != len(names):
        raise PredicateError(f"fills names an object twice: {', '.join(names)}")
    if any(len(point) != 3 for point in points):
        raise PredicateError("fills needs each point as [x, y, z], the centre of a part")
    free = {name: get_object(state, name).pose.position for name in names}
    for x, y, z in points:
        spot = Point(x, y, z)
        near = [n for n, p in free.items() if p.distance_to(spot) <= tolerance]
        if not near:
            closest = min(free, key=lambda n: free[n].distance_to(spot))
            where = free[closest]
            return Verdict(
                False,
                f"nothing of {', '.join(names)} is at ({x:.3f}, {y:.3f}, {z:.3f}); the nearest "
                f"free one, '{closest}', is at ({where.x:.3f}, {where.y:.3f}, {where.z:.3f}), "
                f"{fmt_mm(where.distance_to(spot))} away",
            )
        del free[min(near, key=lambda n: free[n].distance_to(spot))]
    if yaw_deg is not None:
        for name in names:
            verdict = rotated_by(state, name, yaw_deg)
            if not verdict:
                return verdict
    return PASS


def area_clear(state: State, x: Sequence[float], y: Sequence[float]) -> Verdict:
    """No object's footprint reaches into the table rectangle ``x`` by ``y`` (zones aside)."""
    for axis, span in (("x", x), ("y", y)):
        if len(span) != 2 or span[0] >= span[1]:
            raise PredicateError(f"area_clear needs {axis} as [low, high], got {span!r}")
    for name, obj in sorted(state.items()):
        if obj.kind == "zone":
            continue
        half_x, half_y = _half_extents_along(obj, 0.0)
        centre = obj.pose.position
        if (
            centre.x - half_x < x[1]
            and centre.x + half_x > x[0]
            and centre.y - half_y < y[1]
            and centre.y + half_y > y[0]
        ):
            return Verdict(
                False,
                f"'{name}' at ({centre.x:.3f}, {centre.y:.3f}) reaches into the area "
                f"x [{x[0]:.2f}, {x[1]:.2f}], y [{y[0]:.2f}, {y[1]:.2f}] that should be clear",
            )
    return PASS


# The robot's point of view, as every tabletop prompt states it: x points away from the robot,
# y to its left. Each side: its direction (x, y), how an instruction says it, what it means.
SIDES: dict[str, tuple[float, float, str, str]] = {
    "left": (0.0, 1.0, "to the left of", "+y, the robot's left"),
    "right": (0.0, -1.0, "to the right of", "-y, the robot's right"),
    "front": (-1.0, 0.0, "in front of", "-x, nearer the robot"),
    "behind": (1.0, 0.0, "behind", "+x, farther from the robot"),
}
K = TypeVar("K", str, int)
# Distances this close read as equal to a person looking at the table: "the bowl closest to
# it" may then be either one.
TIE = 0.01


@names_objects("name", "reference")
def side_of(
    state: State,
    name: str,
    reference: str,
    side: str,
    distance: float = 0.1,
    tolerance: float = 0.004,
) -> Verdict:
    """``name`` stands on one side of ``reference``, as the robot sees them, near it.

    ``side`` is ``left`` (+y), ``right`` (-y), ``front`` (nearer the robot, -x) or ``behind``
    (+x). ``name`` rests at ``reference``'s level, clear of that face of it by at most
    ``distance``, with its centre within ``reference``'s width across that side: beside the
    face, not off a corner.
    """
    if side not in SIDES:
        raise PredicateError(f"side_of takes side = {', '.join(SIDES)}, not '{side}'")
    ux, uy, phrase, meaning = SIDES[side]
    a, b = get_object(state, name), get_object(state, reference)
    if abs(_bottom(a) - _bottom(b)) > tolerance:
        return Verdict(False, f"'{name}' and '{reference}' are not at the same level")
    d = a.pose.position - b.pose.position
    along, across = d.x * ux + d.y * uy, d.y * ux - d.x * uy
    axis = 0 if ux else 1
    half_a, half_b = _half_extents_along(a, 0.0), _half_extents_along(b, 0.0)
    gap = along - half_a[axis] - half_b[axis]
    if gap < -1e-3:
        return Verdict(
            False,
            f"'{name}' is not {phrase} '{reference}' ({meaning}): it is {fmt_mm(-gap)} short "
            "of clearing that side of it",
        )
    if gap > distance:
        return Verdict(
            False,
            f"'{name}' is {phrase} '{reference}' but {fmt_mm(gap)} from it, more than "
            f"{fmt_mm(distance)}",
        )
    if abs(across) > half_b[1 - axis]:
        return Verdict(
            False,
            f"'{name}' is {fmt_mm(abs(across))} off the centre line of '{reference}', beyond "
            f"its half-width of {fmt_mm(half_b[1 - axis])}: it is off a corner, not {phrase} it",
        )
    return PASS


@names_objects("name", "a", "b")
def between(state: State, name: str, a: str, b: str, tolerance: float = 0.02) -> Verdict:
    """``name``'s centre lies on the line from ``a``'s centre to ``b``'s, between them.

    Horizontally within ``tolerance`` of that line, its footprint clear of both.
    """
    where = get_object(state, name)
    start, end = get_object(state, a).pose.position, get_object(state, b).pose.position
    dx, dy = end.x - start.x, end.y - start.y
    length = math.hypot(dx, dy)
    if length < 1e-6:
        return Verdict(False, f"'{a}' and '{b}' stand at one spot: nothing fits between them")
    p = where.pose.position
    along = ((p.x - start.x) * dx + (p.y - start.y) * dy) / length
    if along <= 0 or along >= length:
        beyond = a if along <= 0 else b
        return Verdict(False, f"'{name}' is not between '{a}' and '{b}': it lies beyond '{beyond}'")
    off = abs((p.y - start.y) * dx - (p.x - start.x) * dy) / length
    if off > tolerance:
        return Verdict(
            False,
            f"'{name}' is {fmt_mm(off)} off the line from '{a}' to '{b}' "
            f"(at most {fmt_mm(tolerance)})",
        )
    for other in (a, b):
        overlap = -_gap(where, get_object(state, other))
        if overlap > 1e-3:
            return Verdict(False, f"'{name}' overlaps '{other}' by {fmt_mm(overlap)}")
    return PASS


def _point_of(state: State, reference: str | Sequence[float]) -> Point:
    """An object's centre, or a point given as [x, y, z]."""
    if isinstance(reference, str):
        return get_object(state, reference).pose.position
    if len(reference) != 3:
        raise PredicateError(f"a reference point is [x, y, z], got {reference!r}")
    return Point(*(float(v) for v in reference))


def _ranked(distances: Mapping[K, float], farthest: bool) -> tuple[K, list[K]]:
    """The closest (farthest) key, and every key within :data:`TIE` of it."""
    sign = -1.0 if farthest else 1.0
    best = min(distances, key=lambda key: (sign * distances[key], key))
    return best, [k for k, d in distances.items() if abs(d - distances[best]) <= TIE]


def _horizontal(p: Point, q: Point) -> float:
    return math.hypot(p.x - q.x, p.y - q.y)


@names_objects("name", "reference")
def inside_closest(
    state: State,
    name: str,
    reference: str | Sequence[float],
    kind: str = "bowl",
    farthest: bool = False,
) -> Verdict:
    """``name`` lies inside the object of ``kind`` closest to ``reference`` (or farthest from it).

    ``reference`` is an object's name or a point [x, y, z]; distances are horizontal, centre
    to centre. Candidates within 1 cm of the closest distance count as equally close.
    """
    origin = _point_of(state, reference)
    distances = {
        other: _horizontal(obj.pose.position, origin)
        for other, obj in state.items()
        if obj.kind == kind and other not in (name, reference)
    }
    if not distances:
        raise PredicateError(f"inside_closest: the scene has no {kind} besides '{name}'")
    best, equal = _ranked(distances, farthest)
    if any(inside(state, name, candidate) for candidate in equal):
        return PASS
    which = "farthest from" if farthest else "closest to"
    return Verdict(
        False,
        f"'{name}' is not inside '{best}', the {kind} {which} {_named(reference)} "
        f"({fmt_mm(distances[best])} away): {inside(state, name, best).reason}",
    )


@names_objects("name", "reference")
def at_closest(
    state: State,
    name: str,
    points: Sequence[Sequence[float]],
    reference: str | Sequence[float],
    farthest: bool = False,
    tolerance: float = 0.04,
) -> Verdict:
    """``name``'s centre is at the one of ``points`` closest to ``reference`` (or farthest).

    ``points`` are [x, y, z] spots (the corners of a work area); ``reference`` is an object's
    name or a point. Distances are horizontal: ``name`` counts as there within ``tolerance``.
    Spots within 1 cm of the closest distance count as equally close.
    """
    if not points or any(len(point) != 3 for point in points):
        raise PredicateError("at_closest needs points as a list of [x, y, z]")
    origin = _point_of(state, reference)
    spots = [Point(*(float(v) for v in point)) for point in points]
    best, equal = _ranked({i: _horizontal(p, origin) for i, p in enumerate(spots)}, farthest)
    where = get_object(state, name).pose.position
    if any(_horizontal(where, spots[i]) <= tolerance for i in equal):
        return PASS
    which = "farthest from" if farthest else "closest to"
    spot = spots[best]
    return Verdict(
        False,
        f"'{name}' is at ({where.x:.3f}, {where.y:.3f}), {fmt_mm(_horizontal(where, spot))} from "
        f"({spot.x:.3f}, {spot.y:.3f}), the spot {which} {_named(reference)} (at most "
        f"{fmt_mm(tolerance)})",
    )


def _named(reference: str | Sequence[float]) -> str:
    if isinstance(reference, str):
        return f"'{reference}'"
    return "(" + ", ".join(f"{float(v):.3f}" for v in reference) + ")"


PREDICATES: dict[str, Callable[..., Verdict]] = {
    "stacked": stacked,
    "on_top": on_top,
    "on_table": on_table,
    "next_to": next_to,
    "aligned": aligned,
    "inside": inside,
    "rotated_by": rotated_by,
    "fills": fills,
    "area_clear": area_clear,
    "side_of": side_of,
    "between": between,
    "inside_closest": inside_closest,
    "at_closest": at_closest,
}
