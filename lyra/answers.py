"""Reading an LLM's answer: its code blocks, a skill module and task code, the skills it calls."""

from __future__ import annotations

import ast
import re

from lyra.errors import LyraError
from lyra.policy import OversizedCodeError, parse_generated

_BLOCK = re.compile(r"```[a-zA-Z]*[ \t]*\n(.*?)```", re.DOTALL)
MISSING = "MISSING SKILL:"


class AnswerError(LyraError):
    """An LLM answer could not be used; the message is the feedback it gets."""


def code_blocks(text: str) -> list[str]:
    """The fenced code blocks of an answer, in order."""
    return [block.strip("\n") + "\n" for block in _BLOCK.findall(text)]


def split_answer(text: str, skill: str) -> tuple[str, str]:
    """Return (module text, task code) from a skill-learning answer.

    Raises:
        AnswerError: the answer lacks one of the two blocks; the message says what to send.
    """
    blocks = code_blocks(text)
    module = next((b for b in blocks if b.startswith(f"# skills/{skill}.py")), None)
    module = module or next((b for b in blocks if f"def {skill}(" in b), None)
    code = next((b for b in blocks if b.startswith("# task")), None)
    code = code or next((b for b in blocks if b is not module), None)
    if module is None or code is None:
        raise AnswerError(
            f"the answer must hold two Python code blocks: the module skills/{skill}.py "
            f"(defining `def {skill}(...)`) and the task code (beginning with `# task`); "
            f"it held {len(blocks)} code block(s)"
        )
    tree = _parsed(code)
    if tree is not None and not any(
        isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == skill
        for node in ast.walk(tree)
    ):
        raise AnswerError(
            f"the task code never calls `{skill}`: do the task by calling the skill, "
            f"after `from skills.{skill} import {skill}`"
        )
    return module, code


def _parsed(code: str) -> ast.Module | None:
    """The code's tree; None when it does not parse (the run reports that, with its line).

    Raises:
        AnswerError: the code is too large or nested too deep to be read at all.
    """
    try:
        return parse_generated(code, "the task code")
    except OversizedCodeError as error:
        raise AnswerError(str(error)) from None
    except SyntaxError:
        return None


def skills_called(code: str) -> list[str]:
    """The skills a piece of code imports (``from skills.NAME import NAME``)."""
    tree = _parsed(code)
    if tree is None:
        return []
    return sorted(
        {
            node.module.removeprefix("skills.")
            for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom)
            and node.module
            and node.module.startswith("skills.")
        }
    )
