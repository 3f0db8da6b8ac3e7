"""Names the command line checks before anything heavy is imported: skill names."""

from __future__ import annotations

import re

# A skill is a module and a function of the same name.
SKILL_NAME = re.compile(r"[a-z_][a-z0-9_]*")
