"""Accelerator helpers any room may need without importing torch.

The run loop halves a batch on out of memory (:mod:`glyphbench.engine.loop`) and the diffusers
adapter retries on it (:mod:`glyphbench.models.diffusers_adapter`): both ask :func:`is_oom`.
"""

from __future__ import annotations

import sys

from glyphbench.core.errors import exception_chain


def is_oom(exc: BaseException) -> bool:
    """True when ``exc`` (or an exception it was raised from) is an out-of-memory error.

    Catches ``torch.cuda.OutOfMemoryError`` and the older/other backends' plain
    ``RuntimeError("... out of memory ...")``. Does not import torch.

    >>> is_oom(RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB"))
    True
    >>> is_oom(ValueError("bad prompt"))
    False
    """
    torch = sys.modules.get("torch")
    oom_type = getattr(getattr(torch, "cuda", None), "OutOfMemoryError", None)
    for current in exception_chain(exc):
        if isinstance(oom_type, type) and isinstance(current, oom_type):
            return True
        if isinstance(current, (RuntimeError, MemoryError)) and (
            "out of memory" in str(current).lower() or isinstance(current, MemoryError)
        ):
            return True
    return False
