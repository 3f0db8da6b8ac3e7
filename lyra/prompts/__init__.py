"""The prompt templates, as text files beside this module, and what fills them.

Templates use ``${name}`` placeholders (string.Template), so code in them needs no escaping.
"""

from __future__ import annotations

import inspect
import string
import textwrap
from functools import cache
from pathlib import Path

HERE = Path(__file__).parent


@cache
def template(name: str) -> string.Template:
    """Return the template ``NAME.md`` of this folder."""
    return string.Template((HERE / f"{name}.md").read_text(encoding="utf-8"))


def render(name: str, **values: str) -> str:
    """Fill a template; every placeholder must be given (a missing one raises KeyError)."""
    return template(name).substitute(values)


@cache
def primitives_reference() -> str:
    """Every lyra.api primitive: its signature and its whole docstring, which says what it does."""
    from lyra import api

    entries = []
    for name in api.__all__:
        function = getattr(api, name)
        if not inspect.isfunction(function):
            continue
        # Annotations are strings under `from __future__ import annotations`: drop the quotes.
        signature = str(inspect.signature(function)).replace("'", "")
        doc = textwrap.indent(inspect.getdoc(function) or "", "  ")
        entries.append(f"- `{name}{signature}`\n{doc}")
    entries.append(
        "- `Point(x, y, z)`, `Pose(position, orientation)` (with `Pose.from_yaw(point, "
        "yaw_radians)` and `pose.yaw` in radians) and `Size(x, y, z)` come from lyra.api too."
    )
    return "\n".join(entries)


def system_prompt() -> str:
    """The system message every learning prompt starts with."""
    return render("system", primitives=primitives_reference())
