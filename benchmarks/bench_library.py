"""Time re-indexing a large skill library and one libcst edit with validation.

Run: python benchmarks/bench_library.py
Targets: re-index 500 modules < 5 s; one edit + validation of a 300-line module < 50 ms.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from lyra.library.edit import merge_and_validate
from lyra.library.parse import ParseCache, parse_library

MODULE = '''\
from lyra.api import pick, place, relative_point
{imports}


def skill_{i}(obj: str, target: str, *, lift: float = 0.05) -> None:
    """Move an object next to a target, variant {i}.

    Args:
        obj: the object to move.
        target: the reference object.
        lift: clearance above the target, in metres.
    """
    # Keep the helper calls apart so the module has some bulk to parse.
    pick(obj)
    place(relative_point(target, _offset_{i}(lift), dz=lift))
{calls}

def _offset_{i}(lift: float) -> float:
    return 0.1 + lift
'''


def write_library(folder: Path, count: int) -> None:
    for i in range(count):
        callee = [j for j in (i - 1, i - 2) if j >= 0]
        imports = "".join(f"from skills.skill_{j} import skill_{j}\n" for j in callee)
        calls = "".join(f"    skill_{j}(obj, target)\n" for j in callee)
        text = MODULE.format(i=i, imports=imports, calls=calls)
        (folder / f"skill_{i}.py").write_text(text, encoding="utf-8")


def long_module(lines: int) -> str:
    helpers = "".join(
        f"\n\ndef _helper_{k}(x: float) -> float:\n    # step {k}\n    y = x * {k}\n"
        f"    return y + math.sqrt(abs(x))\n"
        for k in range(lines // 6)
    )
    return "import math\n\n" + MODULE.format(i=0, imports="", calls="") + helpers


def median_ms(action: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        action()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def main() -> None:
    with tempfile.TemporaryDirectory() as root:
        folder = Path(root) / "skills"
        folder.mkdir()
        write_library(folder, 500)
        cold = median_ms(lambda: parse_library(folder), 3)
        cache = ParseCache()
        parse_library(folder, cache)
        (folder / "skill_7.py").write_text(
            (folder / "skill_7.py").read_text().replace("variant 7", "variant seven")
        )
        warm = median_ms(lambda: parse_library(folder, cache), 5)
        print(f"index 500 modules, cold: median {cold:.0f} ms (target < 5000 ms)")
        print(f"index 500 modules, cache, one hand edit: median {warm:.0f} ms")

    source = long_module(300)
    answer = (
        "def skill_0(obj: str, target: str, *, lift: float = 0.05) -> None:\n"
        "    pick(obj)\n    place(relative_point(target, 0.2, dz=lift))\n"
    )

    def edit() -> None:
        merge_and_validate(source, answer, "skill_0")

    lines = source.count("\n")
    print(
        f"edit + validate a {lines}-line module: median {median_ms(edit, 15):.1f} ms "
        "(target < 50 ms)"
    )


if __name__ == "__main__":
    main()
