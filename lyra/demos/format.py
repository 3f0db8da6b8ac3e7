"""The demonstration file: a typed, versioned JSON record of primitive calls on a scene and seed.

One demonstration is an instruction, the backend, the scene and its layout seed, where the calls
came from, and the steps: each primitive call with its arguments, its result or error and the
world observed after it. ``docs/demonstrations.md`` documents every field.
"""

from __future__ import annotations

import dataclasses
import inspect
import json
import re
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_core import ErrorDetails

from lyra import api
from lyra.backend import Backend, backend_spec, format_validation_error
from lyra.curriculum import schema_message
from lyra.embodiment import WorldState
from lyra.errors import LyraError, unknown_name
from lyra.files import write_atomic
from lyra.geometry import Point, Pose
from lyra.predicates import Verdict, from_spec
from lyra.sandbox import wire

FORMAT: Literal["lyra-demo/1"] = "lyra-demo/1"
# Where to read what each field means, for every message that refuses a file.
DOCS = "docs/demonstrations.md"
# Poses are kept to a micrometre, as regression snapshots are.
DIGITS = 6
# A JSON list of numbers only, as json.dumps indents it, one number a line.
_NUMBERS = re.compile(r"\[\s*((?:-?[\d.e+-]+,\s*)*-?[\d.e+-]+)\s*\]")


class DemoError(LyraError):
    """A demonstration file that cannot be used; the message names the file, step and field."""


class _Model(BaseModel):
    # A misspelt key is a mistake to report, not a field to drop.
    model_config = ConfigDict(extra="forbid")


class ObservedWorld(_Model):
    """The world as observed at one moment of a demonstration.

    Attributes:
        objects: every object's pose as (x, y, z, qx, qy, qz, qw), by name.
        joints: articulated objects' joint values (radians or metres), by joint name.
        signals: the environment's own judgements (MetaWorld's ``success``), by name.
        ee: the tool point's pose as (x, y, z, qx, qy, qz, qw).
        held: the object in the gripper, None when it is empty.
    """

    objects: dict[str, list[float]]
    joints: dict[str, float] = Field(default_factory=dict)
    signals: dict[str, float] = Field(default_factory=dict)
    ee: list[float]
    held: str | None = None

    @field_validator("ee")
    @classmethod
    def _a_pose(cls, value: list[float]) -> list[float]:
        return _pose(value)

    @field_validator("objects")
    @classmethod
    def _poses(cls, value: dict[str, list[float]]) -> dict[str, list[float]]:
        for name, pose in value.items():
            _pose(pose, f"'{name}': ")
        return value


def _pose(value: list[float], where: str = "") -> list[float]:
    if len(value) != 7:
        raise ValueError(f"{where}a pose is 7 numbers (x, y, z, qx, qy, qz, qw), got {len(value)}")
    return value


class StepError(_Model):
    """The error a call raised: its type and message (lyra's messages say what to do)."""

    type: str
    message: str


def _check_values(value: Any) -> Any:
    """Refuse arguments lyra.api never passes (checked as the sandbox's wire checks them)."""
    try:
        decode_values(value)
    except wire.WireError as error:
        raise ValueError(f"not a value lyra.api passes: {error}") from None
    return value


class Injected(_Model):
    """A mistake put into a plan's call on purpose (``lyra demo from-plan --noise``).

    Attributes:
        kind: ``wrong-object``, ``offset`` or ``missing-step``.
        detail: what was changed, in words.
        args: the positional arguments the plan gave, encoded as a step's are; the step's
            own are what ran (for ``missing-step``: what would have run; nothing did).
        kwargs: the keyword arguments the plan gave.
    """

    kind: Literal["wrong-object", "offset", "missing-step"]
    detail: str
    args: list[Any] = Field(default_factory=list)
    kwargs: dict[str, Any] = Field(default_factory=dict)

    _values = field_validator("args", "kwargs")(_check_values)


class Step(_Model):
    """One primitive call and what came of it.

    Attributes:
        index: its place in the list, from 0.
        primitive: the :mod:`lyra.api` function called.
        args: its positional arguments, each wire-encoded (``lyra.sandbox.wire``: a Point is
            ``{"~": "Point", "v": [x, y, z]}``).
        kwargs: its keyword arguments by name, each wire-encoded.
        result: what it returned, wire-encoded; None for an error or a skipped call.
        error: the error it raised, None when it returned.
        after: the world after it; None for a query, which moves nothing.
        sim_time: simulated seconds since the reset, after it.
        frame: a PNG of the scene after it, relative to the demonstration's folder.
        injected: the mistake put into this call, None for a call run as asked.
    """

    index: int = Field(strict=True)
    primitive: str
    args: list[Any] = Field(default_factory=list)
    kwargs: dict[str, Any] = Field(default_factory=dict)
    result: Any = None
    error: StepError | None = None
    after: ObservedWorld | None = None
    sim_time: float = 0.0
    frame: str | None = None
    injected: Injected | None = None

    @field_validator("primitive")
    @classmethod
    def _known(cls, value: str) -> str:
        if value not in api.PRIMITIVES:
            raise ValueError(unknown_name("unknown primitive", "primitives", value, api.PRIMITIVES))
        return value

    _values = field_validator("args", "kwargs")(_check_values)

    @field_validator("result")
    @classmethod
    def _a_value(cls, value: Any) -> Any:
        try:
            wire.decode(value)
        except wire.WireError as error:
            raise ValueError(f"not a value lyra.api returns: {error}") from None
        return value

    @model_validator(mode="after")
    def _fits(self) -> Step:
        args, kwargs = self.call()
        try:
            inspect.signature(getattr(api, self.primitive)).bind(*args, **kwargs)
        except TypeError as error:
            raise ValueError(f"the arguments do not fit {self.primitive}(): {error}") from None
        return self

    @property
    def ran(self) -> bool:
        """Whether the call reached the robot (an injected ``missing-step`` did not)."""
        return self.injected is None or self.injected.kind != "missing-step"

    def call(self) -> tuple[list[Any], dict[str, Any]]:
        """The decoded arguments, to run the call again."""
        return decode_values(self.args), decode_values(self.kwargs)


def encode_values(values: Any) -> Any:
    """A call's arguments for the file: each value wire-encoded, the list or dict kept plain."""
    if isinstance(values, dict):
        return {key: wire.encode(value) for key, value in values.items()}
    return [wire.encode(value) for value in values]


def decode_values(values: Any) -> Any:
    """The arguments :func:`encode_values` wrote, each value checked as the wire checks it.

    Raises:
        lyra.sandbox.wire.WireError: a value is not one lyra.api passes.
    """
    if isinstance(values, dict):
        return {key: wire.decode(value) for key, value in values.items()}
    if isinstance(values, list):
        return [wire.decode(value) for value in values]
    raise wire.WireError(f"arguments are a list or a mapping, got {type(values).__name__}")


class Source(_Model):
    """Where the calls came from.

    Attributes:
        kind: ``person`` (``lyra demo record``) or ``plan`` (``lyra demo from-plan``).
        plan: the plan file, as it was named; None for a person.
        code: the plan's code, as it ran.
        noise: the kinds of mistake asked for.
        noise_seed: the seed the mistakes were drawn from.
        mistakes: how many mistakes were asked for; the steps marked ``injected`` are those
            that were made (fewer when the plan made fewer calls that can take one).
        confined: the OS confinement layers the plan ran under.
        ok: whether the plan ran to its end without an error; None for a person.
        feedback: why it did not, as the episode runner says it.
    """

    kind: Literal["person", "plan"]
    plan: str | None = None
    code: str | None = None
    noise: list[Literal["wrong-object", "offset", "missing-step"]] = Field(default_factory=list)
    noise_seed: int | None = None
    mistakes: int = 0
    confined: list[str] = Field(default_factory=list)
    ok: bool | None = None
    feedback: str = ""


class Demonstration(_Model):
    """A demonstration: an instruction, where it was shown and the steps that showed it.

    Attributes:
        format: the file format and its version, ``lyra-demo/1``.
        instruction: what the demonstration does, in words.
        backend: the registered backend it ran on.
        scene: the backend's scene spec, as its YAML reads.
        seed: the layout seed.
        source: where the calls came from.
        start: the world before the first step.
        steps: the calls, in order.
        check: the success predicate of the demonstrated task, as a curriculum states one;
            learning from the demonstration judges its plans by it (empty: none given, and
            ``lyra demo learn --success`` must give one).
    """

    format: Literal["lyra-demo/1"] = FORMAT
    instruction: str = Field(min_length=1)
    backend: str
    scene: dict[str, Any]
    seed: int = Field(ge=0, strict=True)
    source: Source
    start: ObservedWorld
    steps: list[Step] = Field(default_factory=list)
    check: list[dict[str, Any]] = Field(default_factory=list)

    @property
    def mistakes(self) -> list[Step]:
        """The steps with a mistake injected."""
        return [step for step in self.steps if step.injected is not None]


def observe(backend: Backend) -> ObservedWorld:
    """The world as the backend reports it now, in this process."""
    world = backend.world_state()
    embodiment = backend.embodiment
    return ObservedWorld(
        objects={name: _numbers(state.pose) for name, state in sorted(world.items())},
        joints={name: float(value) for name, value in sorted(world.joints.items())},
        signals={name: float(value) for name, value in sorted(world.signals.items())},
        ee=_numbers(embodiment.ee_pose()),
        held=embodiment.held_object(),
    )


def _numbers(pose: Any) -> list[float]:
    values = (*pose.position.as_array(), *pose.orientation)
    return [round(float(value), DIGITS) + 0.0 for value in values]


def scene_data(scene: BaseModel) -> dict[str, Any]:
    """A scene spec as its YAML would read (defaults left out), for :attr:`Demonstration.scene`."""
    data: dict[str, Any] = scene.model_dump(mode="json", exclude_defaults=True)
    return data


def save(demo: Demonstration, path: Path) -> Path:
    """Write a demonstration as JSON, all at once (a crash leaves the old file or the new).

    A list of numbers (a pose, a point) stays on one line, so a step reads as a few lines.
    """
    text = _NUMBERS.sub(
        lambda match: "[" + " ".join(match.group(1).split()) + "]",
        # A demonstration without a check reads as those written before the field was.
        demo.model_dump_json(indent=1, exclude=set() if demo.check else {"check"}),
    )
    write_atomic(path, text + "\n")
    return path


def load_demo(path: Path) -> Demonstration:
    """Read a demonstration, refusing anything malformed before any of it is used.

    Raises:
        DemoError: the file is not a demonstration of this format, a field is wrong (the message
            names the file, the step and the field), or its scene does not load.
    """
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as error:
        raise DemoError(f"{path}: cannot be read: {error}") from None
    except ValueError as error:
        raise DemoError(
            f"{path}: not JSON ({error}): a demonstration is the JSON file `lyra demo` writes"
        ) from None
    found = data.get("format") if isinstance(data, dict) else None
    if found != FORMAT:
        raise DemoError(
            f"{path}: not a demonstration this lyra reads (format {found!r}, expected "
            f"'{FORMAT}'): write it with `lyra demo record` or `lyra demo from-plan`"
        )
    try:
        demo = Demonstration.model_validate(data)
    except ValidationError as error:
        raise DemoError(_problems(path, error.errors())) from None
    demo_scene(demo, path)
    problems = [f"{path}: {_where(loc)}: {message}" for loc, message in _step_problems(demo, path)]
    if problems:
        raise DemoError("\n".join([*problems, f"(every field is described in {DOCS})"]))
    return demo


def _problems(path: Path, errors: list[ErrorDetails]) -> str:
    lines = [
        f"{path}: {_where(item['loc'])}: {schema_message(item, Demonstration)}" for item in errors
    ]
    return "\n".join([*lines, f"(every field is described in {DOCS})"])


def _where(loc: tuple[int | str, ...]) -> str:
    """``step 2, field 'primitive'`` for a place in the file, as a person looks for it."""
    if loc[:1] == ("steps",) and len(loc) > 1:
        rest = ".".join(str(part) for part in loc[2:])
        return f"step {loc[1]}" + (f", field '{rest}'" if rest else "")
    return f"field '{'.'.join(str(part) for part in loc)}'" if loc else "(top level)"


def _step_problems(demo: Demonstration, path: Path) -> list[tuple[tuple[int | str, ...], str]]:
    """What the schema cannot see: the order of the steps, the backend's primitives, frames."""
    capabilities = backend_spec(demo.backend).capabilities
    problems: list[tuple[tuple[int | str, ...], str]] = []
    for position, step in enumerate(demo.steps):
        where: tuple[int | str, ...] = ("steps", position)
        if step.index != position:
            problems.append(
                (
                    (*where, "index"),
                    f"is {step.index} at place {position} of the list: number "
                    "the steps 0, 1, 2 ... in order",
                )
            )
        if step.primitive not in capabilities:
            problems.append(
                (
                    (*where, "primitive"),
                    f"the {demo.backend} backend has no primitive '{step.primitive}'",
                )
            )
        if step.frame is not None and not (path.parent / step.frame).is_file():
            problems.append(
                (
                    (*where, "frame"),
                    f"no picture {step.frame} beside the demonstration: copy "
                    "the frames with it, or remove the field",
                )
            )
    return problems


def demo_scene(demo: Demonstration, path: Path) -> BaseModel:
    """The demonstration's scene, as its backend reads it, checked to lay out on its seed.

    Raises:
        DemoError: the backend is not registered, or the scene does not fit its spec or does
            not lay out on the seed (the message names the file).
    """
    try:
        spec = backend_spec(demo.backend)
        scene = spec.load_scene(demo.scene)
        spec.scene_objects(scene, demo.seed)
    except ValidationError as error:
        raise DemoError(
            f"{path}: its scene does not load on the {demo.backend} backend: "
            f"{format_validation_error(error, spec.scene_type())}"
        ) from None
    except LyraError as error:
        raise DemoError(f"{path}: its scene does not load: {error}") from None
    return scene


def end_verdict(demo: Demonstration, backend: Backend) -> Verdict:
    """The demonstration's check, judged on the world its last motion left.

    The scene is laid out on the demonstration's seed for what the file does not hold (each
    object's kind, colour and size); the poses, joints and signals are the file's.
    """
    backend.reset(backend.spec.load_scene(demo.scene), demo.seed)
    laid = backend.world_state()
    worlds = [step.after for step in demo.steps if step.after is not None]
    world = worlds[-1] if worlds else demo.start
    objects = {
        name: dataclasses.replace(
            laid[name], pose=Pose(Point(*pose[:3]), (pose[3], pose[4], pose[5], pose[6]))
        )
        for name, pose in world.objects.items()
    }
    state = WorldState(objects, dict(world.joints), dict(world.signals))
    return from_spec(demo.check, backend.spec.predicate_functions())(state)
