"""One Kitchen backend for the module: building its environment costs most of a second."""

from collections.abc import Iterator

import pytest

from envs.kitchen.backend import KitchenBackend


@pytest.fixture(scope="module")
def backend() -> Iterator[KitchenBackend]:
    made = KitchenBackend()
    yield made
    made.close()
