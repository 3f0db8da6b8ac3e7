from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

import lyra.api
from lyra.geometry import Point
from lyra.sandbox import MAX_SOURCE_BYTES, RunResult, run_code

if TYPE_CHECKING:
    from tests.sandbox.conftest import FakeTable

ALLOWED = "collections, dataclasses, functools, itertools, math, numpy, typing"
RULES = "the code was not run: it breaks the rules for generated code:\n"


def run(source: str, table: FakeTable, skills: Path | None = None, **limits: float) -> RunResult:
    return run_code(source, table, skills_root=skills, **limits)  # type: ignore[arg-type]


def refused(result: RunResult, kind: str, feedback: str) -> None:
    assert (result.ok, result.error, result.primitive_calls) == (False, kind, 0)
    assert result.feedback == feedback


# -- successful runs -------------------------------------------------------------------------


def test_plan_runs_primitives_and_reports_what_it_printed(table: FakeTable) -> None:
    source = (
        "import numpy as np\n"
        "from lyra.api import object_names, object_pose, put_first_on_second\n"
        "for name in object_names():\n"
        "    p = object_pose(name).position\n"
        "    print(name, round(float(np.hypot(p.x, p.y)), 3))\n"
        "put_first_on_second('red_block', 'blue_block')\n"
    )
    result = run(source, table)
    assert (result.ok, result.error, result.feedback) == (True, None, "")
    assert result.primitive_calls == 4
    assert result.output == "blue_block 0.51\nred_block 0.412\n"
    assert table.calls == ["put red_block"]
    assert table.poses["red_block"].position == Point(0.5, -0.1, 0.06)
    assert 0 <= result.wall_s < 5


def test_plan_calls_a_skill_from_the_skills_folder(table: FakeTable, skills_dir: Path) -> None:
    source = "from skills.put_on import put_on\nput_on('blue_block', 'red_block')\n"
    result = run(source, table, skills_dir)
    assert (result.ok, result.primitive_calls) == (True, 1)
    assert table.calls == ["put blue_block"]


def test_extra_globals_are_visible_to_the_code(table: FakeTable) -> None:
    result = run_code(
        "from lyra.api import pick\npick(target)\n", table, extra_globals={"target": "red_block"}
    )
    assert result.ok
    assert table.calls == ["pick red_block"]


def test_a_dispatch_sees_each_call_and_may_change_it(table: FakeTable) -> None:
    seen = []

    def dispatch(name: str, args: list, kwargs: dict) -> object:
        seen.append((name, args, kwargs))
        if name == "pick":
            args = ["blue_block"]  # the trusted side decides what runs
        return getattr(lyra.api, name)(*args, **kwargs)

    source = (
        "from lyra.api import pick, place, Point\n"
        "pick('red_block')\n"
        "place(Point(0.4, 0.2, 0.02), yaw_deg=0)\n"
        "print(repr(pick('green_block')))\n"
    )
    result = run_code(source, table, dispatch=dispatch)
    assert seen == [
        ("pick", ["red_block"], {}),
        ("place", [Point(0.4, 0.2, 0.02)], {"yaw_deg": 0}),
        ("pick", ["green_block"], {}),
    ]
    assert table.calls == ["pick blue_block", "place", "pick blue_block"]
    assert (result.ok, result.output, result.primitive_calls) == (True, "None\n", 3)


def test_assignments_to_allowed_modules_stay_in_the_run(table: FakeTable) -> None:
    assert run("import math\nmath.pi = 3\n", table).ok
    import math

    assert math.pi == pytest.approx(3.14159, abs=1e-5)


# -- refused before running ------------------------------------------------------------------


@pytest.mark.parametrize("source", ["", "   \n", "# only a comment\n"])
def test_no_code_at_all(source: str, table: FakeTable) -> None:
    refused(
        run(source, table),
        "syntax",
        "the answer holds no code: write Python statements that call primitives from lyra.api "
        "or skills from skills.<name>",
    )


def test_syntax_error_names_the_line(table: FakeTable) -> None:
    refused(
        run("from lyra.api import pick\npick('red_block'\n", table),
        "syntax",
        "the code does not compile:\n<task>:2: syntax error: '(' was never closed\n"
        "    pick('red_block'",
    )


def test_compile_time_error_is_a_syntax_error(table: FakeTable) -> None:
    refused(
        run("return 1\n", table),
        "syntax",
        "the code does not compile:\n<task>:1: syntax error: 'return' outside function\n"
        "    return 1",
    )


@pytest.mark.rules
def test_forbidden_import(table: FakeTable) -> None:
    refused(
        run("import os\nos.system('true')\n", table),
        "policy",
        RULES + "<task>:1: module 'os' is not allowed in skills: use lyra.api for the robot, "
        f"skills.<name> for other skills, or one of {ALLOWED}\n    import os",
    )


@pytest.mark.rules
def test_open_is_refused(table: FakeTable) -> None:
    refused(
        run("text = open('x').read()\n", table),
        "policy",
        RULES + "<task>:1: 'open' is not allowed in skills: skills cannot read or write files; "
        "get the scene from lyra.api (world_state, object_pose) and take other data as "
        "parameters\n    text = open('x').read()",
    )


@pytest.mark.rules
def test_dunder_import_is_refused(table: FakeTable) -> None:
    refused(
        run("os = __import__('os')\n", table),
        "policy",
        RULES + "<task>:1: '__import__' is not allowed in skills: import at the top of the "
        "module: `from lyra.api import ...` or `from skills.<name> import <name>`\n"
        "    os = __import__('os')",
    )


@pytest.mark.rules
def test_dunder_walk_is_refused(table: FakeTable) -> None:
    dunder = (
        "<task>:1: attribute '{}' is not allowed: dunder attributes reach interpreter internals; "
        "use the value's public attributes\n    classes = ().__class__.__bases__"
    )
    refused(
        run("classes = ().__class__.__bases__\n", table),
        "policy",
        RULES + dunder.format("__bases__") + "\n" + dunder.format("__class__"),
    )


@pytest.mark.rules
def test_frame_walk_is_refused(table: FakeTable) -> None:
    source = "def g():\n    yield gen.gi_frame.f_back\ngen = g()\n"
    frame = (
        "<task>:2: attribute '{}' is not allowed: it reaches files or the interpreter's frames"
        "\n    yield gen.gi_frame.f_back"
    )
    refused(
        run(source, table),
        "policy",
        RULES + frame.format("f_back") + "\n" + frame.format("gi_frame"),
    )


def test_oversized_answer(table: FakeTable) -> None:
    source = "x = 1\n" * 200_000
    refused(
        run(source, table),
        "policy",
        f"the answer is 1200000 bytes, over the {MAX_SOURCE_BYTES}-byte limit: answer with the "
        "code only, without data or repeated text",
    )


def test_missing_skill_lists_the_existing_ones(table: FakeTable, skills_dir: Path) -> None:
    refused(
        run("from skills.stack_tower import stack_tower\nstack_tower()\n", table, skills_dir),
        "policy",
        RULES + "<task>:1: no skill named 'stack_tower'. Known skills: count_per, put_on, "
        "shell, uses_shell\n    from skills.stack_tower import stack_tower",
    )


def test_missing_skill_without_a_skills_folder(table: FakeTable) -> None:
    refused(
        run("from skills.put_on import put_on\n", table),
        "policy",
        RULES + "<task>:1: no skill named 'put_on'. Known skills: (none)\n"
        "    from skills.put_on import put_on",
    )


@pytest.mark.rules
def test_skill_modules_must_pass_the_policy_transitively(
    table: FakeTable, skills_dir: Path
) -> None:
    refused(
        run("from skills.uses_shell import uses_shell\nuses_shell()\n", table, skills_dir),
        "policy",
        RULES + "skills/shell.py:2: module 'os' is not allowed in skills: use lyra.api for the "
        f"robot, skills.<name> for other skills, or one of {ALLOWED}\n    import os",
    )
    assert table.calls == []


# -- os.system by any route ------------------------------------------------------------------


@pytest.mark.rules
@pytest.mark.parametrize(
    ("source", "feedback"),
    [
        (
            "import dataclasses\ndataclasses.sys.modules['os'].system('true')\n",
            "AttributeError: module 'dataclasses' has no attribute 'sys'\n"
            "  at <task>:2: dataclasses.sys.modules['os'].system('true')",
        ),
        (
            "from typing import sys\n",
            "ImportError: cannot import name 'sys' from 'typing' (unknown location)\n"
            "  at <task>:1: from typing import sys",
        ),
        (
            "import collections\ncollections._sys.modules['os'].system('true')\n",
            "AttributeError: module 'collections' has no attribute '_sys'\n"
            "  at <task>:2: collections._sys.modules['os'].system('true')",
        ),
        (
            "import numpy\nnumpy.lib.npyio.os.system('true')\n",
            "AttributeError: module 'numpy' has no attribute 'lib'\n"
            "  at <task>:2: numpy.lib.npyio.os.system('true')",
        ),
        (
            "from numpy.testing import measure\nmeasure('import os')\n",
            "ImportError: importing 'numpy.testing' is not allowed here\n"
            "  at <task>:1: from numpy.testing import measure",
        ),
        (
            "from lyra.api import active\nactive('pick').sim\n",
            "ImportError: cannot import name 'active' from 'lyra.api' (unknown location)\n"
            "  at <task>:1: from lyra.api import active",
        ),
        (
            "import numpy as np\nnp.save('x.npy', np.zeros(3))\n",
            "AttributeError: module 'numpy' has no attribute 'save'\n"
            "  at <task>:2: np.save('x.npy', np.zeros(3))",
        ),
    ],
)
def test_os_system_is_unreachable(source: str, feedback: str, table: FakeTable) -> None:
    result = run(source, table)
    assert (result.ok, result.error, result.feedback) == (False, "exception", feedback)


@pytest.mark.rules
def test_numpy_arrays_cannot_write_files(table: FakeTable) -> None:
    refused(
        run("import numpy as np\nnp.zeros(3).tofile('x')\n", table),
        "policy",
        RULES + "<task>:2: attribute 'tofile' is not allowed: it reaches files or the "
        "interpreter's frames\n    np.zeros(3).tofile('x')",
    )


def test_numpy_methods_that_import_their_own_private_parts_run(table: FakeTable) -> None:
    # ndarray.sum imports numpy._core._methods on first use, through the running frame's
    # __import__: the code's own, which refuses private modules.
    result = run(
        "import numpy as np\nx = np.arange(5.0)\nprint(x.sum(), x.mean(), x.std())\n", table
    )
    assert (result.ok, result.output) == (True, "10.0 2.0 1.4142135623730951\n"), result.feedback


# -- stopped while running -------------------------------------------------------------------


def test_infinite_loop_times_out(table: FakeTable) -> None:
    result = run("while True:\n    pass\n", table, timeout_s=0.3)
    assert (result.ok, result.error) == (False, "timeout")
    assert result.feedback == (
        "the code ran longer than the 0.3 s limit and was stopped; look for a loop that never ends"
    )
    assert 0.3 <= result.wall_s < 1.5


def test_bare_except_cannot_swallow_the_timeout(table: FakeTable) -> None:
    source = (
        "def spin():\n"
        "    while True:\n"
        "        try:\n"
        "            spin()\n"
        "        except:\n"
        "            pass\n"
        "        finally:\n"
        "            continue\n"
        "spin()\n"
    )
    result = run(source, table, timeout_s=0.3)
    assert (result.ok, result.error) == (False, "timeout")
    assert result.wall_s < 1.5


def test_endless_comprehension_times_out(table: FakeTable) -> None:
    result = run("import itertools\nxs = [x for x in itertools.count()]\n", table, timeout_s=0.3)
    assert (result.ok, result.error) == (False, "timeout")


def test_primitive_budget(table: FakeTable) -> None:
    source = "from lyra.api import object_names\nfor _ in range(100):\n    object_names()\n"
    result = run(source, table, max_primitive_calls=5)
    assert (result.ok, result.error, result.primitive_calls) == (False, "budget", 5)
    assert result.feedback == (
        "the code called more than 5 primitives (the limit) and was stopped; look for a loop "
        "that repeats primitive calls\n  at <task>:3: object_names()"
    )


def test_budget_stays_exceeded_when_the_code_catches_the_stop(table: FakeTable) -> None:
    source = (
        "from lyra.api import object_names\n"
        "for _ in range(10):\n"
        "    try:\n"
        "        object_names()\n"
        "    except BaseException:\n"
        "        pass\n"
    )
    result = run(source, table, max_primitive_calls=3)
    assert (result.ok, result.error, result.primitive_calls) == (False, "budget", 3)


# -- exceptions become feedback --------------------------------------------------------------


def test_exception_names_the_line_and_quotes_it(table: FakeTable) -> None:
    source = "from lyra.api import object_pose\nsizes = {}\nz = sizes['red_block']\n"
    result = run(source, table)
    assert (result.ok, result.error) == (False, "exception")
    assert result.feedback == "KeyError: 'red_block'\n  at <task>:3: z = sizes['red_block']"


def test_exception_inside_a_skill_names_the_skill_file_and_line(
    table: FakeTable, skills_dir: Path
) -> None:
    source = "from skills.count_per import count_per\n\nshare = count_per(0)\n"
    result = run(source, table, skills_dir)
    assert (result.ok, result.error, result.primitive_calls) == (False, "exception", 1)
    assert result.feedback == (
        "ZeroDivisionError: division by zero\n"
        "  at <task>:3: share = count_per(0)\n"
        "  at skills/count_per.py:7 in count_per: return len(names) / groups"
    )


def test_backend_error_keeps_its_hint(table: FakeTable) -> None:
    # The fake raises KeyError; a real backend raises UnknownObjectError with the known names.
    from lyra.errors import UnknownObjectError

    def pick(name: str) -> None:
        raise UnknownObjectError(name, table.poses)

    table.pick = pick  # type: ignore[method-assign]
    result = run("from lyra.api import pick\n\npick('red_blok')\n", table)
    assert result.feedback == (
        "UnknownObjectError: unknown object 'red_blok'. Did you mean 'red_block'? Known objects: "
        "blue_block, red_block\n  at <task>:3: pick('red_blok')"
    )
    assert result.primitive_calls == 1


def test_a_point_that_is_not_finite_never_reaches_the_backend(table: FakeTable) -> None:
    source = "from lyra.api import Point, place\nplace(Point(float('nan'), 0.0, 0.02))\n"
    result = run(source, table)
    assert (result.ok, result.error) == (False, "exception")
    assert result.feedback == (
        "WireError: a Point needs finite numbers, got nan\n"
        "  at <task>:2: place(Point(float('nan'), 0.0, 0.02))"
    )
    assert table.calls == []
