"""Code as Policies, the baseline: ``cap`` (a fixed prompt) and ``dynamic-cap`` (with a memory).

CaP writes the task code in one generation from a fixed few-shot prompt of instructions and
the code that did them, calling primitives only: no skill library, no feedback, no memory.
``dynamic-cap`` adds a memory of the transcripts that succeeded: the most similar ones by
instruction are shown beside the fixed examples, and a success is stored for the next task.
The teacher still judges the one attempt, so that both are measured like every other method;
what the teacher says is recorded and not used.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import TYPE_CHECKING

from lyra.answers import code_blocks
from lyra.curriculum import Progress, Task
from lyra.errors import LyraError
from lyra.examples import Example, slugify
from lyra.methods import TaskOutcome
from lyra.methods.memory import method_memory
from lyra.prompts import example_block, render, system_prompt

if TYPE_CHECKING:
    from lyra.teach import Learner

# Transcripts that succeeded, shown beside the fixed examples by similarity of instruction.
K_TRANSCRIPTS = 8


@dataclass(frozen=True)
class CodeAsPolicies:
    """Code as Policies; with ``remember``, its dynamic variant.

    Attributes:
        name: the method's registered name.
        summary: one line on what it does.
        teaches_skills: whether it takes tasks that name a skill (see lyra.methods.Method).
        remember: keep the transcripts that succeeded and show the most similar ones.
    """

    name: str
    summary: str
    teaches_skills: bool = False
    remember: bool = False

    def solve(
        self, learner: Learner, task: Task, curriculum: str, progress: Progress
    ) -> TaskOutcome:
        """One generation, one attempt on the task's seeds, the teacher's verdict."""
        outcome = TaskOutcome(task.id, accepted=False, method=self.name, rounds=1)
        pack = task.prompt_pack()
        if not pack.cap_examples:
            raise LyraError(
                f"the {task.backend} backend has no Code-as-Policies prompt (its prompt pack's "
                "cap_examples): use another method there, or give its pack examples"
            )
        memory = method_memory(learner, self.name) if self.remember else None
        shown = [example_block(instruction, code) for instruction, code in pack.cap_examples]
        if memory is not None:
            found = memory.retrieve(
                task.instruction, k_examples=K_TRANSCRIPTS, k_skills=0, backends=[task.backend]
            )
            shown += [example_block(hit.instruction, hit.code) for hit in found.examples]
        prompt = render(
            "cap",
            pack,
            examples="\n\n".join(shown),
            scene=learner.describe(task, task.scene),
            instruction=task.instruction,
        )
        answer = learner.complete(
            task, prompt, "cap", system=system_prompt(pack, task.spec().capabilities, "cap_system")
        )
        blocks = code_blocks(answer.text)
        # CaP runs whatever it wrote: an answer without code is a plan that does nothing.
        code = blocks[0] if blocks else "# task\n"
        attempt = learner.attempt(task, task.scene, code, learner.ws.skills_dir, 1)
        outcome.first = outcome.last = attempt
        learner.say(f"{self.name}:\n{attempt.outcome()}")
        verdict = learner.teacher.judge(attempt)
        if verdict.action != "accept":
            outcome.corrections.append(verdict.text)
            learner.say(f"not accepted ({verdict.action}); {self.name} takes no correction")
            return outcome
        outcome.accepted = True
        if memory is not None:
            memory.index_example(_transcript(task, code))
        return outcome


def _transcript(task: Task, code: str) -> Example:
    """A transcript that succeeded, as the memory stores an example."""
    digest = hashlib.sha1(f"{task.instruction}\n{code}".encode()).hexdigest()[:8]
    return Example(
        id=f"{slugify(task.id, 39)}_{digest}",
        instruction=task.instruction,
        code=code,
        backend=task.backend,
        seed=task.seeds[0],
        success=task.success,
    )


CAP = CodeAsPolicies("cap", "Code as Policies: one generation from a fixed few-shot prompt")
DYNAMIC_CAP = CodeAsPolicies(
    "dynamic-cap",
    "Code as Policies with a memory of the transcripts that succeeded, retrieved by instruction",
    remember=True,
)
