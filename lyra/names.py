"""Names the command line checks before anything heavy is imported: backends and skill names."""

from __future__ import annotations

import re
from typing import Literal

Backend = Literal["ravens", "kitchen", "metaworld", "fr3"]

# A skill is a module and a function of the same name.
SKILL_NAME = re.compile(r"[a-z_][a-z0-9_]*")
