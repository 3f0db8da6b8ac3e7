"""One OpenBLAS kernel on every CPU that can run it, so that a simulation replays the same.

numpy picks its OpenBLAS kernel for the CPU when it is first imported, unless
``OPENBLAS_CORETYPE`` names one. The AVX-512 kernel ("SkylakeX") sums a dot product of 3-vectors
as a chain of fused multiply-adds; the AVX2 one ("Haswell") multiplies and adds apart, and the
result can differ in its last bit. Contacts grow a bit into millimetres, and a recorded session
(whose prompts give positions to the millimetre) then meets a different world: MetaWorld's
recorded plate-slide round ended 47 mm short with one kernel and done with the other, until its
arm took to computing its dots itself (``envs.mujoco_parts.dot3``). The inverse kinematics of
the Kitchen and the tabletop and MiniLM's embeddings still go through BLAS, and the sessions
were recorded with SkylakeX, so lyra asks for it on every CPU that has AVX-512, in place of any
kernel the environment names (some machines set ``OPENBLAS_CORETYPE=Haswell`` for every
program). A CPU without AVX-512 keeps its own kernel; its episodes are as good, but not bit for
bit those of the recordings.

This must run before numpy is first imported in the process: ``lyra/__init__.py`` imports it
first, and the processes lyra starts inherit the setting.
"""

from __future__ import annotations

import os
import sys

KERNEL = "SkylakeX"


def _has_avx512() -> bool:
    # Every core lists the same flags: the first core's line is enough.
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            flags = next((line for line in cpuinfo if line.startswith("flags")), "")
    except OSError:
        return False
    return "avx512f" in flags.split()


# A process that imported numpy before lyra has its kernel already.
if "numpy" not in sys.modules and _has_avx512():
    os.environ["OPENBLAS_CORETYPE"] = KERNEL
