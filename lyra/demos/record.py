"""``lyra demo record``: a person drives the primitives one typed call at a time.

What is typed never runs as Python: each line is parsed as exactly one call of a primitive with
literal arguments (``Point(...)`` and ``Pose(...)`` of literals included), and the primitive
itself is called here, in the trusted process that holds the simulator.
"""

from __future__ import annotations

import ast
import inspect
import math
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from typing import Any

from lyra import api
from lyra.backend import Backend
from lyra.demos.format import Demonstration, ObservedWorld, Source, observe, scene_data
from lyra.demos.steps import StepLog
from lyra.embodiment import ObjectState
from lyra.errors import LyraError, unknown_name
from lyra.geometry import Point, Pose, Size
from lyra.sandbox import wire

COMMANDS = "help, state, undo, done"
EXAMPLE = 'put_first_on_second("red_block", "blue_block")'
# A typed line longer than this is not a call a person meant.
MAX_LINE = 2000
# The value types a line may build from literals, as skills write them.
_VALUES: dict[str, Callable[..., Any]] = {"Point": Point, "Pose": Pose}


class LineError(LyraError):
    """A typed line that is not one call of a primitive with literal arguments."""


def parse_call(line: str, primitives: Collection[str]) -> tuple[str, list[Any], dict[str, Any]]:
    """Read a typed line as one primitive call, evaluating nothing but literals.

    Args:
        line: what the person typed.
        primitives: the primitives the backend has.

    Returns:
        The primitive's name, its positional and its keyword arguments.

    Raises:
        LineError: the line is anything else; the message says what to type.
    """
    if len(line) > MAX_LINE:
        raise LineError(f"a line of {len(line)} characters is not one call: type one call")
    try:
        tree = ast.parse(line.strip(), mode="eval")
    except (SyntaxError, ValueError, RecursionError) as error:
        raise LineError(
            f"not a call ({getattr(error, 'msg', error)}): type one primitive call, e.g. "
            f"{EXAMPLE}, or one of {COMMANDS}"
        ) from None
    call = tree.body
    if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Name):
        raise LineError(
            f"`{ast.unparse(call)}` is not a primitive call: type one, e.g. {EXAMPLE}, or one "
            f"of {COMMANDS}; nothing else runs here"
        )
    name = call.func.id
    if name not in primitives:
        raise LineError(
            unknown_name("no primitive", "primitives", name, primitives)
            + " (`help` shows their arguments)"
        )
    args = [_value(node) for node in call.args]
    kwargs = {}
    for keyword in call.keywords:
        if keyword.arg is None:
            raise LineError("`**` unpacks a name, not a value: name each argument")
        kwargs[keyword.arg] = _value(keyword.value)
    try:
        inspect.signature(getattr(api, name)).bind(*args, **kwargs)
    except TypeError as error:
        raise LineError(f"{name}{signature(name)}: {error}") from None
    return name, args, kwargs


def _value(node: ast.expr) -> Any:
    """A literal argument, or a Point or Pose of literals; anything else is refused."""
    refused = LineError(
        f'`{ast.unparse(node)}` is not a value: give arguments as literals, e.g. "red_block", '
        "0.05, Point(0.5, 0.1, 0.02); names, expressions and other calls are not evaluated here"
    )
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.keywords:
        build = _VALUES.get(node.func.id)
        if build is None or any(isinstance(arg, ast.Starred) for arg in node.args):
            raise refused
        try:
            value = build(*(_value(arg) for arg in node.args))
        except TypeError as error:
            raise LineError(f"`{ast.unparse(node)}`: {error}") from None
    else:
        try:
            value = ast.literal_eval(node)
        except (ValueError, TypeError, SyntaxError, RecursionError):
            raise refused from None
    try:
        # What a primitive may be given is what crosses the sandbox's wire, checked as there.
        return wire.decode(wire.encode(value))
    except wire.WireError as error:
        raise LineError(f"`{ast.unparse(node)}`: {error}") from None


def signature(primitive: str) -> str:
    """A primitive's parameters as a person types them: ``(name: str, yaw_deg: ... = None)``."""
    parameters = inspect.signature(getattr(api, primitive)).parameters.values()
    parts = [
        f"{p.name}: {p.annotation}"
        + ("" if p.default is inspect.Parameter.empty else f" = {p.default!r}")
        for p in parameters
    ]
    return f"({', '.join(parts)})"


def help_text(primitives: Collection[str]) -> str:
    """The primitives the backend has, each with its parameters and what it does."""
    lines = [f"Type one call a line, e.g. {EXAMPLE}; or {COMMANDS}."]
    for name in api.PRIMITIVES:
        if name in primitives:
            summary = (inspect.getdoc(getattr(api, name)) or "").splitlines()[0]
            lines.append(f"  {name}{signature(name)}\n      {summary}")
    lines.append(
        "Values: strings, numbers, lists, tuples, Point(x, y, z), Pose(Point(...), (qx, qy, qz, "
        "qw)). `undo` takes the last step back; `done` (or end of input) writes the file."
    )
    return "\n".join(lines)


def show(value: Any) -> str:
    """A short text of a primitive's value: positions to the millimetre."""
    if isinstance(value, Point | Size):
        return f"{type(value).__name__}({value.x:.3f}, {value.y:.3f}, {value.z:.3f})"
    if isinstance(value, Pose):
        # Adding 0.0 turns a rounded -0.0 into 0.0.
        yaw = round(math.degrees(value.yaw), 1) + 0.0
        return f"Pose({show(value.position)}, yaw {yaw:.1f} degrees)"
    if isinstance(value, ObjectState):
        return show(value.pose)
    if isinstance(value, list | tuple):
        return f"[{', '.join(show(item) for item in value)}]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{key}: {show(item)}" for key, item in value.items()) + "}"
    if isinstance(value, float):
        return f"{value:.4f}"
    return repr(value)


@dataclass
class Recording:
    """One console session on a scene and seed: the steps so far, and how to start again.

    Attributes:
        backend: the simulator; made active by the caller.
        backend_name: its registered name.
        scene: its scene spec.
        seed: the layout seed.
        log: the steps, run and recorded.
        say: where the console's answers go.
        start: the world as the scene was laid out, before any step.
    """

    backend: Backend
    backend_name: str
    scene: Any
    seed: int
    log: StepLog
    say: Callable[[str], None]
    start: ObservedWorld = field(init=False)

    def __post_init__(self) -> None:
        self.reset()
        self.start = observe(self.backend)

    def reset(self) -> None:
        """Lay the scene out again from its seed."""
        self.backend.reset(self.scene, self.seed)

    def handle(self, line: str) -> bool:
        """Answer one typed line; False once the person is done."""
        command = line.strip()
        if command in ("done", "quit", "exit"):
            return False
        if not command or command.startswith("#"):
            return True
        if command == "help":
            self.say(help_text(self.backend.spec.capabilities))
        elif command == "state":
            self.say(self.state())
        elif command == "undo":
            self.undo()
        else:
            self.call(command)
        return True

    def call(self, line: str) -> None:
        """Run a typed call and say what came of it; a refused line runs nothing."""
        try:
            name, args, kwargs = parse_call(line, self.backend.spec.capabilities)
        except LineError as error:
            self.say(f"refused, nothing ran: {error}")
            return
        index = len(self.log.steps)
        try:
            value = self.log.run(name, args, kwargs)
        except Exception as error:  # the person reads it and may undo the step
            self.say(f"step {index}: {type(error).__name__}: {error} (recorded; `undo` removes it)")
            return
        self.say(f"step {index}: {name}: {'done' if value is None else show(value)}")

    def state(self) -> str:
        """The objects as the prompts list them, and what the gripper holds."""
        held = self.backend.embodiment.held_object()
        return f"{self.backend.describe()}\nholding: {held or 'nothing'}"

    def undo(self) -> None:
        """Take the last step back: lay the scene out again and replay the others."""
        if not self.log.steps:
            self.say("nothing to undo")
            return
        undone = self.log.steps[-1]
        if undone.frame is not None and self.log.frames is not None:
            (self.log.frames.parent / undone.frame).unlink(missing_ok=True)
        expected = self.log.replay(self.log.steps[:-1], self.reset)
        self.say(f"undid step {undone.index} ({undone.primitive}); {len(self.log.steps)} left")
        drift = _drift(expected, observe(self.backend)) if expected is not None else 0.0
        if drift > self.backend.spec.tolerance:
            self.say(
                f"warning: replayed, an object ends {drift * 1000:.1f} mm from where it was: "
                "this simulator did not repeat itself exactly; check with `state`"
            )

    def demonstration(self, instruction: str) -> Demonstration:
        """What was shown, as a demonstration."""
        return Demonstration(
            instruction=instruction,
            backend=self.backend_name,
            scene=scene_data(self.scene),
            seed=self.seed,
            source=Source(kind="person"),
            start=self.start,
            steps=self.log.steps,
        )


def _drift(expected: ObservedWorld, now: ObservedWorld) -> float:
    """How far, in metres, the farthest object is from where it was expected."""
    return max(
        (
            math.dist(pose[:3], now.objects[name][:3])
            for name, pose in expected.objects.items()
            if name in now.objects
        ),
        default=0.0,
    )
