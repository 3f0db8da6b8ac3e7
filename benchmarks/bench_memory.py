"""Retrieval latency of the memory with many stored examples: search by method, and retrieve().

Run: ``python benchmarks/bench_memory.py [--sizes 10000 100000] [--queries 50] [--against REV]``
Target: ``retrieve()`` p95 under 20 ms with 100,000 examples, the query's embedding included.

Bulk example rows get generated instructions and random unit vectors (embedding 100k texts with
MiniLM on a CPU would take many minutes); one in ten is another backend's. The queries are
embedded with the real embedder, once, so the search timings exclude embedding; ``retrieve`` is
timed end to end, embedding its query each call, once plain and once as the learning loop calls
it (the task's backend's primitives and examples).

With ``--against REV`` (such as 461a577), REV is checked out into a temporary worktree and each
side fills its own memory in a process of its own, its own code first on the path; then the two
take ``--rounds`` turns of ``--queries`` timed calls per measure, alternating which goes first,
so that a busy machine weighs on both alike. Each side's p50 and p95 are over all its calls; the
ratio (this checkout over REV) is the median of the rounds' p50 ratios, with their range. A call
REV's API lacks an argument for is made without it, and the table says so.
"""

from __future__ import annotations

import argparse
import inspect
import itertools
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO, Any

import numpy as np
import numpy.typing as npt
import yaml
from checkouts import checkout

import lyra
from lyra.examples import Example
from lyra.library import SkillRecord
from lyra.memory.minilm import MiniLMEmbedder
from lyra.memory.retrieval import Method, Query
from lyra.memory.store import VECTOR_INDEX_MIN_ROWS, Memory
from lyra.workspace import Workspace

ROOT = Path(__file__).resolve().parents[1]
SKILLS_FILE = ROOT / "tests" / "memory" / "data" / "retrieval.yaml"
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
# The backend the loop's call plans for; the bulk rows and skills it must leave out are others'.
BACKEND = "ravens"
MODES: list[tuple[str, tuple[Method, ...]]] = [
    ("full-text", ("text",)),
    ("vector", ("vector",)),
    ("hybrid", ("text", "vector")),
]
LOOP_CALL = "retrieve(), loop's call"


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
        backend = "metaworld" if i % 10 == 9 else BACKEND
        examples.append(
            Example(id=f"bulk_{i}", instruction=text, code="pass", skills=[], backend=backend)
        )
    return examples


def skills() -> list[SkillRecord]:
    """The fixture's skills; every fourth pushes, which the tabletop cannot."""
    data = yaml.safe_load(SKILLS_FILE.read_text())["skills"]
    return [
        SkillRecord(
            name=name,
            path=Path(f"skills/{name}.py"),
            signature=f"def {name}() -> None:",
            docstring=entry["summary"],
            header=f'def {name}() -> None:\n    """{entry["summary"]}"""',
            source_hash=name,
            calls_primitives=("push",) if i % 4 == 3 else ("pick", "place"),
        )
        for i, (name, entry) in enumerate(data.items())
    ]


def loop_arguments() -> tuple[dict[str, Any], str]:
    """The filters the learning loop passes ``retrieve``, those this checkout's API takes."""
    taken = inspect.signature(Memory.retrieve).parameters
    if "capabilities" not in taken:
        return {}, "without capabilities and backends (no such arguments)"
    from lyra.backend import backend_spec

    spec = backend_spec(BACKEND)
    return {"capabilities": spec.capabilities, "backends": spec.examples_from()}, ""


class Side:
    """One checkout's memory filled with ``size`` examples, and the calls timed on it."""

    def __init__(self, size: int, model: MiniLMEmbedder, folder: Path) -> None:
        self.model = model
        self.embedder = BulkThenReal(model)
        workspace = Workspace(folder)
        self.memory = Memory.open(workspace, self.embedder)
        self.embedder.bulk = False
        self.memory.rebuild(workspace, skills())
        self.embedder.bulk = True
        rng = np.random.default_rng(size)
        start = time.perf_counter()
        for first in range(0, size, BATCH):
            self.memory.index_examples(instructions(min(BATCH, size - first), first, rng))
        self.memory.optimize()
        self.fill_seconds = time.perf_counter() - start
        self.embedder.bulk = False
        self.queries = [Query("instruction", q) for q in QUERIES]
        self.embedder.embed(QUERIES)
        self.loop_kwargs, self.loop_note = loop_arguments()

    def calls(self) -> dict[str, Callable[[], object]]:
        """Each measure's call; each call takes the next query in turn."""
        turn = itertools.cycle(range(len(QUERIES)))
        calls: dict[str, Callable[[], object]] = {
            label: lambda methods=methods: self.memory.search_examples(
                [self.queries[next(turn)]], 10, methods
            )
            for label, methods in MODES
        }
        calls["retrieve()"] = lambda: self.memory.retrieve(QUERIES[next(turn)])
        calls[LOOP_CALL] = lambda: self.memory.retrieve(QUERIES[next(turn)], **self.loop_kwargs)
        return calls

    def round(self, repeats: int) -> dict[str, list[float]]:
        """Milliseconds of ``repeats`` calls of each measure, after two warm-up calls each."""
        times: dict[str, list[float]] = {}
        for label, call in self.calls().items():
            # The searches find their queries' vectors kept; retrieve() embeds every time.
            self.memory.embedder = self.model if label.startswith("retrieve") else self.embedder
            call()
            call()
            times[label] = []
            for _ in range(repeats):
                start = time.perf_counter()
                call()
                times[label].append((time.perf_counter() - start) * 1000)
        return times


def p95(times: Sequence[float]) -> float:
    return statistics.quantiles(times, n=20)[18]


def serve(size: int) -> None:
    """Fill a memory, say so on stdout, then answer each ``round N`` line on stdin with JSON."""
    model = MiniLMEmbedder()
    with tempfile.TemporaryDirectory() as folder:
        side = Side(size, model, Path(folder))
        ready = {"fill_s": side.fill_seconds, "lyra": lyra.__file__, "note": side.loop_note}
        print(json.dumps(ready), flush=True)
        for line in sys.stdin:
            print(json.dumps(side.round(int(line.split()[1]))), flush=True)


class Server:
    """A :func:`serve` process in a checkout, its own code first on the path."""

    def __init__(self, tree: Path, size: int) -> None:
        self.process = subprocess.Popen(
            [sys.executable, str(Path(__file__).resolve()), "--serve", str(size)],
            cwd=tree,
            env={**os.environ, "PYTHONPATH": str(tree)},
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        self.ready: dict[str, Any] = self._answer()
        if not str(self.ready["lyra"]).startswith(str(tree)):
            raise SystemExit(f"{tree} ran lyra from {self.ready['lyra']}")

    def round(self, repeats: int) -> dict[str, list[float]]:
        assert self.process.stdin is not None
        self.process.stdin.write(f"round {repeats}\n")
        self.process.stdin.flush()
        times: dict[str, list[float]] = self._answer()
        return times

    def close(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        self.process.wait()

    def _answer(self) -> Any:
        out: IO[str] | None = self.process.stdout
        line = out.readline() if out is not None else ""
        if not line:
            raise SystemExit(f"the benchmark process exited with {self.process.wait()}")
        return json.loads(line)


def compare(rev: str, tree: Path, size: int, rounds: int, repeats: int) -> None:
    """Both sides filled at once, then timed in alternating rounds; print the table."""
    servers = {rev: Server(tree, size), "this": Server(ROOT, size)}
    try:
        times: dict[str, dict[str, list[list[float]]]] = {name: {} for name in servers}
        for turn in range(rounds):
            # Which side goes first alternates, so that neither always runs warm.
            names = list(servers) if turn % 2 == 0 else list(servers)[::-1]
            for name in names:
                for label, ms in servers[name].round(repeats).items():
                    times[name].setdefault(label, []).append(ms)
    finally:
        for server in servers.values():
            server.close()
    index = "IVF_FLAT" if size >= VECTOR_INDEX_MIN_ROWS else "exact scan"
    fills = ", ".join(f"{name} {s.ready['fill_s']:.1f} s" for name, s in servers.items())
    print(f"\n{size:,} examples (vectors: {index}; filled in {fills}); {rounds} rounds x {repeats}")
    print(
        f"  {'ms':<24} {rev + ' p50':>12} {'p95':>7} {'this p50':>9} {'p95':>7}  p50 ratio (range)"
    )
    for label in times["this"]:
        before, after = times[rev][label], times["this"][label]
        ratios = [
            statistics.median(a) / statistics.median(b) for a, b in zip(after, before, strict=True)
        ]
        flat_before, flat_after = list(itertools.chain(*before)), list(itertools.chain(*after))
        print(
            f"  {label:<24} {statistics.median(flat_before):>12.1f} {p95(flat_before):>7.1f} "
            f"{statistics.median(flat_after):>9.1f} {p95(flat_after):>7.1f}  "
            f"{statistics.median(ratios):.3f} ({min(ratios):.3f}-{max(ratios):.3f})"
        )
    for name, server in servers.items():
        if server.ready["note"]:
            print(f"  {name}: {LOOP_CALL} made {server.ready['note']}")


def alone(size: int, repeats: int) -> None:
    """This checkout only, in this process."""
    model = MiniLMEmbedder()
    with tempfile.TemporaryDirectory() as folder:
        side = Side(size, model, Path(folder))
        index = "IVF_FLAT" if size >= VECTOR_INDEX_MIN_ROWS else "exact scan"
        print(f"\n{size:,} examples stored in {side.fill_seconds:.1f} s (vectors: {index})")
        for label, ms in side.round(repeats).items():
            print(f"  {label:<24} p50 {statistics.median(ms):6.1f} ms  p95 {p95(ms):6.1f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--queries", type=int, default=50, help="timed calls per measure, a round")
    parser.add_argument("--against", metavar="REV", help="also time this commit, alternating")
    parser.add_argument("--rounds", type=int, default=4, help="rounds each side, with --against")
    parser.add_argument("--serve", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve is not None:
        serve(args.serve)
        return
    print("bulk rows: generated instructions with random unit vectors (not embedded: too slow);")
    print("searches: queries' MiniLM vectors kept; retrieve(): each call embeds its query")
    if args.against is None:
        for size in args.sizes:
            alone(size, args.queries)
        return
    with checkout(args.against) as tree:
        for size in args.sizes:
            compare(args.against, tree, size, args.rounds, args.queries)


if __name__ == "__main__":
    main()
