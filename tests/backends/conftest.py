"""The conformance suite's backends: every registered one, and the toy one of these tests."""

from collections.abc import Iterator

import pytest

import lyra.backend
from lyra.backend import Backend, BackendSpec, registered
from lyra.errors import MissingDependencyError
from tests.backends.toy import SPEC as TOY

# Collected before any test runs: the installed backends, and the toy.
NAMES = [*registered(), TOY.name]


@pytest.fixture
def toy_registered(monkeypatch: pytest.MonkeyPatch) -> BackendSpec:
    """The toy backend, registered for one test only (other tests see the real registry)."""
    monkeypatch.setitem(lyra.backend._REGISTRY.items, TOY.name, TOY)
    return TOY


@pytest.fixture(params=NAMES)
def backend(request: pytest.FixtureRequest, toy_registered: BackendSpec) -> Iterator[Backend]:
    try:
        made = lyra.backend.make(request.param)
    except MissingDependencyError as error:  # an optional backend (fr3) not installed here
        pytest.skip(str(error))
    yield made
    made.close()
