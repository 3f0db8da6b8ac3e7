"""Fixtures shared by every test folder."""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator

import pytest

from lyra.backend import Backend, make
from lyra.sandbox import LAYERS, rules_on, run_code
from tests.chat_server import ChatServer


def as_from_a_terminal() -> None:
    """A child process's ``preexec_fn``: Ctrl-C reaches it as it would from a terminal.

    A shell that starts this suite in the background without job control (``bash .ci/run &``)
    ignores SIGINT, and a child would inherit that and never see the test's Ctrl-C.
    """
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.fixture(scope="module")
def ravens() -> Iterator[Backend]:
    """One tabletop per test module: episodes reset it, so tests that share it do not mix."""
    backend = make("ravens")
    yield backend
    backend.close()


@pytest.fixture
def chat_server() -> Iterator[ChatServer]:
    server = ChatServer()
    thread = threading.Thread(target=server.serve_forever, args=(0.01,), daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()
    assert server.replies == [], "the test scripted replies that were never asked for"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--refresh-prompts",
        action="store_true",
        help="write the prompts as rendered today to tests/prompts/ (see tests/test_prompts.py)",
    )


def pytest_report_header() -> str:
    """The layers generated code runs under here, so that a report says what was tested."""
    from tests.sandbox.conftest import FakeTable

    confined = run_code("x = 1\n", FakeTable()).confined
    missing = [layer for layer in LAYERS if layer not in confined]
    return f"sandbox layers: {', '.join(confined)}; missing: {', '.join(missing) or 'none'}"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    if rules_on():
        return
    skip = pytest.mark.skip(reason="the rules layer is off (LYRA_SANDBOX_RULES=off)")
    for item in items:
        if item.get_closest_marker("rules"):
            item.add_marker(skip)
