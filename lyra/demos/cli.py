"""``lyra demo record``: write demonstrations to teach from.

The simulators and the recorders are imported inside the handlers, so ``lyra --help`` stays fast.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

PROMPT = "demo> "


def register(subparsers: Any) -> None:
    """Add the ``demo`` command group."""
    demo = subparsers.add_parser("demo", help="record demonstrations by hand")
    actions = demo.add_subparsers(dest="demo_command", metavar="ACTION", required=True)
    record = actions.add_parser(
        "record", help="drive the primitives at a console on the simulator; write the steps"
    )
    _scene_options(record)
    record.set_defaults(func=_record)


def _scene_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--scene", required=True, help="a scene YAML file")
    parser.add_argument("--backend", help="the backend (default: the scene file's, else ravens)")
    parser.add_argument("--seed", type=int, default=0, help="layout seed (default 0)")
    parser.add_argument("--instruction", help="what the demonstration does, in words")
    parser.add_argument(
        "--out", "-o", type=Path, required=True, help="the demonstration file to write (.json)"
    )
    parser.add_argument(
        "--frames",
        action="store_true",
        help="a PNG after each motion, in a folder beside the file (OUT-frames/)",
    )


def _frames(args: argparse.Namespace) -> Path | None:
    out: Path = args.out
    return out.with_name(f"{out.stem}-frames") if args.frames else None


def _record(args: argparse.Namespace) -> int:
    from lyra.backend import load_scene_file, make
    from lyra.demos.format import save
    from lyra.demos.record import Recording
    from lyra.demos.steps import StepLog
    from lyra.embodiment import use

    ask = _reader()
    instruction = args.instruction or (ask("Instruction: ") or "").strip()
    if not instruction:
        print("lyra: no instruction: give --instruction, or type it first", file=sys.stderr)
        return 1
    name, scene = load_scene_file(args.scene, args.backend)
    backend = make(name)
    try:
        with use(backend):
            recording = Recording(
                backend, name, scene, args.seed, StepLog(backend, _frames(args)), print
            )
            print(f"{backend.describe()}\n`help` lists the primitives; `done` writes {args.out}")
            while (line := ask(PROMPT)) is not None and recording.handle(line):
                pass
        if not recording.log.steps:
            print("lyra: nothing was demonstrated; nothing written", file=sys.stderr)
            return 1
        path = save(recording.demonstration(instruction), args.out)
    except KeyboardInterrupt:
        print(f"\nlyra: interrupted; nothing written (`done` or Ctrl-D writes {args.out})")
        return 130
    finally:
        backend.close()
    print(f"wrote {path} ({len(recording.log.steps)} steps)")
    return 0


def _reader() -> Callable[[str], str | None]:
    """Ask for a line at the terminal, or read the next from a pipe; None at the end.

    Piped lines are echoed after the prompt, so the output reads as the session would.
    """
    stdin = sys.stdin
    interactive = stdin.isatty()

    def ask(prompt: str) -> str | None:
        if interactive:
            try:
                return input(prompt)
            except EOFError:
                print()
                return None
        line = stdin.readline()
        if not line:
            return None
        print(f"{prompt}{line.rstrip()}")
        return line

    return ask
