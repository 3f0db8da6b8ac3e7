"""``lyra skills ...``: list, show, draw, and walk back the history of the skill library.

libcst is imported inside the handlers, so registering these commands costs nothing at start-up.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from lyra.workspace import Workspace, find_workspace


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``skills`` command and its sub-commands."""
    skills = subparsers.add_parser("skills", help="inspect the skill library and its history")
    commands = skills.add_subparsers(dest="skills_command", metavar="SUBCOMMAND", required=True)
    commands.add_parser("list", help="every skill and what it does").set_defaults(func=_list)
    show = commands.add_parser("show", help="one skill: header, callers, callees, examples")
    show.add_argument("name")
    show.add_argument("--source", action="store_true", help="print the whole module after it")
    show.set_defaults(func=_show)
    tree = commands.add_parser("tree", help="the skill tree, as text, SVG or HTML")
    tree.add_argument("name", nargs="?", help="start from this skill (default: every root)")
    tree.add_argument("--svg", type=Path, help="also write the tree as an SVG drawing here")
    tree.add_argument("--html", type=Path, help="also write a self-contained HTML page here")
    tree.set_defaults(func=_tree)
    history = commands.add_parser("history", help="the recorded versions of a skill")
    history.add_argument("name")
    history.set_defaults(func=_history)
    revert = commands.add_parser("revert", help="restore a recorded version of a skill")
    revert.add_argument("name")
    revert.add_argument("--to", type=int, help="version number (default: the one before last)")
    revert.set_defaults(func=_revert)


def _relative(workspace: Workspace, path: Path) -> str:
    return (
        str(path.relative_to(workspace.root)) if path.is_relative_to(workspace.root) else str(path)
    )


def _list(args: argparse.Namespace) -> int:
    from lyra.library.parse import parse_library

    workspace = find_workspace()
    library = parse_library(workspace.skills_dir)
    width = max((len(record.name) for record in library), default=0)
    for record in library:
        print(f"{record.name.ljust(width)}  {record.summary}")
    if not library.records:
        print("(no skills yet: they enter the library through `lyra teach`)")
    for problem in library.problems:
        print(
            f"not a valid skill: {_relative(workspace, problem.path)}:{problem.line}: "
            f"{problem.problem}"
        )
    return 0


def _show(args: argparse.Namespace) -> int:
    from lyra.examples import iter_examples
    from lyra.library.parse import parse_library
    from lyra.library.tree import SkillTree

    workspace = find_workspace()
    library = parse_library(workspace.skills_dir)
    record = library.get(args.name)
    tree = SkillTree.of(library)
    examples = [e.id for _, e in iter_examples(workspace.examples_dir) if record.name in e.skills]
    print(f"{record.name}  ({_relative(workspace, record.path)})\n")
    print(record.header + "\n")
    for label, names in (
        ("uses skills", record.calls_skills),
        ("uses primitives", record.calls_primitives),
        ("used by", tree.callers.get(record.name, ())),
        ("examples", tuple(examples)),
    ):
        print(f"{label}: {', '.join(names) or '(none)'}")
    if args.source:
        print(f"\n{record.path.read_text(encoding='utf-8')}", end="")
    else:
        print(f"(the module: lyra skills show {record.name} --source)")
    return 0


def _tree(args: argparse.Namespace) -> int:
    from lyra.library.parse import parse_library
    from lyra.library.tree import SkillTree

    tree = SkillTree.of(parse_library(find_workspace().skills_dir))
    print(tree.render_text(args.name), end="")
    for path, text in ((args.svg, tree.to_svg), (args.html, tree.to_html)):
        if path is not None:
            path.write_text(text(), encoding="utf-8")
            print(f"wrote {path}")
    return 0


def _history(args: argparse.Namespace) -> int:
    from lyra.library.history import import_from_git
    from lyra.lock import locked

    workspace = find_workspace()
    with locked(workspace):
        recorded = import_from_git(workspace, args.name)
    if not recorded:
        print(
            f"no recorded versions of '{args.name}': only edits made through lyra are recorded "
            "(here, or as lyra's commits in git)"
        )
    for v in recorded:
        why = "".join(
            [
                f"  task {v.task}" if v.task else "",
                f'  feedback "{v.feedback}"' if v.feedback else "",
            ]
        )
        print(f"v{v.version}  {v.time}  {v.change}{why}")
    return 0


def _revert(args: argparse.Namespace) -> int:
    from lyra.library.history import import_from_git, revert, versions
    from lyra.lock import locked

    workspace = find_workspace()
    # One writer at a time: a learning loop may be running on this workspace.
    with locked(workspace):
        import_from_git(workspace, args.name)
        patch = revert(workspace, args.name, args.to)
    latest = versions(workspace, args.name)[-1].version
    print(f"{patch.summary} (recorded as version {latest})")
    return 0
