"""The console: one confined worker whose namespace lives across blocks, under session budgets.

Blocks are typed into a console on the toy backend of the conformance suite; each test asserts
the text the console prints, the session's counts, and that the worker is gone when it ends.
"""

from __future__ import annotations

import dataclasses
import math
import re
import shutil
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import lyra.embodiment
from lyra.sandbox import LAYERS, Console, ConsoleResult, EndConsole, confine, open_console, rules_on
from tests.backends.toy import SAMPLE, ToyBackend
from tests.sandbox.test_hostile import ESCAPE, ESCAPED, HOSTILE, REPO, digest, outcome

ALLOWED = "collections, dataclasses, functools, itertools, math, numpy, typing"
RULES = "the code was not run: it breaks the rules for generated code:\n"
NAMES = "from lyra.api import object_names, pick, place, Point\n"
# run_code's hostile snippets that end a console's session: its worker is gone after them.
ENDING = (
    "__str__ that loops in C",
    "escaped: __str__ that ends the process",
    "escaped: a swallowed budget",
)


@pytest.fixture
def toy() -> ToyBackend:
    backend = ToyBackend()
    backend.reset(SAMPLE.scene, 0)
    return backend


@pytest.fixture
def console(toy: ToyBackend) -> Iterator[Console]:
    with open_console(toy, timeout_s=10) as opened:
        yield opened


def gone(pid: int) -> bool:
    """The process has ended: no such process, or a zombie its zygote has not reaped yet."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return True
    return stat.rpartition(")")[2].split()[0] in ("Z", "X")


def typed(console: Console, *blocks: str) -> list[ConsoleResult]:
    return [console.run(block) for block in blocks]


# -- a console's namespace ---------------------------------------------------------------------


def test_names_defined_in_one_block_are_there_in_the_next(console: Console) -> None:
    results = typed(
        console,
        NAMES + "count = len(object_names())\n",
        "def twice(n):\n    return 2 * n\n",
        "class Box:\n    size = 0.04\n",
        "print(twice(count), Box.size, object_names())\n",
    )
    assert [(r.ok, r.text) for r in results] == [
        (True, ""),
        (True, ""),
        (True, ""),
        (True, "4 0.04 ['a', 'b']\n"),
    ]
    assert [r.primitive_calls for r in results] == [1, 1, 1, 2]


def test_values_print_as_the_python_console_prints_them(console: Console) -> None:
    results = typed(
        console,
        "x = 41\n",
        "x + 1\n",
        "None\n",
        "print('hi')\n",
        "'text'\n",
        "print('a', end='')\nx\n[1, 2]\n",
        "for i in range(2):\n    i\n",
        "def f():\n    3\n    return None\nf()\n",
        NAMES + "Point(0.5, 0.0, 0.1)\n",
    )
    assert [r.text for r in results] == [
        "",
        "42\n",
        "",
        "hi\n",
        "'text'\n",
        "a41\n[1, 2]\n",
        "0\n1\n",
        "",
        "Point(x=0.5, y=0.0, z=0.1)\n",
    ]
    assert all(r.ok and r.error is None for r in results)


# -- errors are what the console prints, and the session goes on --------------------------------


def test_an_exception_prints_its_traceback_and_the_session_goes_on(console: Console) -> None:
    results = typed(
        console,
        "def share(n):\n    return 4 / n\n",
        "print('before')\nshare(0)\n",
        "share(2)\n",
    )
    assert (results[1].ok, results[1].error) == (False, "exception")
    assert results[1].text == (
        "before\n"
        "Traceback (most recent call last):\n"
        '  File "<python-input-1>", line 2, in <module>\n'
        "    share(0)\n"
        '  File "<python-input-0>", line 2, in share\n'
        "    return 4 / n\n"
        "ZeroDivisionError: division by zero\n"
    )
    assert (results[2].ok, results[2].text, results[2].ended) == (True, "2.0\n", "")


def test_a_primitives_error_keeps_its_hint(console: Console) -> None:
    result = console.run(NAMES + "pick('c')\n")
    assert (result.error, result.primitive_calls) == ("exception", 1)
    assert result.text == (
        "Traceback (most recent call last):\n"
        '  File "<python-input-0>", line 2, in <module>\n'
        "    pick('c')\n"
        "UnknownObjectError: unknown object 'c'. Known objects: a, b\n"
    )


def test_an_exceptions_hostile_text_is_made_safe(console: Console) -> None:
    results = typed(
        console,
        "class E(Exception):\n    def __str__(self):\n        raise E()\n",
        "raise E()\n",
        "class R:\n    def __repr__(self):\n        return 7\n",
        "R()\n",
        "raise ValueError('x' * 10**7)\n",
    )
    assert results[1].text == (
        "Traceback (most recent call last):\n"
        '  File "<python-input-1>", line 1, in <module>\n'
        "    raise E()\n"
        "E\n"
    )
    assert results[3].text == (
        "Traceback (most recent call last):\n"
        '  File "<python-input-3>", line 1, in <module>\n'
        "    R()\n"
        "TypeError: __repr__ returned non-string (type int)\n"
    )
    top = (
        "Traceback (most recent call last):\n"
        '  File "<python-input-4>", line 1, in <module>\n'
        "    raise ValueError('x' * 10**7)\n"
        "ValueError: "
    )
    assert results[4].text == top + "x" * 10_000 + "\n"  # the text is cut, not the traceback


def test_a_deep_traceback_keeps_its_last_line(console: Console) -> None:
    results = typed(
        console,
        "def f():\n    return f()\n",
        "f()\n",
        "def ping(n):\n    return pong(n)\ndef pong(n):\n    return ping(n)\n",
        "ping(0)\n",
    )
    # How deep the recursion goes before Python stops it depends on the worker's own frames.
    assert re.fullmatch(
        re.escape(
            "Traceback (most recent call last):\n"
            '  File "<python-input-1>", line 1, in <module>\n'
            "    f()\n" + '  File "<python-input-0>", line 2, in f\n    return f()\n' * 3
        )
        + r"  \[Previous line repeated 9\d\d more times\]\n"
        + r"RecursionError: maximum recursion depth exceeded[\w ]*\n",
        results[1].text,
    )
    rows = results[3].text.splitlines()
    # The heading, ten frames of two lines at each end, the elision, the exception.
    assert len(rows) == 1 + 2 * 10 * 2 + 1 + 1
    assert rows[:3] == [
        "Traceback (most recent call last):",
        '  File "<python-input-3>", line 1, in <module>',
        "    ping(0)",
    ]
    assert re.fullmatch(r"  \[\.\.\. \d+ more frames \.\.\.\]", rows[21])
    assert rows[-3:-1] == ['  File "<python-input-2>", line 4, in pong', "    return ping(n)"]
    assert rows[-1].startswith("RecursionError: maximum recursion depth exceeded")


@pytest.mark.rules
def test_a_refused_block_is_text_and_the_session_goes_on(console: Console) -> None:
    results = typed(
        console,
        "x = 1\n",
        "import os\nos.system('true')\n",
        "from lyra.api import *\n",
        "x = (\n",
        "x\n",
    )
    assert [(r.ok, r.error) for r in results] == [
        (True, None),
        (False, "policy"),
        (False, "policy"),
        (False, "syntax"),
        (True, None),
    ]
    assert results[1].text == (
        RULES + "<python-input-1>:1: module 'os' is not allowed in skills: use lyra.api for the "
        f"robot, skills.<name> for other skills, or one of {ALLOWED}\n    import os\n"
    )
    assert results[2].text == (
        RULES + "<python-input-2>:1: `from lyra.api import *` is not allowed: import the names "
        "you use\n    from lyra.api import *\n"
    )
    assert results[3].text == (
        "the code does not compile:\n<python-input-3>:1: syntax error: '(' was never closed\n"
        "    x = (\n"
    )
    assert results[4].text == "1\n"


@pytest.mark.rules
def test_skills_are_checked_and_imported_as_in_a_run(toy: ToyBackend, skills_dir: Path) -> None:
    with open_console(toy, skills_root=skills_dir) as console:
        results = typed(
            console,
            "from skills.count_per import count_per\n",
            "count_per(2)\n",
            "from skills.uses_shell import uses_shell\n",
        )
    assert [(r.ok, r.text, r.primitive_calls) for r in results[:2]] == [
        (True, "", 0),
        (True, "1.0\n", 1),
    ]
    assert results[2].text == (
        RULES + "skills/shell.py:2: module 'os' is not allowed in skills: use lyra.api for the "
        f"robot, skills.<name> for other skills, or one of {ALLOWED}\n    import os\n"
    )


# -- budgets are totals over the session ---------------------------------------------------------


def test_primitive_calls_are_counted_over_the_session(toy: ToyBackend) -> None:
    two = "names = object_names()\nnames = object_names()\n"
    with open_console(toy, max_primitive_calls=3) as console:
        results = typed(console, NAMES + two, two, "x = 1\n")
        assert gone(console.pid)
    assert [(r.ok, r.error, r.primitive_calls) for r in results] == [
        (True, None, 2),
        (False, "budget", 3),
        (False, "budget", 3),
    ]
    stopped = (
        "the code called more than 3 primitives (the limit) and was stopped; look for a loop "
        "that repeats primitive calls"
    )
    assert results[1].text == stopped + "\n  at <python-input-1>:2: names = object_names()\n"
    assert results[2].text == f"nothing was run: the console has ended ({stopped})\n"
    assert results[1].ended == results[2].ended == stopped


def test_simulated_time_is_counted_over_the_session(toy: ToyBackend) -> None:
    with open_console(toy, max_sim_seconds=0.5) as console:
        results = typed(console, NAMES + "pick('a')\n", "object_names()\n")
    assert [(r.ok, r.error) for r in results] == [(True, None), (False, "budget")]
    assert results[1].text == (
        "the plan used more than 0.5 s of simulated time (the limit) and was stopped; look for "
        "motions repeated in a loop\n  at <python-input-1>:1: object_names()\n"
    )
    assert toy.sim_time > 0.5


def test_on_a_robot_the_time_budget_is_the_robots_own_clock(toy: ToyBackend) -> None:
    toy.spec = dataclasses.replace(toy.spec, robot=True)
    with open_console(toy, max_sim_seconds=0.5) as console:
        results = typed(console, NAMES + "pick('a')\n", "object_names()\n")
    assert results[1].text == (
        "the plan used more than 0.5 s of the robot's time (the limit) and was stopped; look "
        "for motions repeated in a loop\n  at <python-input-1>:1: object_names()\n"
    )


def test_the_codes_own_time_is_counted_over_blocks_not_between_them(toy: ToyBackend) -> None:
    # Each block spins for 0.4 s by the trusted clock, nearly all of it its own time.
    spin = "start = now()\nwhile now() - start < 0.4:\n    total = sum(range(10**6))\n"
    functions = {"now": time.monotonic, "nap": lambda: time.sleep(1.2)}
    with open_console(toy, timeout_s=1.0, functions=functions) as console:
        napped = console.run("nap()\n")  # a trusted function's time is not the code's
        time.sleep(1.2)  # nor is the time between blocks
        results = typed(console, spin, spin, spin)
        assert gone(console.pid)
    assert (napped.ok, napped.text) == (True, "")
    assert [(r.ok, r.error) for r in results] == [(True, None), (True, None), (False, "timeout")]
    assert results[2].text == (
        "the code ran longer than the 1 s limit and was stopped; look for a loop that never ends\n"
    )


# -- trusted functions -----------------------------------------------------------------------------


def test_a_trusted_functions_value_reaches_the_code_and_is_no_primitive_call(
    toy: ToyBackend,
) -> None:
    heard: list[Any] = []
    functions: dict[str, Callable[..., Any]] = {
        "wait_for_trigger": lambda: {"type": "dialog", "text": "put a on b"},
        "learn_from_interaction": lambda **kwargs: heard.append(kwargs),
        "fail": lambda: 1 / 0,
    }
    primitives: list[str] = []
    with open_console(toy, functions=functions, on_primitive=primitives.append) as console:
        results = typed(
            console,
            "wait_for_trigger()\n",
            "said = wait_for_trigger()\nprint(said['text'].split())\n",
            NAMES + "learn_from_interaction(name='stack', boxes=object_names())\n",
            "try:\n    fail()\nexcept ZeroDivisionError as error:\n    print('caught', error)\n",
        )
    assert [(r.ok, r.text, r.primitive_calls) for r in results] == [
        (True, "{'type': 'dialog', 'text': 'put a on b'}\n", 0),
        (True, "['put', 'a', 'on', 'b']\n", 0),
        (True, "", 1),
        (True, "caught division by zero\n", 1),
    ]
    assert heard == [{"name": "stack", "boxes": ["a", "b"]}]
    assert primitives == ["object_names"]


def test_a_trusted_function_can_end_the_session(toy: ToyBackend) -> None:
    utterances = iter(["stack the boxes"])

    def wait_for_trigger() -> dict[str, str]:
        for text in utterances:
            return {"type": "dialog", "text": text}
        raise EndConsole("the person ended the session")

    with open_console(toy, functions={"wait_for_trigger": wait_for_trigger}) as console:
        block = "said = wait_for_trigger()\nprint(said['text'])\n"
        results = typed(console, block, block, "x = 1\n")
        assert gone(console.pid)
    ended = "the person ended the session"
    assert [(r.ok, r.error, r.text, r.ended) for r in results] == [
        (True, None, "stack the boxes\n", ""),
        (True, None, "", ended),
        (False, None, f"nothing was run: the console has ended ({ended})\n", ended),
    ]


def test_an_interrupted_block_ends_the_session(toy: ToyBackend) -> None:
    def interrupt() -> None:
        raise KeyboardInterrupt

    with open_console(toy, functions={"interrupt": interrupt}) as console:
        with pytest.raises(KeyboardInterrupt):
            console.run("interrupt()\n")
        assert gone(console.pid)
        after = console.run("1\n")
    assert after.text == "nothing was run: the console has ended (it was interrupted)\n"
    assert toy.toy.stopped  # the backend is told to stop, as in an interrupted run


@pytest.mark.parametrize("name", ["pick", "_secret", "not a name"])
def test_a_trusted_function_needs_a_name_of_its_own(toy: ToyBackend, name: str) -> None:
    with (
        pytest.raises(ValueError, match="a console function needs a public name"),
        open_console(toy, functions={name: print}),
    ):
        pass


# -- the worker and its confinement ----------------------------------------------------------------


def test_the_worker_lives_for_the_session_and_is_gone_after_it(toy: ToyBackend) -> None:
    with open_console(toy) as console:
        pid = console.pid
        typed(console, "x = 1\n", "x\n")
        assert not gone(pid)
    assert gone(pid)
    after = console.run("x\n")
    assert (after.ok, after.text) == (
        False,
        "nothing was run: the console has ended (it was closed)\n",
    )


def test_a_console_runs_under_every_layer_and_requires_them_as_a_run_does(
    toy: ToyBackend,
) -> None:
    layers = LAYERS if rules_on() else confine.OS_LAYERS
    with open_console(toy, require=layers) as console:
        assert console.run("1 + 1\n").text == "2\n"
    with open_console(toy, require=("tpm",)) as console:
        results = typed(console, "x = 1\n", "x = 2\n")
    assert [(r.ok, r.error, r.ended) for r in results] == [(False, "policy", "")] * 2
    assert results[0].text == (
        "the code was not run: this machine cannot confine it as required (tpm: not a layer "
        "lyra knows); run on a machine with these layers, or do not require them\n"
    )


def test_hostile_blocks_leave_the_host_as_it_was(toy: ToyBackend, tmp_path: Path) -> None:
    """run_code's hostile snippets that do not end a session, typed into one console."""
    skills = tmp_path / "skills"
    shutil.copytree(REPO / "skills", skills, ignore=shutil.ignore_patterns("__pycache__"))
    before, world = digest(skills), toy.snapshot()
    pose_property = vars(lyra.embodiment.ObjectState).get("pose")
    snippets = {
        name: snippet
        for name, snippet in HOSTILE.items()
        # These end the session, or use up its time.
        if snippet[1] != "timeout" and name not in (*ENDING, "__str__ that loops")
    }
    with open_console(toy, skills_root=skills, timeout_s=20) as console:
        for index, (name, (code, _, _)) in enumerate(snippets.items()):
            result = console.run(code)
            expected_outcome = outcome(name)
            if expected_outcome is None:
                continue
            kind, feedback = expected_outcome
            assert (result.error or "ok") == kind, (name, result.text)
            expected = feedback.replace("<task>", f"<python-input-{index}>")
            if kind == "exception":
                # The last line of the console's traceback is the run's feedback.
                last = result.text.splitlines()[-1]
                assert last.startswith(expected.splitlines()[0]), (name, result.text)
            else:
                assert result.text.startswith(expected), (name, result.text)
            assert len(result.text) <= 40_002, name
        assert console.ended == ""
    assert digest(skills) == before
    assert toy.snapshot() == world
    assert vars(lyra.embodiment.ObjectState).get("pose") is pose_property
    assert math.pi == pytest.approx(3.14159265) and math.sqrt(4) == 2


def test_escaped_code_stays_confined_in_every_later_block(toy: ToyBackend, tmp_path: Path) -> None:
    """Past every Python-level rule in one block, the OS layers still hold in the next ones."""
    skills = tmp_path / "skills"
    shutil.copytree(REPO / "skills", skills, ignore=shutil.ignore_patterns("__pycache__"))
    before = digest(skills)
    with open_console(toy, skills_root=skills) as console:
        escaped = console.run(ESCAPE)
        assert (escaped.ok, escaped.text.startswith("<__lyra_task__.W object at ")) == (True, True)
        for name, (code, kind, feedback) in ESCAPED.items():
            if name in ENDING:
                continue
            attack = code.removeprefix(ESCAPE).replace("SKILLS", repr(str(skills)))
            result = console.run(attack)
            assert (result.error, result.text.splitlines()[-1].startswith(feedback)) == (
                kind,
                True,
            ), (name, result.text)
    assert digest(skills) == before
    assert not Path("/tmp/lyra-pwned").exists()


@pytest.mark.parametrize("name", ENDING)
def test_a_snippet_that_ends_the_worker_ends_the_session(toy: ToyBackend, name: str) -> None:
    code, kind, feedback = {**HOSTILE, **ESCAPED}[name]
    with open_console(toy, timeout_s=1) as console:
        results = typed(console, code, "x = 1\n")
        assert gone(console.pid)
    ended = results[0].ended
    assert [(r.ok, r.error, r.ended) for r in results] == [(False, kind, ended)] * 2
    # The feedback names the cause as a run's does; a console's traceback comes first.
    last = feedback.replace("<task>", "<python-input-0>").splitlines()[-1]
    assert last in results[0].text and ended in results[0].text, results[0].text
    assert results[1].text == f"nothing was run: the console has ended ({ended})\n"


@pytest.mark.parametrize(
    ("block", "text"),
    [
        (
            "while True:\n    pass\n",
            "the code ran longer than the 0.5 s limit and was stopped; look for a loop that "
            "never ends\n",
        ),
        (
            "import itertools\nsum(itertools.count())\n",
            "the code was stopped after 0.5 s of its own time (the limit): it was stuck inside "
            "a call that never returns, such as summing an endless iterator; make every loop "
            "end\n",
        ),
    ],
)
def test_an_endless_block_ends_the_session_within_its_time(
    toy: ToyBackend, block: str, text: str
) -> None:
    with open_console(toy, timeout_s=0.5) as console:
        started = time.monotonic()
        results = typed(console, "x = 1\n", block, "x\n")
        elapsed = time.monotonic() - started
        assert gone(console.pid)
    assert [(r.ok, r.error) for r in results] == [
        (True, None),
        (False, "timeout"),
        (False, "timeout"),
    ]
    assert results[1].text == text
    assert results[2].text == f"nothing was run: the console has ended ({text.rstrip()})\n"
    assert elapsed < 0.5 + 2 + 5  # the limit, the kill's grace, a busy machine
