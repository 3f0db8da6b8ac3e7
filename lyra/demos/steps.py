"""Running primitive calls in the trusted process and writing each down as a demonstration step.

Both recorders use it: the console runs what a person typed through it, and a plan's calls reach
it from the confined worker as the sandbox's dispatch.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from lyra.api import ACTIONS
from lyra.backend import Backend
from lyra.demos.format import (
    DIGITS,
    Injected,
    ObservedWorld,
    Step,
    StepError,
    encode_values,
    observe,
)
from lyra.pictures import save_png
from lyra.sandbox import call_primitive, wire


class StepLog:
    """The steps so far, each run on the backend (which the caller has made active).

    Attributes:
        steps: the recorded steps, in order.
    """

    def __init__(self, backend: Backend, frames: Path | None = None) -> None:
        """Record on a backend.

        Args:
            backend: where the calls run; the caller makes it active (``lyra.use``).
            frames: the folder for a picture after each motion, named in the steps relative
                to the folder above it (the demonstration's); None takes no pictures.
        """
        self.backend = backend
        self.frames = frames
        self.steps: list[Step] = []

    def run(
        self,
        primitive: str,
        args: list[Any],
        kwargs: dict[str, Any],
        injected: Injected | None = None,
        frame: str | None = None,
    ) -> Any:
        """Run one call and record it; its value, or the error it raised, raised again.

        Args:
            primitive: the :mod:`lyra.api` function.
            args: its positional arguments.
            kwargs: its keyword arguments.
            injected: the mistake this call carries, if it was changed on purpose.
            frame: the picture the step already has (a replay keeps it); None takes a new one
                after a motion when pictures are on.
        """
        try:
            value = call_primitive(primitive, args, kwargs)
        except Exception as error:  # the call's error is recorded, then the caller's to handle
            failed = StepError(type=type(error).__name__, message=str(error))
            self._add(primitive, args, kwargs, None, failed, injected, frame)
            raise
        self._add(primitive, args, kwargs, value, None, injected, frame)
        return value

    def skip(
        self, primitive: str, args: list[Any], kwargs: dict[str, Any], injected: Injected
    ) -> Any:
        """Record a call that is not run (a missing step); what the plan gets back instead.

        An action that reports how far it got (``push``, ``turn``) got nowhere: 0.0; the others
        return None.
        """
        value = 0.0 if primitive in ("push", "turn") else None
        self._add(primitive, args, kwargs, value, None, injected, None, ran=False)
        return value

    def _add(
        self,
        primitive: str,
        args: list[Any],
        kwargs: dict[str, Any],
        value: Any,
        error: StepError | None,
        injected: Injected | None,
        frame: str | None,
        ran: bool = True,
    ) -> None:
        moved = ran and primitive in ACTIONS
        index = len(self.steps)
        if moved and frame is None and self.frames is not None:
            name = f"{index:03d}-{primitive}.png"
            save_png(self.backend.render(), self.frames / name)
            frame = f"{self.frames.name}/{name}"
        self.steps.append(
            Step(
                index=index,
                primitive=primitive,
                args=encode_values(args),
                kwargs=encode_values(kwargs),
                result=wire.encode(value),
                error=error,
                # A query moves nothing: the world is as the step before left it.
                after=observe(self.backend) if moved else None,
                sim_time=round(self.backend.sim_time, DIGITS),
                frame=frame,
                injected=injected,
            )
        )

    def replay(self, steps: Sequence[Step], reset: Any) -> ObservedWorld | None:
        """Start again from the reset and run ``steps`` again: the simulators are deterministic.

        Args:
            steps: the steps to keep, as recorded; their pictures are kept, not taken again.
            reset: lays the scene out again (the backend's reset on the scene and seed).

        Returns:
            The world the last kept motion had recorded after it, to compare with now;
            None when no kept step moved anything.
        """
        reset()
        self.steps = []
        for step in steps:
            args, kwargs = step.call()
            if not step.ran and step.injected is not None:
                self.skip(step.primitive, args, kwargs, step.injected)
                continue
            # A call that failed the first time fails again, and is recorded again.
            with contextlib.suppress(Exception):
                self.run(step.primitive, args, kwargs, step.injected, step.frame)
        return next((step.after for step in reversed(steps) if step.after is not None), None)
