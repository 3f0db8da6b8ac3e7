"""``lyra memory``: show what planning would retrieve for a task, and rebuild the index.

LanceDB and the embedder load inside the handlers, so registering these commands costs nothing.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from lyra.workspace import Workspace, find_workspace

if TYPE_CHECKING:
    from lyra.memory.retrieval import Match, Retrieval


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``lyra memory search`` and ``lyra memory rebuild``."""
    parser = subparsers.add_parser("memory", help="search or rebuild the skill and example memory")
    parser.add_argument(
        "--workspace", type=Path, help="workspace folder (default: $LYRA_WORKSPACE or the cwd)"
    )
    actions = parser.add_subparsers(dest="memory_command", metavar="ACTION", required=True)
    search = actions.add_parser("search", help="print what planning would retrieve, and why")
    search.add_argument("query", help="the task instruction")
    search.add_argument("--correction", help="the person's latest feedback, searched as well")
    search.add_argument(
        "--hint", action="append", default=[], help="a task description or skill name to steer by"
    )
    search.add_argument("--examples", type=int, default=10, help="how many examples (10)")
    search.add_argument("--skills", type=int, default=5, help="how many similar skills (5)")
    search.set_defaults(func=_search)
    rebuild = actions.add_parser("rebuild", help="re-index every skill module and example file")
    rebuild.set_defaults(func=_rebuild)


def _workspace(args: argparse.Namespace) -> Workspace:
    return find_workspace(args.workspace)


def _search(args: argparse.Namespace) -> int:
    from lyra.memory.store import open_memory
    from lyra.progress import Bar

    workspace = _workspace(args)
    memory = open_memory(workspace)
    indexed = memory.refresh(workspace, progress=Bar)
    if indexed:
        print(f"lyra: memory: {indexed}", file=sys.stderr)
    retrieval = memory.retrieve(
        args.query, args.correction, args.hint, k_examples=args.examples, k_skills=args.skills
    )
    print(format_retrieval(retrieval))
    return 0


def _rebuild(args: argparse.Namespace) -> int:
    from lyra.library.parse import parse_library
    from lyra.memory.embedders import describe
    from lyra.memory.store import open_memory
    from lyra.progress import Bar

    workspace = _workspace(args)
    library = parse_library(workspace.skills_dir)
    for problem in library.problems:
        print(f"lyra: skipped a module that is not a readable skill: {problem}", file=sys.stderr)
    memory = open_memory(workspace)
    skills, examples = memory.rebuild(workspace, list(library), Bar)
    print(
        f"indexed {skills} skills and {examples} examples in {memory.root} "
        f"(embedder: {describe(memory.embedder)})"
    )
    return 0


def _matches(matches: tuple[Match, ...]) -> str:
    return ", ".join(f"{m.query}/{m.method} #{m.rank} ({m.score:.3f})" for m in matches)


def format_retrieval(retrieval: Retrieval) -> str:
    """Render a retrieval for a person: every hit with its fused score and why it was found."""
    lines = ["queries:"]
    lines += [f"  {q.label}: {q.text}" for q in retrieval.queries]
    lines.append(f"examples ({len(retrieval.examples)}):")
    for i, example in enumerate(retrieval.examples, start=1):
        lines.append(f"  {i}. {example.id}  rrf {example.score:.4f}  {example.instruction!r}")
        lines.append(f"       found by {_matches(example.matches)}")
    lines.append(f"skills ({len(retrieval.skills)}):")
    for i, skill in enumerate(retrieval.skills, start=1):
        lines.append(f"  {i}. {skill.name}  rrf {skill.score:.4f}  via {', '.join(skill.via)}")
        if skill.matches:
            lines.append(f"       found by {_matches(skill.matches)}")
    return "\n".join(lines)
