"""Names the command line checks before anything heavy is imported, and how names sort."""

from __future__ import annotations

import re

# A skill is a module and a function of the same name.
SKILL_NAME = re.compile(r"[a-z_][a-z0-9_]*")


def natural_key(name: str) -> tuple[str | int, ...]:
    """Sort key that puts ``block_2`` before ``block_10``: digit runs compare as numbers."""
    return tuple(int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name))
