"""Old home of the tiny random pipelines: they live in :mod:`glyphbench.tiny.pipelines` (issue
34)."""

from glyphbench.tiny.pipelines import (
    TINY_DEFAULTS,
    TINY_MARKER,
    build_tiny_if,
    build_tiny_pipeline,
    build_tiny_sd,
    build_tiny_sdxl,
    read_marker,
)

__all__ = [
    "TINY_DEFAULTS",
    "TINY_MARKER",
    "build_tiny_if",
    "build_tiny_pipeline",
    "build_tiny_sd",
    "build_tiny_sdxl",
    "read_marker",
]
