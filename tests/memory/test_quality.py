"""Retrieval quality on a fixed set: 32 tabletop skills, 26 requests that paraphrase them."""

from __future__ import annotations

from collections.abc import Collection

import pytest

from lyra.library import SkillRecord
from lyra.memory.retrieval import Method, Query
from lyra.memory.store import Memory
from lyra.workspace import Workspace

from .conftest import MemoEmbedder


@pytest.fixture(scope="module")
def memory(
    tmp_path_factory: pytest.TempPathFactory, embedder: MemoEmbedder, library: list[SkillRecord]
) -> Memory:
    workspace = Workspace(tmp_path_factory.mktemp("quality"))
    memory = Memory.open(workspace, embedder)
    memory.rebuild(workspace, library)
    return memory


def recall_at_3(
    memory: Memory, queries: list[dict[str, str]], methods: Collection[Method]
) -> float:
    found = 0
    for query in queries:
        hits = memory.search_skills([Query("instruction", query["text"])], 3, methods)
        found += query["skill"] in [hit.key for hit in hits]
    return found / len(queries)


def test_dense_and_hybrid_recall_beat_full_text(memory: Memory, fixture_data: dict[str, object]):
    queries = fixture_data["queries"]
    assert isinstance(queries, list)
    assert len(queries) >= 20
    assert len(fixture_data["skills"]) >= 30  # type: ignore[arg-type]
    text = recall_at_3(memory, queries, ["text"])
    dense = recall_at_3(memory, queries, ["vector"])
    hybrid = recall_at_3(memory, queries, ["text", "vector"])
    print(f"recall@3 of {len(queries)}: text {text:.3f} dense {dense:.3f} hybrid {hybrid:.3f}")
    assert dense >= 0.9
    # 24 of 26 (docs/memory.md).
    assert hybrid >= 0.92
    assert dense > text
    assert hybrid > text
