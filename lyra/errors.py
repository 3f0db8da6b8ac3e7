"""The typed errors lyra raises; each message tells the caller (person or LLM) what to do next."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


class LyraError(Exception):
    """Base of every error lyra raises on purpose."""


class NoEmbodimentError(LyraError):
    """A primitive was called with no embodiment active."""

    def __init__(self) -> None:
        super().__init__(
            "no robot is active: run skills inside `with lyra.use(env):` "
            "(or through the sandbox, which does this for you)"
        )


def unknown_name(opening: str, plural: str, name: str, known: Iterable[str]) -> str:
    """The message for a name that is not there: the closest known one, then all of them."""
    names = sorted(known)
    close = difflib.get_close_matches(name, names, n=1, cutoff=0.6)
    hint = f" Did you mean '{close[0]}'?" if close else ""
    return f"{opening} '{name}'.{hint} Known {plural}: {', '.join(names) or '(none)'}"


class UnknownObjectError(LyraError):
    """A primitive was given an object name that is not in the scene."""

    def __init__(self, name: str, known: Iterable[str]) -> None:
        self.name = name
        self.known = sorted(known)
        super().__init__(unknown_name("unknown object", "objects", name, self.known))


class UnknownJointError(LyraError):
    """A primitive was given a joint name that the scene does not have."""

    def __init__(self, name: str, known: Iterable[str]) -> None:
        self.name = name
        self.known = sorted(known)
        super().__init__(unknown_name("unknown joint", "joints", name, self.known))


class UnreachablePoseError(LyraError):
    """A target lies outside the workspace box or out of the arm's reach."""

    def __init__(self, what: str, detail: str) -> None:
        self.what = what
        self.detail = detail
        super().__init__(f"cannot reach {what}: {detail}")


class GraspError(LyraError):
    """Picking or placing was asked in a state that does not allow it."""


class MotionError(LyraError):
    """The arm could not follow a commanded motion (it touched something it should not)."""


class LayoutError(LyraError):
    """A scene cannot be laid out on a seed: its objects find no room.

    A backend raises it from ``reset``; a run over seeds reports it as that seed's failure.
    """


class UnsupportedPrimitiveError(LyraError):
    """A primitive was called on a backend that does not provide it."""

    def __init__(self, primitive: str, backend: str, elsewhere: Iterable[str]) -> None:
        self.primitive = primitive
        self.backend = backend
        self.elsewhere = sorted(elsewhere)
        where = (
            f"backends that have it: {', '.join(self.elsewhere)}"
            if self.elsewhere
            else "no registered backend has it"
        )
        super().__init__(
            f"the {backend} backend has no primitive '{primitive}' ({where}); "
            "do the task with the primitives this backend lists"
        )


class MissingDependencyError(LyraError):
    """A backend needs a package that is not installed; the message says what to install."""


class StoppedError(LyraError):
    """A motion was preempted by ``stop()``: the run it belonged to was given up."""
