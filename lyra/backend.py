"""The boundary between lyra and a simulator or a robot: the Backend protocol and its registry.

A backend is found by name, the way Gymnasium's ``make`` finds an environment: lyra never
imports one. Each registers a :class:`BackendSpec` (in code with :func:`register`, or from a
package through the ``lyra.backends`` entry-point group), which names, as ``module:attribute``
strings, the pieces that are loaded only when needed: the class to build, its scene spec type,
its predicates, its prompt pack and its benchmark tasks. What the spec says directly (name,
primitives) is what lyra needs without loading anything: to validate a curriculum, to tell which
backends have a primitive, to filter retrieval.

A backend is a simulator or a robot, and its spec says which. A simulator lays a scene out from
a seed, can be nudged, and keeps simulated time; a robot does none of these: its time is real
time. A backend that can be either (the ``fr3``: franky-sim, or the arm at an address) registers
the simulator's spec; an instance connected to the robot carries ``BackendSpec.for_robot()``.
"""

from __future__ import annotations

import difflib
import importlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import yaml
from pydantic import BaseModel, ValidationError

from lyra.errors import LyraError, unknown_name
from lyra.plugins import Registry

if TYPE_CHECKING:
    import numpy as np

    from lyra.embodiment import Embodiment, WorldState
    from lyra.predicates import Verdict
    from lyra.prompts import PromptPack

ENTRY_POINT_GROUP = "lyra.backends"
# The backend that a scene file or a stored example naming none is for: the tabletop, lyra's only
# backend when such files were first written, so that they read as they always did.
DEFAULT_BACKEND = "ravens"

# A regression snapshot: what a backend needs to tell later whether a run ended the same way
# (the tabletop: every object's pose as x, y, z, qx, qy, qz, qw). Plain numbers, kept in YAML.
Snapshot = dict[str, list[float]]


class UnknownBackendError(LyraError):
    """No backend is registered under a name."""

    def __init__(self, name: str, known: list[str]) -> None:
        self.name = name
        super().__init__(
            unknown_name("no backend named", "backends", name, known)
            + " (a backend package registers itself in the 'lyra.backends' entry-point group)"
        )


def _load(reference: str) -> Any:
    """The object a ``module:attribute`` reference names."""
    module, _, attribute = reference.partition(":")
    return getattr(importlib.import_module(module), attribute)


def _build(reference: str, *args: Any, **kwargs: Any) -> Backend:
    """A backend from the factory a reference names."""
    from lyra.sandbox.zygote import prestart

    # Code will run against it: the code workers' server imports while the simulator loads.
    prestart()
    backend: Backend = _load(reference)(*args, **kwargs)
    return backend


@dataclass(frozen=True)
class BenchTask:
    """A scene, a scripted plan written against :mod:`lyra.api` and its success check.

    Attributes:
        name: how the benchmark table names it.
        scene: the scene spec, as its YAML would read.
        code: the plan, as task code (it runs through the episode runner like any plan).
        success: the predicate spec that says it worked.
        moves: the primitives that count as one pick-and-place each.
        hold_seconds: simulated seconds the result must stand before it is judged.
    """

    name: str
    scene: Mapping[str, Any]
    code: str
    success: list[dict[str, Any]]
    moves: tuple[str, ...] = ("put_first_on_second",)
    hold_seconds: float = 0.0


@dataclass(frozen=True)
class Sample:
    """A small scene a backend ships: a first look for a person, and the conformance suite's.

    Attributes:
        scene: the scene spec, as its YAML would read.
        objects: two objects in it that the robot can pick, the first onto the second.
        free: a reachable free point: where an object's centre comes to rest when placed there.
        clear: a point the tool reaches in a straight line from where it starts, with 20 cm
            of free room above it; None: 10 cm above ``free`` (in the Kitchen the arm, pointing
            forward, would meet the kettle on its way there).
    """

    scene: Mapping[str, Any]
    objects: tuple[str, str]
    free: tuple[float, float, float]
    clear: tuple[float, float, float] | None = None


@dataclass(frozen=True)
class PeerRun:
    """One episode of a peer's policy (MetaWorld's scripted experts) on a scene and seed.

    Attributes:
        held: the task was done at the episode's end.
        any_step: it was done at some step of the episode.
        seconds: wall seconds the episode took.
    """

    held: bool
    any_step: bool
    seconds: float


@dataclass(frozen=True)
class BackendSpec:
    """What a backend is, and where its parts are (``module:attribute`` strings, loaded lazily).

    Attributes:
        name: the registry name that curricula, examples and ``--backend`` use.
        summary: one line for a person choosing a backend.
        capabilities: the :mod:`lyra.api` primitives it provides; the others raise
            :class:`~lyra.errors.UnsupportedPrimitiveError` naming the backends that have them.
        factory: builds the backend (a class or a function taking no required arguments).
        scene: its scene spec type, a pydantic model.
        predicates: a mapping of predicate names to functions, beside lyra's core ones.
        prompts: its :class:`~lyra.prompts.PromptPack`.
        aliases: other names ``lyra bench`` knows it by (the tabletop's ``tabletop``).
        bench: its benchmark tasks, a mapping of names to :class:`BenchTask`; None if none.
        sample: its :class:`Sample` scene; None if it has none.
        layout: a function ``(scene, seed) -> object names`` that lays a scene out without a
            simulator, raising :class:`~lyra.errors.LyraError` when it cannot: a curriculum
            is then checked for scenes that do not fit and predicates naming missing objects
            at load time. None: checked only when the task runs.
        start: a function ``(scene, seed) -> WorldState`` giving the objects as a scene is laid
            out, before anything moves, without a simulator: an evaluation suite then draws
            another layout where an instruction would be done by doing nothing. None: unchecked.
        tolerance: how close, in metres, its motions bring an object or the tool to a target.
        confinement: the confinement layers (``lyra.sandbox.LAYERS``) generated code must
            run under on this backend, or not run at all: a real robot requires them all.
        compatible: other backends whose learnt examples may be shown when planning here.
        must_let_go: whether a plan that ends holding an object has failed (on the tabletop it
            has put nothing anywhere; some of MetaWorld's goals are in the air).
        peer: a function ``(scene, seed) -> PeerRun`` running another system's policy on the
            same scene and seed, which ``lyra run`` shows beside lyra's; None if none.
        peer_name: what the tables call that peer.
        control_step: simulated seconds of one control step, the finest a motion can be
            stopped at (the Kitchen acts every 80 ms).
        robot: whether this is a real robot rather than a simulator: it cannot be laid out
            from a seed or nudged, and its time is real time (a plan's budget is real seconds
            of its clock and primitive calls); learning, seeds and regression checks run in
            ``make(name)``, the simulator of the same robot, never on it.
        connect: builds the backend on a real robot: a function ``(address, **options) ->
            Backend`` whose instance carries :meth:`for_robot`'s spec; None: a simulator only.
        simulator: what ``make(name)`` runs, as a refusal to use the robot names it.
        nudges: whether ``reset(..., perturb=k)`` nudges the start, so that a regression check
            can measure how far a run spreads; False: a nudged run would be a plain re-run
            (franky-sim's), and a check says it measured no spread.
    """

    name: str
    summary: str
    capabilities: frozenset[str]
    factory: str
    scene: str
    predicates: str
    prompts: str
    aliases: frozenset[str] = field(default_factory=frozenset)
    bench: str | None = None
    sample: str | None = None
    layout: str | None = None
    start: str | None = None
    tolerance: float = 0.005
    confinement: tuple[str, ...] = ()
    compatible: frozenset[str] = field(default_factory=frozenset)
    must_let_go: bool = True
    peer: str | None = None
    peer_name: str = ""
    control_step: float = 0.01
    robot: bool = False
    connect: str | None = None
    simulator: str = ""
    nudges: bool = True

    def make(self, **kwargs: Any) -> Backend:
        """Build a new instance of the backend."""
        return _build(self.factory, **kwargs)

    def connect_robot(self, address: str, **options: Any) -> Backend:
        """Connect to the real robot at ``address``; the instance's spec says it is a robot.

        Raises:
            LyraError: the backend is a simulator only (the message names those with robots).
        """
        if self.connect is None:
            raise _simulator_only(self.name)
        return _build(self.connect, address, **options)

    def for_robot(self) -> BackendSpec:
        """This spec as an instance on the real robot has it: a robot, under every layer.

        ``lyra.sandbox.LAYERS`` is read here, not copied: a layer added there is required on
        every robot from then on.
        """
        from lyra.sandbox import LAYERS

        return replace(self, robot=True, confinement=LAYERS)

    def refuse_robot(self, doing: str, command: str) -> LyraError:
        """Why ``doing`` does not run on this robot, and the command that runs it in simulation.

        Args:
            doing: what was asked, as the sentence's subject ("lyra check").
            command: the command line that does it in the simulator of the same robot.
        """
        return LyraError(
            f"{doing} does not run on a robot: a robot can be neither laid out from a seed nor "
            "nudged, and its time is real time, so learning, seeds and regression checks run "
            f"in a simulator of the same robot. Run it in {self.simulator or self.name}, the "
            f"{self.name} backend without --robot:\n  {command}"
        )

    def scene_type(self) -> type[BaseModel]:
        """The pydantic model of this backend's scenes."""
        model: type[BaseModel] = _load(self.scene)
        return model

    def load_scene(self, data: Any) -> BaseModel:
        """Validate a scene of this backend (a spec, or the mapping its YAML reads as).

        Raises:
            pydantic.ValidationError: naming the field that is wrong.
        """
        model = self.scene_type()
        return data if isinstance(data, model) else model.model_validate(data)

    def predicate_functions(self) -> Mapping[str, Callable[..., Verdict]]:
        """This backend's own predicates, by the name a success spec uses."""
        functions: Mapping[str, Callable[..., Verdict]] = _load(self.predicates)
        return functions

    def prompt_pack(self) -> PromptPack:
        """What the prompts say about this backend: frame, scene legend, primitive notes."""
        pack: PromptPack = _load(self.prompts)
        return pack

    def bench_tasks(self) -> Mapping[str, BenchTask]:
        """The benchmark tasks, by name (empty if the backend has none)."""
        return _load(self.bench) if self.bench else {}

    def scene_objects(self, scene: BaseModel, seed: int) -> list[str] | None:
        """The objects a scene lays out on a seed; None when the backend cannot tell.

        Raises:
            LyraError: the scene cannot be laid out (the message says why).
        """
        if self.layout is None:
            return None
        names: list[str] = _load(self.layout)(scene, seed)
        return names

    def start_state(self, scene: BaseModel, seed: int) -> WorldState | None:
        """The objects as a scene is laid out on a seed; None when the backend cannot tell.

        Raises:
            LyraError: the scene cannot be laid out (the message says why).
        """
        if self.start is None:
            return None
        state: WorldState = _load(self.start)(scene, seed)
        return state

    def run_peer(self, scene: BaseModel, seed: int) -> PeerRun | None:
        """The peer's policy on a scene and seed; None when the backend has no peer."""
        if self.peer is None:
            return None
        run: PeerRun = _load(self.peer)(scene, seed)
        return run

    def sample_scene(self) -> Sample | None:
        """The backend's sample scene, if it ships one."""
        return _load(self.sample) if self.sample else None

    def others_with(self, primitive: str) -> list[str]:
        """The registered backends that have a primitive this one lacks (the error names them)."""
        return backends_with(primitive)

    def examples_from(self) -> frozenset[str]:
        """The backends whose examples planning on this one may show: itself and ``compatible``."""
        return frozenset({self.name, *self.compatible})


@runtime_checkable
class Backend(Protocol):
    """A simulator or a robot, as the episode runner and the learning loop drive it.

    One thread owns a backend: the one that made it. Everything here is called from that thread
    except :meth:`stop`, which another thread may call to preempt a running motion.

    ``spec`` is the instance's own: the registered spec, or on a real robot
    :meth:`BackendSpec.for_robot`'s, so what reads it (the confinement a run requires, whether
    it may reset or nudge) reads what this instance is.
    """

    spec: BackendSpec

    @property
    def embodiment(self) -> Embodiment:
        """What the :mod:`lyra.api` facade dispatches primitives to."""
        ...

    @property
    def sim_time(self) -> float:
        """Simulated seconds since the last reset (the budget of a run is counted in these).

        On a robot (``spec.robot``), real seconds of its own clock.
        """
        ...

    def reset(self, scene: Any, seed: int, perturb: int = 0) -> None:
        """Lay a scene out from a seed; the same scene and seed give the same world.

        ``perturb`` k > 0 nudges the start by a tiny amount drawn from k (a micrometre on the
        tabletop), so that runs show how far the simulation spreads, as another CPU would.
        A robot lays nothing out (it checks that the world is as the scene says) and refuses
        ``perturb``.
        """
        ...

    def settle(self) -> None:
        """Step until the objects are still (bounded in simulated time)."""
        ...

    def hold(self, seconds: float) -> None:
        """Simulate ``seconds`` with the robot idle: a structure must stand this long."""
        ...

    def world_state(self) -> WorldState:
        """Objects, joints and the environment's own signals, for predicates."""
        ...

    def snapshot(self) -> Snapshot:
        """What the regression check compares a later run's end against."""
        ...

    def compare(
        self, expected: Snapshot, actual: Snapshot, ensemble: Sequence[Snapshot] = ()
    ) -> str:
        """Why ``actual`` differs from ``expected`` beyond the tolerances ("" when it does not).

        The tolerances are the backend's own, widened for each object by the spread that
        ``ensemble`` (the same run, perturbed) shows: a chaotic contact ends differently on
        another CPU, and only a difference beyond that spread is a regression.
        """
        ...

    def describe(self) -> str:
        """The scene as the prompts list it, one object a line."""
        ...

    def render(self) -> np.ndarray:
        """An RGB image (height x width x 3, uint8) of the scene now."""
        ...

    def park(self) -> None:
        """Move the robot out of the way: before a final hold, and of the camera's once judged."""
        ...

    def stop(self) -> None:
        """Preempt the running motion (from any thread); motions fail until the next reset."""
        ...

    def close(self) -> None:
        """Release the simulator or the connection."""
        ...


_REGISTRY: Registry[BackendSpec] = Registry(
    ENTRY_POINT_GROUP, BackendSpec, "lyra.backend.BackendSpec", UnknownBackendError
)


def register(spec: BackendSpec) -> None:
    """Register a backend under its name (a later registration of the name replaces it)."""
    _REGISTRY.register(spec)


def registered() -> dict[str, BackendSpec]:
    """Every registered backend, by name: the installed packages' and those registered here."""
    return _REGISTRY.registered()


def backend_spec(name: str) -> BackendSpec:
    """The spec of a registered backend.

    Raises:
        UnknownBackendError: none is registered under ``name``; the message lists those that are.
    """
    return _REGISTRY.get(name)


def resolve_alias(name: str) -> str:
    """The registered name of the backend called ``name`` by its name or one of its aliases.

    A name that is neither comes back as it is, for :func:`backend_spec` to report.
    """
    specs = registered()
    if name in specs:
        return name
    return next((spec.name for spec in specs.values() if name in spec.aliases), name)


def make(name: str, **kwargs: Any) -> Backend:
    """Build the backend registered under ``name``."""
    return backend_spec(name).make(**kwargs)


def robot_spec(name: str | None = None) -> BackendSpec:
    """The backend a ``--robot`` address is for: ``name``'s, else the only one with robots.

    Raises:
        LyraError: ``name`` is unknown or a simulator only, or no backend or several connect to
            robots and none was named.
    """
    if name is not None:
        spec = backend_spec(resolve_alias(name))
        if spec.connect is None:
            raise _simulator_only(spec.name)
        return spec
    robots = [spec for spec in registered().values() if spec.connect]
    if len(robots) != 1:
        raise LyraError(f"--robot needs --backend naming the robot's backend ({_robots()})")
    return robots[0]


def _robots() -> str:
    return ", ".join(sorted(n for n, s in registered().items() if s.connect)) or "none installed"


def _simulator_only(name: str) -> LyraError:
    return LyraError(
        f"the {name} backend is a simulator only: there is no robot to connect to (backends "
        f"with robots: {_robots()})"
    )


def backends_with(primitive: str) -> list[str]:
    """The registered backends that provide a primitive, sorted."""
    return [name for name, spec in registered().items() if primitive in spec.capabilities]


def format_validation_error(error: ValidationError, model: type[BaseModel] | None = None) -> str:
    """Return pydantic's errors as ``field.path: message`` lines, joined by "; ".

    With the ``model`` that was validated, a misspelt key gets the field it was likely meant as.
    """
    lines = []
    for item in error.errors():
        where = ".".join(str(part) for part in item["loc"]) or "(top level)"
        got = f" (got {item['input']!r})" if item["type"] == "literal_error" else ""
        if item["type"] == "extra_forbidden" and model is not None:
            got = did_you_mean(model, item["loc"])
        lines.append(f"{where}: {item['msg']}{got}")
    return "; ".join(lines)


def did_you_mean(model: type[BaseModel], loc: Sequence[int | str]) -> str:
    """`` (did you mean 'color'?)`` for a key the model does not have at ``loc``; "" if none."""
    schema = model.model_json_schema()
    nodes = [schema]
    for part in loc[:-1]:
        nodes = [
            child
            for node in nodes
            for alternative in _alternatives(node, schema)
            for child in [
                alternative.get("items")
                if isinstance(part, int)
                else alternative.get("properties", {}).get(part)
            ]
            if isinstance(child, dict)
        ]
    known = {
        name
        for node in nodes
        for alternative in _alternatives(node, schema)
        for name in alternative.get("properties", {})
    }
    close = difflib.get_close_matches(str(loc[-1]), sorted(known), n=1, cutoff=0.6) if loc else []
    return f" (did you mean '{close[0]}'?)" if close else ""


def _alternatives(node: dict[str, Any], schema: dict[str, Any]) -> list[dict[str, Any]]:
    """A JSON-schema node with its $ref followed and its unions spread out."""
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        node = schema.get("$defs", {}).get(ref.removeprefix("#/$defs/"), {})
    found = [node]
    for key in ("anyOf", "oneOf", "allOf"):
        for option in node.get(key, []):
            found += _alternatives(option, schema)
    return found


def load_scene_file(path: str | Path, backend: str | None = None) -> tuple[str, BaseModel]:
    """Read a scene YAML file: (its backend's name, the scene spec).

    The file is the scene itself, or a mapping with a ``scene`` key; either may name its
    ``backend``. A backend given here wins; with neither, it is :data:`DEFAULT_BACKEND`.

    Raises:
        LyraError: the file is unreadable or not valid YAML, the backend is unknown, or the
            scene does not fit the backend's spec (the message names the file and the field).
    """
    try:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as error:
        raise LyraError(f"{path}: cannot be read as a scene: {error}") from None
    if isinstance(data, dict) and "scene" in data and "objects" not in data:
        data = {"backend": data.get("backend"), **data["scene"]}
    if not isinstance(data, dict):
        raise LyraError(f"{path}: a scene file is a mapping (with `objects`, for the tabletop)")
    named = data.pop("backend", None)
    name = backend or (str(named) if named else DEFAULT_BACKEND)
    spec = backend_spec(name)
    try:
        return name, spec.load_scene(data)
    except ValidationError as error:
        raise LyraError(f"{path}: {format_validation_error(error, spec.scene_type())}") from None
