"""The memory on a real LanceDB folder: indexing, rebuilding, hints, corrections, mismatches."""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from dataclasses import replace

import numpy as np
import pytest

from lyra.api import PRIMITIVES
from lyra.examples import Example, save_example
from lyra.library import SkillRecord
from lyra.library.parse import brief_header
from lyra.memory.errors import EmbedderMismatchError, EmbedderUnavailableError
from lyra.memory.retrieval import Match, Method, Query, Retrieval
from lyra.memory.store import Memory, memory_dir
from lyra.workspace import Workspace

from .conftest import MemoEmbedder, skill

TEXT: tuple[Method, ...] = ("text",)
HYBRID: tuple[Method, ...] = ("text", "vector")
EXAMPLES = [
    Example(
        id="tower_rgb",
        instruction="build a tower with the red, green and blue blocks",
        code="build_tower(['red', 'green', 'blue'])",
        skills=["build_tower"],
    ),
    Example(
        id="pyramid_six",
        instruction="make a pyramid out of six blocks, wide at the bottom",
        code="build_pyramid(blocks)",
        skills=["build_pyramid"],
    ),
    Example(
        id="house_small",
        instruction="build a small house with two pillars and a roof",
        code="build_house(['a', 'b'], 'roof')",
        skills=["build_house"],
    ),
    Example(
        id="sort_colors",
        instruction="sort the blocks by colour into the three zones",
        code="sort_by_color(blocks, zones)",
        skills=["sort_by_color"],
    ),
    Example(
        id="bowl_apple",
        instruction="put the apple in the bowl",
        code="put_in_bowl('apple', 'bowl')",
        skills=["put_in_bowl"],
        snapshot={"apple": [0.1, 0.2, 0.05]},
    ),
]


@pytest.fixture
def filled(workspace: Workspace, embedder: MemoEmbedder, library: list[SkillRecord]) -> Memory:
    for example in EXAMPLES:
        save_example(example, workspace.examples_dir)
    memory = Memory.open(workspace, embedder)
    assert memory.rebuild(workspace, library) == (32, 5)
    return memory


def headers(library: list[SkillRecord]) -> dict[str, str]:
    return {record.name: record.header for record in library}


def test_memory_lives_in_the_workspace_state_folder(filled: Memory, workspace: Workspace):
    assert filled.root == workspace.root / ".lyra" / "memory" == memory_dir(workspace)
    assert sorted(p.name for p in filled.root.iterdir()) == [
        "examples.lance",
        "skills.lance",
        "sources.sha256",  # the digest of the files the index was built from
    ]


def test_filters_see_the_rows_written_since_the_last_retrieval(filled: Memory):
    # What the filters read is kept between retrievals: every write must renew it.
    tabletop = {"capabilities": set(PRIMITIVES) - {"push"}, "backends": {"ravens"}}
    first = filled.retrieve("put the apple in the bowl", **tabletop)
    assert first == filled.retrieve("put the apple in the bowl")  # nothing to leave out
    filled.index_example(
        Example(
            id="bowl_apple_mw",
            instruction="put the apple in the bowl",
            code="pass",
            skills=[],
            backend="metaworld",
        )
    )
    pusher = replace(
        skill("push_apple_to_bowl", "Push the apple into the bowl."), calls_primitives=("push",)
    )
    filled.index_skill(pusher)
    everything = filled.retrieve("put the apple in the bowl")
    assert "bowl_apple_mw" in [e.id for e in everything.examples]
    assert "push_apple_to_bowl" in [s.name for s in everything.skills]
    kept = filled.retrieve("put the apple in the bowl", **tabletop)
    assert "bowl_apple_mw" not in [e.id for e in kept.examples]
    assert "push_apple_to_bowl" not in [s.name for s in kept.skills]
    filled.remove_example("bowl_apple_mw")
    filled.remove_skill("push_apple_to_bowl")
    assert filled.retrieve("put the apple in the bowl", **tabletop) == first


def test_rebuild_after_deleting_the_state_folder_retrieves_the_same(
    filled: Memory, workspace: Workspace, embedder: MemoEmbedder, library: list[SkillRecord]
):
    before = filled.retrieve("stack the blocks into a tower", correction="wider at the bottom")
    shutil.rmtree(workspace.state_dir)
    rebuilt = Memory.open(workspace, embedder)
    assert rebuilt.rebuild(workspace, library) == (32, 5)
    after = rebuilt.retrieve("stack the blocks into a tower", correction="wider at the bottom")
    assert after == before
    assert [e.id for e in after.examples][:2] == ["pyramid_six", "tower_rgb"]


def test_rebuild_shows_progress_in_parts_and_indexes_as_in_one_part(
    filled: Memory,
    workspace: Workspace,
    embedder: MemoEmbedder,
    library: list[SkillRecord],
    monkeypatch: pytest.MonkeyPatch,
):
    import io

    from lyra.memory import store
    from lyra.progress import Bar

    before = filled.retrieve("stack the blocks into a tower", correction="wider at the bottom")
    shutil.rmtree(workspace.state_dir)
    monkeypatch.setattr(store, "PROGRESS_ROWS", 8)
    shown = io.StringIO()
    rebuilt = Memory.open(workspace, embedder)
    assert rebuilt.rebuild(workspace, library, lambda n, label: Bar(n, label, stream=shown)) == (
        32,
        5,
    )
    steps = [line.split(" ok, ")[1].split(",")[0] for line in shown.getvalue().splitlines()]
    assert steps == [
        *(f"{done} of 32 skills" for done in (8, 16, 24, 32)),
        "5 of 5 examples",
    ]
    assert shown.getvalue().splitlines()[-1].startswith("[####################] 5/5 ")
    after = rebuilt.retrieve("stack the blocks into a tower", correction="wider at the bottom")
    assert after == before


def test_examples_bring_the_skills_they_call(filled: Memory, library: list[SkillRecord]):
    retrieval = filled.retrieve("put the apple in the dish", k_examples=1, k_skills=2)
    assert [e.id for e in retrieval.examples] == ["bowl_apple"]
    assert [(s.name, s.via) for s in retrieval.skills] == [
        ("put_in_bowl", ("similar", "called by example bowl_apple")),
        ("empty_bowl", ("similar",)),
    ]
    assert [s.header for s in retrieval.skills] == [
        headers(library)["put_in_bowl"],
        headers(library)["empty_bowl"],
    ]
    by_name = {r.name: r for r in library}
    assert [s.brief for s in retrieval.skills] == [
        brief_header(by_name[n].signature, by_name[n].docstring)
        for n in ("put_in_bowl", "empty_bowl")
    ]


def test_a_hint_naming_a_skill_puts_it_first_even_when_similarity_misses(
    filled: Memory, library: list[SkillRecord]
):
    instruction = "put the apple in the bowl"
    assert "mirror_layout" not in [s.name for s in filled.retrieve(instruction).skills]
    first = filled.retrieve(instruction, hints=["mirror_layout does this"]).skills[0]
    # The hint is also searched as a query, and its words find the skill by similarity too.
    assert (first.name, first.via) == ("mirror_layout", ("named by hint 1", "similar"))
    assert first.header == headers(library)["mirror_layout"]


def test_a_hint_text_is_searched_as_an_extra_query(filled: Memory):
    retrieval = filled.retrieve(
        "put the apple in the bowl", hints=["fence a region in"], k_skills=3
    )
    hinted = [s for s in retrieval.skills if any(m.query == "hint 1" for m in s.matches)]
    assert "build_enclosure" in [s.name for s in hinted]


def test_a_text_two_queries_share_is_embedded_once_and_counts_for_both(
    filled: Memory, embedder: MemoEmbedder
):
    instruction = "put the apple in the bowl"
    asked: list[list[str]] = []

    class Counting:
        name, dim = embedder.name, embedder.dim

        def embed(self, texts: Sequence[str]) -> np.ndarray:
            asked.append(list(texts))
            return embedder.embed(texts)

    filled.embedder = Counting()
    retrieval = filled.retrieve(instruction, hints=[instruction, "fence a region in"])
    assert asked == [[instruction, "fence a region in"]]
    first = retrieval.examples[0]
    by_query = {(m.query, m.method): (m.rank, m.score) for m in first.matches}
    for method in HYBRID:
        assert by_query[("instruction", method)] == by_query[("hint 1", method)]


def test_a_correction_changes_the_ranking(filled: Memory):
    instruction = "build a tower with the red, green and blue blocks"
    plain = filled.retrieve(instruction, k_examples=2)
    corrected = filled.retrieve(
        instruction, correction="no, make it wide at the bottom like a pyramid", k_examples=2
    )
    assert [e.id for e in plain.examples] == ["tower_rgb", "house_small"]
    assert [e.id for e in corrected.examples] == ["pyramid_six", "tower_rgb"]
    assert {m.query for m in corrected.examples[0].matches} == {"instruction", "correction"}


def test_upsert_replaces_and_remove_forgets(filled: Memory, library: list[SkillRecord]):
    changed = EXAMPLES[4].model_copy(update={"instruction": "put the pear in the bowl"})
    filled.index_example(changed)
    hits = filled.retrieve("the pear goes into the bowl", k_examples=5).examples
    assert [(e.id, e.instruction) for e in hits if e.id == "bowl_apple"] == [
        ("bowl_apple", "put the pear in the bowl")
    ]
    assert len(hits) == 5
    filled.remove_example("bowl_apple")
    assert "bowl_apple" not in [e.id for e in filled.retrieve("the pear", k_examples=10).examples]
    filled.index_skill(skill("put_in_bowl", "Drop a fruit into a dish."))
    found = filled.search_skills([Query("q", "drop a fruit into a dish")], limit=1)
    assert [(f.key, f.row["summary"]) for f in found] == [
        ("put_in_bowl", "Drop a fruit into a dish.")
    ]
    filled.remove_skill("put_in_bowl")
    assert "put_in_bowl" not in [f.key for f in filled.search_skills([Query("q", "dish")], 32)]


def test_incremental_indexing_starts_an_empty_memory(workspace: Workspace, embedder: MemoEmbedder):
    memory = Memory.open(workspace, embedder)
    assert memory.retrieve("anything").examples == ()
    memory.index_example(EXAMPLES[0])
    memory.index_skill(skill("build_tower", "Build a tower."))
    retrieval = memory.retrieve("a tower of blocks")
    assert [e.id for e in retrieval.examples] == ["tower_rgb"]
    assert [(s.name, s.via) for s in retrieval.skills] == [
        ("build_tower", ("similar", "called by example tower_rgb"))
    ]


def test_an_empty_library_is_searched_too(workspace: Workspace, embedder: MemoEmbedder):
    save_example(EXAMPLES[0], workspace.examples_dir)
    memory = Memory.open(workspace, embedder)
    memory.rebuild(workspace, [])
    retrieval = memory.retrieve("a tower of blocks")
    assert ([e.id for e in retrieval.examples], retrieval.skills) == (["tower_rgb"], ())


def test_examples_of_equal_score_come_in_one_order_every_time(
    workspace: Workspace, embedder: MemoEmbedder
):
    def example(id: str, instruction: str) -> Example:
        return Example(id=id, instruction=instruction, code="pass", skills=[])

    for e in (
        example("drawer_close", "Close the drawer."),
        example("window_close", "Close the window."),
    ):
        save_example(e, workspace.examples_dir)
    memory = Memory.open(workspace, embedder)
    memory.rebuild(workspace, [])
    # Rows added after the text index was built: LanceDB then returned the two closes, whose
    # words score the same, in either order, about a third of the calls the other way round.
    memory.index_examples(
        [example("door_open", "Open the door."), example("dial", "Turn the dial.")]
    )
    orders = {
        tuple(e.id for e in memory.retrieve("Close the door.", methods=TEXT).examples)
        for _ in range(20)
    }
    assert orders == {("door_open", "drawer_close", "window_close")}

    # Equal rows within the depth searched (twice the answer) go by key...
    memory.index_examples([example(f"stack_{c}", "Stack the cups.") for c in "abc"])
    firsts = {
        tuple(hit.key for hit in memory.search_examples([Query("q", "Stack the cups.")], 2, TEXT))
        for _ in range(20)
    }
    assert firsts == {("stack_a", "stack_b")}
    # ...and equal rows across its cut are left out whole, rather than some of them by chance.
    memory.index_examples([example(f"stack_{c}", "Stack the cups.") for c in "def"])
    assert {
        tuple(hit.key for hit in memory.search_examples([Query("q", "Stack the cups.")], 2, TEXT))
        for _ in range(20)
    } == {()}


def test_another_embedder_is_told_to_rebuild(
    filled: Memory, workspace: Workspace, library: list[SkillRecord]
):
    text_only = Memory.open(workspace, None)
    with pytest.raises(EmbedderMismatchError) as error:
        text_only.retrieve("stack", methods=TEXT)
    assert str(error.value) == (
        f"the memory in {workspace.root / '.lyra' / 'memory'} was indexed with embedder "
        "minilm-l6-v2/384, but the configured embedder is none: run `lyra memory rebuild` "
        "to re-index with it, or set LYRA_EMBEDDER back to the one the index was built with"
    )
    text_only.rebuild(workspace, library)
    assert [e.id for e in text_only.retrieve("apple bowl", methods=TEXT).examples] == ["bowl_apple"]


def test_full_text_only_memory_has_no_vector_search(
    workspace: Workspace, library: list[SkillRecord]
):
    memory = Memory.open(workspace, None)
    memory.rebuild(workspace, library)
    # Quotes, colons and brackets are words here, not query syntax.
    hits = memory.search_skills([Query("q", 'pyramid: "base" (row)')], 2, methods=TEXT)
    assert [h.key for h in hits] == ["build_pyramid", "line_up"]
    with pytest.raises(EmbedderUnavailableError, match="vector search needs an embedder"):
        memory.retrieve("pyramid", methods=HYBRID)


def test_optimize_indexes_vectors_of_a_large_table_and_keeps_results(
    filled: Memory, monkeypatch: pytest.MonkeyPatch
):
    import lancedb
    from lancedb.index import IvfFlat

    from lyra.memory import store

    before = filled.retrieve("put the apple in the bowl")
    examples = lancedb.connect(filled.root).open_table("examples")
    # An index built with other settings, as LanceDB's defaults were before: optimize replaces it.
    examples.create_index("vector", config=IvfFlat(distance_type="cosine", num_partitions=2))
    reopened = Memory(filled.root, filled.embedder)
    monkeypatch.setattr(store, "VECTOR_INDEX_MIN_ROWS", len(EXAMPLES))
    reopened.optimize()
    indices = lancedb.connect(filled.root).open_table("examples").list_indices()
    assert sorted((i.index_type, i.columns[0], i.name) for i in indices) == [
        ("Bitmap", "backend", "backend_idx"),
        ("FTS", "instruction", "instruction_idx"),
        ("IvfFlat", "vector", store.VECTOR_INDEX),
    ]
    after = reopened.retrieve("put the apple in the bowl")
    # The index computes cosine its own way: the same hits and ranks, scores equal to 1e-6.
    assert outline(after) == outline(before)
    assert [m.score for s in after.skills for m in s.matches] == pytest.approx(
        [m.score for s in before.skills for m in s.matches], abs=1e-6
    )


def outline(retrieval: Retrieval) -> list[tuple[str, list[tuple[str, str, int]]]]:
    def ranks(matches: tuple[Match, ...]) -> list[tuple[str, str, int]]:
        return [(m.query, m.method, m.rank) for m in matches]

    examples = [(e.id, ranks(e.matches)) for e in retrieval.examples]
    return examples + [(s.name, ranks(s.matches)) for s in retrieval.skills]
