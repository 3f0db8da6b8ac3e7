"""Shared fixtures: the MiniLM embedder (loaded once), workspaces and skill records."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np
import pytest
import yaml

from lyra.library import SkillRecord
from lyra.memory import minilm
from lyra.workspace import Workspace

DATA = Path(__file__).parent / "data"


def skill(name: str, summary: str, args: str = "", calls: Iterable[str] = ()) -> SkillRecord:
    """A skill record as the library parser would make it, without a module on disk."""
    signature = f"def {name}(*args: str) -> None:"
    docstring = f"{summary}\n\nArgs:\n    {args}" if args else summary
    return SkillRecord(
        name=name,
        path=Path(f"skills/{name}.py"),
        signature=signature,
        docstring=docstring,
        header=f'{signature}\n    """{docstring}"""',
        source_hash=f"hash-{name}",
        calls_skills=tuple(calls),
        calls_primitives=("pick_place",),
    )


class MemoEmbedder:
    """MiniLM with each text's vector kept, so that every test re-indexes the library fast."""

    def __init__(self, model: minilm.MiniLMEmbedder) -> None:
        self.model = model
        self.name = model.name
        self.dim = model.dim
        self._seen: dict[str, np.ndarray] = {}

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        missing = [t for t in dict.fromkeys(texts) if t not in self._seen]
        self._seen.update(zip(missing, self.model.embed(missing), strict=True))
        return np.array([self._seen[t] for t in texts], dtype=np.float32).reshape(-1, self.dim)


@pytest.fixture(scope="session")
def minilm_model() -> minilm.MiniLMEmbedder:
    if not minilm.available():
        pytest.skip(f"MiniLM weights missing: {minilm.INSTALL_HINT}")
    return minilm.MiniLMEmbedder()


@pytest.fixture(scope="session")
def embedder(minilm_model: minilm.MiniLMEmbedder) -> MemoEmbedder:
    return MemoEmbedder(minilm_model)


@pytest.fixture(scope="session")
def fixture_data() -> dict[str, object]:
    data: dict[str, object] = yaml.safe_load((DATA / "retrieval.yaml").read_text())
    return data


@pytest.fixture(scope="session")
def library(fixture_data: dict[str, object]) -> list[SkillRecord]:
    skills = fixture_data["skills"]
    assert isinstance(skills, dict)
    return [skill(name, s["summary"], s["args"]) for name, s in skills.items()]


@pytest.fixture
def workspace(tmp_path: Path) -> Workspace:
    (tmp_path / "skills").mkdir()
    return Workspace(tmp_path)
