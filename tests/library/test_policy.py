from __future__ import annotations

from lyra.policy import Violation, check_source


def messages(source: str) -> list[str]:
    return [str(v) for v in check_source(source, "skills/x.py")]


def test_allowed_imports_pass() -> None:
    source = (
        "from __future__ import annotations\n"
        "import math\n"
        "import numpy as np\n"
        "from collections.abc import Iterable\n"
        "from lyra.api import pick\n"
        "from skills.stack import stack\n"
    )
    assert check_source(source) == []


def test_forbidden_imports_say_what_to_import_instead() -> None:
    source = (
        "import os\n"
        "import skills.stack\n"
        "from skills.stack import _helper\n"
        "from lyra.embodiment import active\n"
        "from . import stack\n"
        "from math import *\n"
        "import random\n"
    )
    assert messages(source) == [
        "skills/x.py:1: module 'os' is not allowed in skills: use lyra.api for the robot, "
        "skills.<name> for other skills, or one of collections, dataclasses, functools, "
        "itertools, math, numpy, typing",
        "skills/x.py:2: `import skills.stack` is not allowed: write "
        "`from skills.<name> import <name>`",
        "skills/x.py:3: skills.stack exports only the skill 'stack', not '_helper': "
        "write `from skills.stack import stack`",
        "skills/x.py:4: 'lyra.embodiment' is not for skills: import primitives from lyra.api",
        "skills/x.py:5: relative imports are not allowed: write "
        "`from skills.<name> import <name>` or `from lyra.api import ...`",
        "skills/x.py:6: `from math import *` is not allowed: import the names you use",
        "skills/x.py:7: module 'random' is not allowed in skills: use lyra.api for the robot, "
        "skills.<name> for other skills, or one of collections, dataclasses, functools, "
        "itertools, math, numpy, typing",
    ]


def test_forbidden_names_dunders_and_globals() -> None:
    source = (
        "def f(x):\n"
        "    global y\n"
        "    data = open('f').read()\n"
        "    g = getattr(x, 'pose')\n"
        "    return x.__class__, __builtins__\n"
    )
    assert check_source(source, "f.py") == [
        Violation(
            "f.py", 2, "`global` is not allowed: skills keep no state; pass values as parameters"
        ),
        Violation(
            "f.py",
            3,
            "'open' is not allowed in skills: skills cannot read or write "
            "files; get the scene from lyra.api (world_state, object_pose) and take other "
            "data as parameters",
        ),
        Violation(
            "f.py", 4, "'getattr' is not allowed in skills: read the attribute by name (obj.x)"
        ),
        Violation(
            "f.py",
            5,
            "attribute '__class__' is not allowed: dunder attributes reach "
            "interpreter internals; use the value's public attributes",
        ),
        Violation(
            "f.py", 5, "'__builtins__' is not allowed: dunder names reach interpreter internals"
        ),
    ]


def test_syntax_error_is_one_violation() -> None:
    assert messages("def f(:\n") == ["skills/x.py:1: syntax error: invalid syntax"]


def test_routes_past_the_rules_on_dunders_are_closed() -> None:
    """Each of these ran, unrefused, as ordinary generated code: a match class pattern reads
    an attribute as `.` does, typing runs strings as code (a forward reference, or dispatch on
    an annotation), and a format template reads any attribute, its text built at run time."""
    source = (
        "import functools\n"
        "import typing\n"
        "from functools import singledispatch as dispatch\n"
        "def f():\n"
        "    pass\n"
        "match f:\n"
        "    case object(__globals__=g):\n"
        "        pass\n"
        "r = typing.get_args(typing.Optional['()' + '.x'])[0]._evaluate({}, {}, frozenset())\n"
        "t = typing.ForwardRef('x')\n"
        "@functools.singledispatch\n"
        "def g(x):\n"
        "    return 0\n"
        "s = ('{0.' + '_' * 2 + 'globals' + '_' * 2 + '}').format(f)\n"
        "m = str.format_map\n"
        "u = '{0.__class__}'.format(f)\n"
        "v = '{:.3f} m, {name}'.format(0.5, name='red_block')\n"
    )
    internal = "dunder attributes reach interpreter internals; use the value's public attributes"
    runs = "is not allowed in skills: it runs strings as code;"
    template = "template can read any attribute of its arguments; use an f-string"
    assert messages(source) == [
        f"skills/x.py:3: 'singledispatch' {runs} choose with isinstance() instead: dispatch "
        "evaluates annotations",
        f"skills/x.py:7: attribute '__globals__' is not allowed: {internal}",
        f"skills/x.py:9: '_evaluate' {runs} write the type itself, not a string",
        f"skills/x.py:10: 'ForwardRef' {runs} write the type itself, not a string",
        f"skills/x.py:11: 'singledispatch' {runs} choose with isinstance() instead: dispatch "
        "evaluates annotations",
        f"skills/x.py:14: `.format` is allowed only on a string written in the code: its {template}",
        f"skills/x.py:15: `.format_map` is allowed only on a string written in the code: its "
        f"{template}",
        "skills/x.py:16: this `.format` template names an interpreter internal (`__`): use an "
        "f-string",
    ]
