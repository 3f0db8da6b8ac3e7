"""One MetaWorld backend for the module: building its environments costs half a second each."""

from collections.abc import Iterator

import pytest

from envs.metaworld.backend import MetaWorldBackend


@pytest.fixture(scope="module")
def backend() -> Iterator[MetaWorldBackend]:
    made = MetaWorldBackend()
    yield made
    made.close()
