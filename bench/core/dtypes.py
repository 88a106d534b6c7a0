"""Weight dtype names: every spelling an option accepts, and the torch name it stands for.

Model options (``diffusers:...?dtype=bf16``) and codec options (``taesd:...?dtype=fp16``)
accept the same spellings and give the same error.
"""

from __future__ import annotations

#: Accepted spellings (case and surrounding blanks ignored) -> torch's dtype name.
DTYPE_NAMES = {
    "float32": "float32",
    "fp32": "float32",
    "float": "float32",
    "float16": "float16",
    "fp16": "float16",
    "half": "float16",
    "bfloat16": "bfloat16",
    "bf16": "bfloat16",
}


def dtype_name(value: str) -> str:
    """torch's name of a dtype spelling; ValueError (a validator's message) for another.

    >>> dtype_name(" BF16 "), dtype_name("half"), dtype_name("float32")
    ('bfloat16', 'float16', 'float32')
    >>> dtype_name("int8")
    Traceback (most recent call last):
    ...
    ValueError: dtype 'int8' is not one of float32, float16, bfloat16 (or fp32, fp16, bf16)
    """
    name = DTYPE_NAMES.get(value.strip().lower())
    if name is None:
        raise ValueError(
            f"dtype {value!r} is not one of float32, float16, bfloat16 (or fp32, fp16, bf16)"
        )
    return name
