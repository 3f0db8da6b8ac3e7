"""Hostile code against a real tabletop: each snippet is refused or turned into feedback, in
bounded time, and the trusted process, its simulator and the files stay as they were.

The snippets are what an attacker or an unlucky model would write: ways to reach globals
through helpers, typing internals, patching shared classes, files and processes through numpy
and the standard library, C loops that never return, memory and recursion bombs, exceptions
that fight back, and floods of output.
"""

from __future__ import annotations

import hashlib
import io
import math
import platform
import shutil
import socket
import struct
import time
from pathlib import Path

import pytest
import yaml

import lyra.embodiment
from lyra.backend import Backend
from lyra.sandbox import confine, rules_on, run_code, wire

REPO = Path(__file__).resolve().parents[2]
SCENE = {
    "objects": [
        {"type": "block", "color": "red", "poses": [{"x": 0.45, "y": -0.1}]},
        {"type": "block", "color": "blue", "poses": [{"x": 0.55, "y": 0.12}]},
    ]
}
LIMIT_S = 1.0

# snippet -> (error kind, the start of the feedback)
HOSTILE: dict[str, tuple[str, str]] = {
    # -- globals through helpers ------------------------------------------------------------
    "wraps then read a copied dict": (
        "import functools\n"
        "def f(): pass\n"
        "g = functools.wraps(f)(lambda: None)\n"
        "g.__globals__['__builtins__']\n",
        "policy",
        "the code was not run: it breaks the rules for generated code:\n<task>:4: attribute "
        "'__globals__' is not allowed",
    ),
    "a frame from a generator": (
        "def g():\n    yield 1\nx = g()\nx.gi_frame.f_globals\n",
        "policy",
        "the code was not run: it breaks the rules for generated code:\n<task>:4: attribute",
    ),
    "a traceback's frame": (
        "try:\n    1 / 0\nexcept Exception as e:\n    e.__traceback__.tb_frame\n",
        "policy",
        "the code was not run: it breaks the rules for generated code:\n<task>:4: attribute",
    ),
    "subclasses of object": (
        "x = ().__class__.__base__.__subclasses__()\n",
        "policy",
        "the code was not run: it breaks the rules for generated code:\n<task>:1: attribute",
    ),
    "getattr with a string": (
        "getattr((), '__class__')\n",
        "policy",
        "the code was not run: it breaks the rules for generated code:\n<task>:1: 'getattr' "
        "is not allowed in skills",
    ),
    "vars of a function": (
        "def f(): pass\nvars(f)\n",
        "policy",
        "the code was not run: it breaks the rules for generated code:\n<task>:2: 'vars' is "
        "not allowed in skills",
    ),
    "globals()": (
        "globals()['__builtins__']\n",
        "policy",
        "the code was not run: it breaks the rules for generated code:\n<task>:1: 'globals' "
        "is not allowed in skills",
    ),
    "update_wrapper asked for __globals__ by name": (
        "import dataclasses, functools\n"
        "g = {}\n"
        "functools.update_wrapper(type('W', (), {'__globals__': g})(), dataclasses.dataclass,"
        " assigned=(), updated=('__globals__',))\n",
        "policy",
        "the code was not run: it breaks the rules for generated code:\n<task>:3: the string "
        "'__globals__' names an interpreter internal",
    ),
    "dataclasses reaching sys": (
        "import dataclasses\ndataclasses.sys.modules['os']\n",
        "exception",
        "AttributeError: module 'dataclasses' has no attribute 'sys'",
    ),
    # -- typing internals: it runs strings as code -------------------------------------------
    "ForwardRef evaluation": (
        "import typing\ntyping.ForwardRef('__import__(\"os\")')._evaluate(None, None, set())\n",
        "policy",
        "the code was not run: it breaks the rules for generated code:\n<task>:2: '_evaluate' "
        "is not allowed in skills: it runs strings as code",
    ),
    "a forward reference from a subscript, evaluated": (
        "import typing\n"
        "r = typing.get_args(typing.Optional['()' + '.x'])[0]\n"
        "r._evaluate({}, {}, frozenset())\n",
        "policy",
        "the code was not run: it breaks the rules for generated code:\n<task>:3: '_evaluate' "
        "is not allowed in skills: it runs strings as code",
    ),
    "dispatch on a string annotation": (
        "import functools\n"
        "@functools.singledispatch\n"
        "def f(x):\n"
        "    return 0\n"
        "@f.register\n"
        "def _(x: 'print(().__class__.__base__) or int'):\n"
        "    return 1\n"
        "f(3)\n",
        "policy",
        "the code was not run: it breaks the rules for generated code:\n<task>:2: "
        "'singledispatch' is not allowed in skills: it runs strings as code",
    ),
    "get_type_hints on a string annotation": (
        "from typing import get_type_hints\n",
        "policy",
        "the code was not run: it breaks the rules for generated code:\n<task>:1: "
        "'get_type_hints' is not allowed in skills: it runs strings as code",
    ),
    "typing's private evaluator": (
        "import typing\ntyping._eval_type\n",
        "policy",
        "the code was not run: it breaks the rules for generated code:\n<task>:2: '_eval_type' "
        "is not allowed in skills: it runs strings as code",
    ),
    "typing.sys": (
        "from typing import sys\n",
        "exception",
        "ImportError: cannot import name 'sys' from 'typing'",
    ),
    # -- attributes read by name, past the rule on dunder attributes -------------------------
    "a match class pattern reads __globals__": (
        "def f():\n    pass\nmatch f:\n    case object(__globals__=g):\n        print(g)\n",
        "policy",
        "the code was not run: it breaks the rules for generated code:\n<task>:4: attribute "
        "'__globals__' is not allowed",
    ),
    "a format template built at run time reads __globals__": (
        "def f():\n    pass\nprint(('{0.' + '_' * 2 + 'globals' + '_' * 2 + '}').format(f))\n",
        "policy",
        "the code was not run: it breaks the rules for generated code:\n<task>:3: `.format` is "
        "allowed only on a string written in the code",
    ),
    # -- patching shared classes -------------------------------------------------------------
    "patch ObjectState.pose": (
        "from lyra.api import ObjectState, Point, Pose\n"
        "ObjectState.pose = property(lambda self: Pose(Point(0.55, 0.12, 0.06)))\n",
        "ok",
        "",
    ),
    "patch math for later runs": ("import math\nmath.pi = 3\nmath.sqrt = abs\n", "ok", ""),
    "patch a primitive's module": (
        "import lyra.api as api\napi.pick = None\n",
        "policy",
        "the code was not run: it breaks the rules for generated code:\n<task>:1: `import "
        "lyra.api` is not allowed",
    ),
    # -- files and processes through numpy and the standard library ------------------------
    "open a file": (
        "open('/etc/passwd').read()\n",
        "policy",
        "the code was not run: it breaks the rules for generated code:\n<task>:1: 'open' is "
        "not allowed in skills",
    ),
    "import os": (
        "import os\nos.system('touch /tmp/lyra-pwned')\n",
        "policy",
        "the code was not run: it breaks the rules for generated code:\n<task>:1: module 'os' "
        "is not allowed in skills",
    ),
    "importlib": (
        "import importlib\n",
        "policy",
        "the code was not run: it breaks the rules for generated code:\n<task>:1: module "
        "'importlib' is not allowed",
    ),
    "__import__": (
        "__import__('os').system('true')\n",
        "policy",
        "the code was not run: it breaks the rules for generated code:\n<task>:1: '__import__'",
    ),
    "exec a string": (
        "exec('import os')\n",
        "policy",
        "the code was not run: it breaks the rules for generated code:\n<task>:1: 'exec' is "
        "not allowed in skills",
    ),
    "numpy.save": (
        "import numpy as np\nnp.save('/tmp/lyra-x.npy', np.zeros(3))\n",
        "exception",
        "AttributeError: module 'numpy' has no attribute 'save'",
    ),
    "numpy.load": (
        "import numpy as np\nnp.load('/etc/passwd')\n",
        "exception",
        "AttributeError: module 'numpy' has no attribute 'load'",
    ),
    "numpy.fromfile": (
        "import numpy as np\nnp.fromfile('/etc/passwd')\n",
        "exception",
        "AttributeError: module 'numpy' has no attribute 'fromfile'",
    ),
    "ndarray.tofile": (
        "import numpy as np\nnp.zeros(3).tofile('/tmp/lyra-x')\n",
        "policy",
        "the code was not run: it breaks the rules for generated code:\n<task>:2: attribute "
        "'tofile' is not allowed",
    ),
    "numpy.lib.npyio.os": (
        "import numpy\nnumpy.lib.npyio.os.system('true')\n",
        "exception",
        "AttributeError: module 'numpy' has no attribute 'lib'",
    ),
    "numpy.testing's runner": (
        "from numpy.testing import measure\n",
        "exception",
        "ImportError: importing 'numpy.testing' is not allowed here",
    ),
    "collections reaching sys": (
        "import collections\ncollections._sys\n",
        "exception",
        "AttributeError: module 'collections' has no attribute '_sys'",
    ),
    "the primitives module's internals": (
        "from lyra.api import active\n",
        "exception",
        "ImportError: cannot import name 'active' from 'lyra.api'",
    ),
    # -- C loops that never return --------------------------------------------------------
    "sum of an endless iterator": (
        "import itertools\nsum(itertools.count())\n",
        "timeout",
        "the code was stopped after 1 s of its own time (the limit): it was stuck inside a "
        "call that never returns",
    ),
    "max of an endless repeat": (
        "import itertools\nmax(itertools.repeat(1))\n",
        "timeout",
        "the code was stopped after 1 s of its own time",
    ),
    "membership in an endless iterator": (
        "import itertools\n'x' in itertools.repeat('y')\n",
        "timeout",
        "the code was stopped after 1 s of its own time",
    ),
    "reduce with a lambda over count": (
        "import functools, itertools\nfunctools.reduce(lambda a, b: b, itertools.count())\n",
        "timeout",
        "the code was stopped after 1 s of its own time",
    ),
    "a Python loop": (
        "while True:\n    pass\n",
        "timeout",
        "the code ran longer than the 1 s limit and was stopped",
    ),
    "a loop under a bare except": (
        "while True:\n    try:\n        pass\n    except:\n        pass\n",
        "timeout",
        "the code ran longer than the 1 s limit and was stopped",
    ),
    # -- memory and recursion bombs --------------------------------------------------------
    "ten gigabytes of text": ("x = 'x' * 10**10\n", "exception", "MemoryError"),
    "ten billion list items": ("x = [0] * 10**10\n", "exception", "MemoryError"),
    "eight gigabytes of list": ("x = [0] * 10**9\n", "exception", "MemoryError"),
    "a tower of powers": (
        "x = 10**10**10\n",
        "timeout",
        "the code was stopped after 1 s of its own time",
    ),
    "endless recursion": (
        "def f():\n    return f()\nf()\n",
        "exception",
        "RecursionError: maximum recursion depth exceeded",
    ),
    "a lambda that calls itself": (
        "(lambda f: f(f))(lambda f: f(f))\n",
        "exception",
        "RecursionError: maximum recursion depth exceeded",
    ),
    "300 nested parentheses": (
        "x = " + "(" * 300 + "1" + ")" * 300 + "\n",
        "syntax",
        "the code does not compile:\n<task>:1: syntax error: too many nested parentheses",
    ),
    "a 30,000-term expression": (
        "x = " + "1+" * 30_000 + "1\n",
        "policy",
        "<task> nests deeper than 100 levels",
    ),
    "an answer of a megabyte": (
        "x = 1\n" * 200_000,
        "policy",
        "the answer is 1200000 bytes, over the 100000-byte limit",
    ),
    # -- exceptions that fight back ---------------------------------------------------------
    "__str__ that loops": (
        "class E(Exception):\n"
        "    def __str__(self):\n"
        "        while True:\n"
        "            pass\n"
        "raise E()\n",
        "exception",
        "E\n  at <task>:5: raise E()",
    ),
    "__str__ that returns a number": (
        "class E(Exception):\n    def __str__(self):\n        return 7\nraise E()\n",
        "exception",
        "E\n  at <task>:4: raise E()",
    ),
    "__str__ that raises": (
        "class E(Exception):\n    def __str__(self):\n        raise E()\nraise E()\n",
        "exception",
        "E\n  at <task>:4: raise E()",
    ),
    "__str__ that loops in C": (
        "import itertools\n"
        "class E(Exception):\n"
        "    def __str__(self):\n"
        "        return str(sum(itertools.count()))\n"
        "raise E()\n",
        "exception",
        "E\n  at <task>:5: raise E()\nthe code's own exception broke this report: writing its "
        "text ran past the 1 s limit",
    ),
    "__str__ that returns a str subclass that fights back": (
        "class S(str):\n"
        "    def __format__(self, spec):\n"
        "        raise ValueError('format')\n"
        "    def __len__(self):\n"
        "        raise ValueError('len')\n"
        "    def __getitem__(self, key):\n"
        "        raise ValueError('getitem')\n"
        "class E(Exception):\n"
        "    def __str__(self):\n"
        "        return S('its text')\n"
        "raise E()\n",
        "exception",
        "E: its text\n  at <task>:11: raise E()",
    ),
    "__repr__ that raises, in a KeyError": (
        "class K:\n"
        "    def __repr__(self):\n"
        "        raise ValueError('repr')\n"
        "raise KeyError(K())\n",
        "exception",
        "KeyError\n  at <task>:4: raise KeyError(K())",
    ),
    "__traceback__ that raises": (
        "class E(Exception):\n"
        "    @property\n"
        "    def __traceback__(self):\n"
        "        raise ValueError('traceback')\n"
        "raise E('x')\n",
        "exception",
        "E: x\n  at <task>:5: raise E('x')",
    ),
    "__name__ that raises, on the metaclass": (
        "class M(type):\n"
        "    @property\n"
        "    def __name__(cls):\n"
        "        raise ValueError('name')\n"
        "class E(Exception, metaclass=M):\n"
        "    pass\n"
        "raise E('x')\n",
        "exception",
        "E: x\n  at <task>:7: raise E('x')",
    ),
    "__name__ that lies, on the metaclass": (
        "class M(type):\n"
        "    @property\n"
        "    def __name__(cls):\n"
        "        return 'KeyboardInterrupt'\n"
        "class E(Exception, metaclass=M):\n"
        "    pass\n"
        "raise E('x')\n",
        "exception",
        "E: x\n  at <task>:7: raise E('x')",
    ),
    "a class name of a megabyte": (
        "raise type('E' * 10**6, (Exception,), {})('x')\n",
        "exception",
        "E" * 200 + ": x\n  at <task>:1: raise type(",
    ),
    "a message of a megabyte keeps its place": (
        "raise ValueError('x' * 10**6)\n",
        "exception",
        "ValueError: " + "x" * 10_000 + "\n  at <task>:1: raise ValueError('x' * 10**6)",
    ),
    "SystemExit": ("raise SystemExit(3)\n", "exception", "SystemExit: 3"),
    "KeyboardInterrupt": ("raise KeyboardInterrupt\n", "exception", "KeyboardInterrupt"),
    "a ten-megabyte message": ("raise ValueError('x' * 10**7)\n", "exception", "ValueError: xxx"),
    # -- floods of output -------------------------------------------------------------------
    "print ten megabytes": ("print('x' * 10**7)\n", "ok", ""),
    "print a million lines": ("for i in range(10**6):\n    print(i)\n", "ok", ""),
    # -- hostile arguments to primitives ----------------------------------------------------
    "a million names": (
        "from lyra.api import pick\npick(['red_block'] * 10**6)\n",
        "exception",
        "WireError: a message of",
    ),
    "a megabyte name": (
        "from lyra.api import object_pose\nobject_pose('x' * 10**6)\n",
        "exception",
        "UnknownObjectError: unknown object 'xxx",
    ),
    "a point at infinity": (
        "from lyra.api import Point, move_ee\nmove_ee(Point(float('inf'), 0.0, 0.3))\n",
        "exception",
        "WireError: a Point needs finite numbers, got inf",
    ),
    "a primitive with the wrong arguments": (
        "from lyra.api import pick\npick('red_block', 'blue_block', 3)\n",
        "exception",
        "TypeError: pick() takes 1 positional argument but 3 were given",
    ),
}


# An escape past every Python-level rule, found while writing these: update_wrapper's
# `updated` copies a real module function's globals (dataclasses', which hold sys) into a
# dict the code holds. The policy refuses the string '__globals__' now, but a name built at
# run time gets past any such rule; from there os is one lookup away, and the OS layer is
# what stops it.
ESCAPE = (
    "import dataclasses, functools\n"
    "g = {}\n"
    "key = '_' * 2 + 'globals' + '_' * 2\n"
    "W = type('W', (), {key: g})\n"
    "functools.update_wrapper(W(), dataclasses.dataclass, assigned=(), updated=(key,))\n"
    "os = g['sys'].modules['os']\n"
)


def refused(call: str) -> str:
    """The feedback on a call the seccomp layer refuses: its errno names it."""
    number = confine._REFUSED_ERRNO + confine._ARCHES[platform.machine()][1][call]
    return f"OSError: [Errno {number}] the sandbox refused {call}"


ESCAPED: dict[str, tuple[str, str, str]] = {
    "escaped: os.system": (
        ESCAPE + "assert os.system('touch /tmp/lyra-pwned') == 0, 'no shell'\n",
        "exception",
        "AssertionError: no shell",
    ),
    "escaped: write a skill": (
        ESCAPE + "os.open(SKILLS + '/evil.py', os.O_CREAT | os.O_WRONLY)\n",
        "exception",
        "PermissionError: [Errno 13] Permission denied",
    ),
    "escaped: append to a skill": (
        ESCAPE
        + "g['_' * 2 + 'builtins' + '_' * 2]['open'](SKILLS + '/put_on.py', 'a').write('x')\n",
        "exception",
        "PermissionError: [Errno 13] Permission denied",
    ),
    "escaped: read the workspace": (
        ESCAPE + "g['_' * 2 + 'builtins' + '_' * 2]['open'](SKILLS + '/put_on.py').read()\n",
        "exception",
        "PermissionError: [Errno 13] Permission denied",
    ),
    "escaped: fork": (ESCAPE + "os.fork()\n", "exception", refused("clone")),
    "escaped: a socket": (
        ESCAPE + "g['sys'].modules['socket'].socket()\n",
        "exception",
        refused("socket"),
    ),
    "escaped: a call no plan needs": (ESCAPE + "os.uname()\n", "exception", refused("uname")),
    # Defining __str__ passes the AST layer (a def's name is not checked as a dunder), but
    # os._exit needs the escape: only the trusted side can say what ended the process.
    "escaped: __str__ that ends the process": (
        ESCAPE + "class E(Exception):\n    def __str__(self):\n        os._exit(0)\nraise E()\n",
        "exception",
        "E\n  at <task>:10: raise E()\nthe code's own exception broke this report: writing its "
        "text ended the code's process",
    ),
    # Code the ticker never saw (compiled by the real exec) catches each stop and calls again.
    "escaped: a swallowed budget": (
        ESCAPE + "from lyra.api import object_names\n"
        "g['_' * 2 + 'builtins' + '_' * 2]['exec']("
        "'while True:\\n    try:\\n        object_names()\\n    except BaseException:\\n"
        "        pass\\n', {'object_names': object_names})\n",
        "budget",
        "the code called more than 1000 primitives (the limit) and was stopped",
    ),
    # getppid is refused too, and returns -1: kill(-1) would signal every process it may.
    "escaped: signal the trusted process": (
        ESCAPE + "os.kill(os.getppid(), 9)\n",
        "exception",
        refused("kill"),
    ),
}


# With the rules layer off (LYRA_SANDBOX_RULES=off), what the OS layers alone make of the
# snippets whose outcome changes. Those that run ("ok") read the run's own namespace, the
# interpreter's internals or modules already loaded: nothing of the host's. The files and the
# processes are the OS layers' to keep, and the checks after each run see that they did.
OK = ("ok", "")
DENIED = "PermissionError: [Errno 13] Permission denied"
WITHOUT_RULES: dict[str, tuple[str, str] | None] = {
    **dict.fromkeys(
        (
            *("wraps then read a copied dict", "a frame from a generator", "a traceback's frame"),
            *("subclasses of object", "getattr with a string", "vars of a function", "globals()"),
            *("update_wrapper asked for __globals__ by name", "dataclasses reaching sys"),
            *("ForwardRef evaluation", "dispatch on a string annotation", "typing.sys"),
            *("get_type_hints on a string annotation", "typing's private evaluator"),
            *("a match class pattern reads __globals__", "import os", "importlib", "__import__"),
            *("a format template built at run time reads __globals__", "exec a string"),
            "collections reaching sys",
        ),
        OK,
    ),
    "a forward reference from a subscript, evaluated": (
        "exception",
        "AttributeError: 'tuple' object has no attribute 'x'",
    ),
    "patch a primitive's module": (
        "exception",
        "ImportError: cannot import name 'api' from 'lyra.api'",
    ),
    "open a file": ("exception", f"{DENIED}: '/etc/passwd'"),
    "numpy.save": ("exception", f"{DENIED}: '/tmp/lyra-x.npy'"),
    "numpy.load": ("exception", f"{DENIED}: '/etc/passwd'"),
    "numpy.fromfile": ("exception", f"{DENIED}: '/etc/passwd'"),
    "ndarray.tofile": ("exception", f"{DENIED}: '/tmp/lyra-x'"),
    "numpy.lib.npyio.os": (
        "exception",
        "AttributeError: module 'numpy.lib.npyio' has no attribute 'os'",
    ),
    # Imports unittest, which a worker of its own uid reads where Python lies outside root's
    # home, and fails to where it lies inside: either outcome leaves the host as it was.
    "numpy.testing's runner": None,
}


def outcome(name: str) -> tuple[str, str] | None:
    """A snippet's (error kind, start of the feedback) under this run's layers; None: either."""
    _, kind, feedback = {**HOSTILE, **ESCAPED}[name]
    return (kind, feedback) if rules_on() else WITHOUT_RULES.get(name, (kind, feedback))


# The run after each hostile one: it must find the worker, the pipe and the backend as usual.
NEXT = "from lyra.api import object_names\nprint(object_names())\n"


def digest(folder: Path) -> str:
    files = sorted(p for p in folder.rglob("*") if p.is_file())
    return hashlib.sha256(b"".join(p.read_bytes() for p in files)).hexdigest()


@pytest.mark.parametrize("name", [*HOSTILE, *ESCAPED])
def test_hostile_code_leaves_the_host_as_it_was(name: str, ravens: Backend, tmp_path: Path) -> None:
    code = {**HOSTILE, **ESCAPED}[name][0]
    expected = outcome(name)
    skills = tmp_path / "skills"
    code = code.replace("SKILLS", repr(str(skills)))
    shutil.copytree(REPO / "skills", skills, ignore=shutil.ignore_patterns("__pycache__"))
    before = digest(skills)
    pose_property = vars(lyra.embodiment.ObjectState).get("pose")
    ravens.reset(SCENE, 0)
    world = ravens.snapshot()
    started = time.monotonic()
    result = run_code(code, ravens, filename="<task>", skills_root=skills, timeout_s=LIMIT_S)
    elapsed = time.monotonic() - started
    if expected is not None:
        assert (result.error or "ok") == expected[0], result.feedback
        assert result.feedback.startswith(expected[1]), result.feedback
    assert len(result.feedback) <= 20_000 and len(result.output) <= 20_000
    assert elapsed < LIMIT_S + 10  # the limit, the kill's grace, a busy machine
    # The host: its files, its simulator's world, its classes and modules.
    assert digest(skills) == before
    assert ravens.snapshot() == world
    assert vars(lyra.embodiment.ObjectState).get("pose") is pose_property
    assert math.pi == pytest.approx(3.14159265) and math.sqrt(4) == 2
    assert not Path("/tmp/lyra-pwned").exists() and not Path("/tmp/lyra-x.npy").exists()
    after = run_code(NEXT, ravens, skills_root=skills, timeout_s=LIMIT_S)
    assert after.ok and after.output == "['blue_block', 'red_block']\n", after.feedback


def test_a_deep_folder_chain_in_scratch_is_removed(ravens: Backend) -> None:
    # Deeper than shutil.rmtree's recursion reaches on Python 3.11, and than the descriptors
    # a process may hold open (1024 by default).
    code = ESCAPE + (
        "print(os.getcwd())\n"
        "for i in range(3000):\n"
        "    os.mkdir('d')\n"
        "    os.chdir('d')\n"
        "    if i % 100 == 0:\n"
        "        os.close(os.open('f', os.O_CREAT | os.O_WRONLY))\n"
    )
    ravens.reset(SCENE, 0)
    # Time to make them on a slow disk (a millisecond a folder).
    result = run_code(code, ravens, timeout_s=30)
    assert result.ok, result.feedback
    assert not Path(result.output.strip()).exists()
    after = run_code(NEXT, ravens, timeout_s=LIMIT_S)
    assert after.ok and after.output == "['blue_block', 'red_block']\n", after.feedback


def test_a_lone_surrogate_comes_back_as_text_that_can_be_written(ravens: Backend) -> None:
    ravens.reset(SCENE, 0)
    result = run_code("print('\\ud800')\nraise ValueError('\\udfff')\n", ravens)
    assert result.error == "exception"
    assert result.feedback == "ValueError: \\udfff\n  at <task>:2: raise ValueError('\\udfff')"
    assert result.output == "\\ud800\n"
    stream = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
    print(result.feedback, result.output, file=stream)
    yaml.safe_dump({"feedback": result.feedback, "output": result.output}, stream)
    stream.flush()
    after = run_code(NEXT, ravens, timeout_s=LIMIT_S)
    assert after.ok and after.output == "['blue_block', 'red_block']\n", after.feedback


def test_a_worker_that_writes_its_own_json_cannot_send_a_lone_surrogate() -> None:
    # A worker past every rule writes its own JSON: each lone surrogate arrives as its escape's
    # text all the same, lower-cased as Python writes it.
    ours, theirs = socket.socketpair()
    with ours, theirs:
        data = b'{"done": {"feedback": "E: \\ud800", "x\\udfff": [["\\uDBFF"], 1]}}'
        theirs.sendall(struct.pack(">I", len(data)) + data)
        message = wire.receive(ours)
    assert message == {"done": {"feedback": "E: \\ud800", "x\\udfff": [["\\udbff"], 1]}}


def test_a_patched_class_cannot_fake_the_judges_verdict(ravens: Backend) -> None:
    from lyra.episode import run_episode

    code, _, _ = HOSTILE["patch ObjectState.pose"]
    success = [{"on_top": {"upper": "red_block", "lower": "blue_block"}}]
    run = run_episode(ravens, SCENE, 0, code, skills_root=None, success=success)
    assert run.result.ok and not run.ok
    assert run.verdict.reason == "'red_block' is not over 'blue_block'"
