"""Retrieval latency of the memory with many stored examples: full-text, vector and hybrid top-10.

Run: ``python benchmarks/bench_memory.py [--sizes 10000 100000] [--queries 50]``

Bulk example rows get generated instructions and random unit vectors (embedding 100k texts with
MiniLM on a CPU would take many minutes); the queries are embedded with the real embedder, once,
so the search timings exclude embedding, and ``retrieve`` is timed end to end as well.
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt
import yaml

from lyra.examples import Example
from lyra.library import SkillRecord
from lyra.memory.minilm import MiniLMEmbedder
from lyra.memory.retrieval import Method, Query
from lyra.memory.store import VECTOR_INDEX_MIN_ROWS, Memory
from lyra.workspace import Workspace

SKILLS_FILE = Path(__file__).parents[1] / "tests" / "memory" / "data" / "retrieval.yaml"
COLOURS = ["red", "green", "blue", "yellow", "purple", "orange", "white", "black"]
OBJECTS = ["block", "cube", "bowl", "plate", "bar", "cylinder", "mug", "plank"]
VERBS = ["stack", "put", "place", "move", "push", "line up", "sort", "gather"]
RELATIONS = ["on top of", "next to", "left of", "right of", "inside", "behind", "in front of"]
SHAPES = ["tower", "pyramid", "wall", "row", "circle", "house", "bridge", "Jenga layer"]
QUERIES = [
    "put the red cube on top of the blue one",
    "build a pyramid with the six blocks",
    "make a wall of bricks along the table edge",
    "lay a Jenga layer across the previous one",
    "set the mug next to the plate",
    "arrange the cubes in a circle around the bowl",
    "sort the blocks by colour",
    "build a small house with a roof",
    "take the tower apart",
    "line the bars up with equal gaps",
]
BATCH = 10_000


class BulkThenReal:
    """MiniLM for queries; random unit vectors while ``bulk`` is set (rows to fill the table)."""

    def __init__(self, model: MiniLMEmbedder) -> None:
        self.model = model
        self.name = model.name
        self.dim = model.dim
        self.bulk = True
        self._rng = np.random.default_rng(0)
        self._seen: dict[str, npt.NDArray[np.float32]] = {}

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        if self.bulk:
            vectors = self._rng.standard_normal((len(texts), self.dim)).astype(np.float32)
            return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
        missing = [t for t in dict.fromkeys(texts) if t not in self._seen]
        if missing:
            self._seen.update(zip(missing, self.model.embed(missing), strict=True))
        return np.array([self._seen[t] for t in texts], dtype=np.float32)


def instructions(count: int, start: int, rng: np.random.Generator) -> list[Example]:
    """Tabletop instructions from templates, varied enough that BM25 has real work to do."""
    examples = []
    for i in range(start, start + count):
        colour_a, colour_b = rng.choice(COLOURS, 2, replace=False)
        obj_a, obj_b = rng.choice(OBJECTS, 2)
        if i % 2:
            relation = rng.choice(RELATIONS)
            text = f"{rng.choice(VERBS)} the {colour_a} {obj_a} {relation} the {colour_b} {obj_b}"
        else:
            text = f"build a {rng.choice(SHAPES)} from the {colour_a} and {colour_b} {obj_a}s"
        examples.append(Example(id=f"bulk_{i}", instruction=text, code="pass", skills=[]))
    return examples


def skills() -> list[SkillRecord]:
    data = yaml.safe_load(SKILLS_FILE.read_text())["skills"]
    return [
        SkillRecord(
            name=name,
            path=Path(f"skills/{name}.py"),
            signature=f"def {name}() -> None:",
            docstring=entry["summary"],
            header=f'def {name}() -> None:\n    """{entry["summary"]}"""',
            source_hash=name,
        )
        for name, entry in data.items()
    ]


def percentiles(run: Callable[[], object], repeats: int) -> tuple[float, float]:
    """Return p50 and p95 in milliseconds over ``repeats`` calls, after two warm-up calls."""
    run()
    run()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        times.append((time.perf_counter() - start) * 1000)
    cuts = statistics.quantiles(times, n=20)
    return statistics.median(times), cuts[18]


def search(
    memory: Memory, queries: list[Query], methods: tuple[Method, ...]
) -> Callable[[], object]:
    """A call that searches the examples for the next query in turn."""
    turn = itertools.cycle(queries)
    return lambda: memory.search_examples([next(turn)], 10, methods)


def fill(memory: Memory, embedder: BulkThenReal, size: int) -> float:
    """Store ``size`` examples in batches; return the seconds it took, optimize included."""
    rng = np.random.default_rng(size)
    start = time.perf_counter()
    for first in range(0, size, BATCH):
        memory.index_examples(instructions(min(BATCH, size - first), first, rng))
    memory.optimize()
    embedder.bulk = False
    return time.perf_counter() - start


def bench(size: int, repeats: int, model: MiniLMEmbedder) -> None:
    embedder = BulkThenReal(model)
    with tempfile.TemporaryDirectory() as folder:
        workspace = Workspace(Path(folder))
        memory = Memory.open(workspace, embedder)
        embedder.bulk = False
        memory.rebuild(workspace, skills())
        embedder.bulk = True
        seconds = fill(memory, embedder, size)
        index = "IVF_FLAT" if size >= VECTOR_INDEX_MIN_ROWS else "exact scan"
        print(f"\n{size:,} examples stored in {seconds:.1f} s (vectors: {index})")
        queries = [Query("instruction", q) for q in QUERIES]
        embedder.embed([q.text for q in queries])
        modes: list[tuple[str, tuple[Method, ...]]] = [
            ("full-text", ("text",)),
            ("vector", ("vector",)),
            ("hybrid", ("text", "vector")),
        ]
        for label, methods in modes:
            p50, p95 = percentiles(search(memory, queries, methods), repeats)
            print(f"  top-10 examples, {label:<9}  p50 {p50:6.1f} ms  p95 {p95:6.1f} ms")
        memory.embedder = model  # uncached: retrieve() now embeds its query every time
        texts = itertools.cycle(QUERIES)
        p50, p95 = percentiles(lambda: memory.retrieve(next(texts)), repeats)
        print(f"  retrieve(), embedding included     p50 {p50:6.1f} ms  p95 {p95:6.1f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--queries", type=int, default=50, help="timed queries per mode")
    args = parser.parse_args()
    start = time.perf_counter()
    model = MiniLMEmbedder()
    print(f"MiniLM loaded in {time.perf_counter() - start:.2f} s")
    print("bulk rows: generated instructions with random unit vectors (not embedded: too slow);")
    print("queries: real MiniLM vectors, embedded once before the search timings")
    for size in args.sizes:
        bench(size, args.queries, model)


if __name__ == "__main__":
    main()
