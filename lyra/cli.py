"""The ``lyra`` command line.

Each area registers its own sub-commands from a light module; heavy packages (pybullet, lancedb,
libcst) are imported only inside the handler that needs them, so ``lyra --help`` stays fast.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence
from importlib.metadata import entry_points
from pathlib import Path

from lyra.errors import LyraError

# Modules with a ``register(subparsers)`` function, in the order their commands are listed.
COMMAND_MODULES = (
    "lyra.init",
    "lyra.scenes",
    "lyra.library.cli",
    "lyra.llm.cli",
    "lyra.teach_cli",
    "lyra.demos.cli",
    "lyra.evals.cli",
    "lyra.bench",
    "lyra.deploy",
    "lyra.memory.cli",
    "lyra.studio.cli",
)


def build_parser() -> argparse.ArgumentParser:
    """Return the parser with every area's sub-commands registered."""
    parser = argparse.ArgumentParser(
        prog="lyra",
        description="Teach a robot arm long-horizon manipulation with skills written as code.",
    )
    parser.add_argument("--version", action="version", version="lyra 0.1.0")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module in COMMAND_MODULES:
        importlib.import_module(module).register(subparsers)
    # A backend's own commands (`lyra fr3 sim`), offered the way backends are: by entry point.
    for offered in entry_points(group="lyra.commands"):
        offered.load()(subparsers)
    for command in subparsers.choices.values():
        _add_workspace_option(command, None)
    return parser


def _add_workspace_option(command: argparse.ArgumentParser, default: object) -> None:
    """One workspace option, the same on every command (a few declare theirs themselves).

    A command with actions of its own takes it before the action (``lyra skills --workspace W
    list``) and after it, where the rest of the action's options are (``lyra demo learn D.json
    --workspace W``). An action's option leaves no default behind (``default``), so that it
    does not hide the one given before the action.
    """
    for action in command._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                _add_workspace_option(sub, argparse.SUPPRESS)
    if any("--workspace" in action.option_strings for action in command._actions):
        return
    command.add_argument(
        "--workspace",
        type=Path,
        default=default,
        help="the workspace folder (default: $LYRA_WORKSPACE, else the nearest folder "
        "up from here with a skills/ folder)",
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the process exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    handler = getattr(args, "func", None)
    if handler is None:
        parser.print_help()
        return 2
    if getattr(args, "workspace", None) is not None:
        # Every command finds its workspace through lyra.workspace.find_workspace, which reads
        # this variable, so the option reaches the handlers and the worker processes alike.
        os.environ["LYRA_WORKSPACE"] = str(args.workspace.resolve())
    try:
        return int(handler(args) or 0)
    except LyraError as error:
        print(f"lyra: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        # A learnt step is one transaction: what was accepted stays, the step under way is undone.
        print(
            "\nlyra: interrupted; what was accepted is kept, and the same command resumes from "
            "there",
            file=sys.stderr,
        )
        return 130
    except BrokenPipeError:
        # The reader went away (`lyra ... | head`): stop quietly, as other command-line tools do.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


if __name__ == "__main__":
    sys.exit(main())
