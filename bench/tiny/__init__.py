"""Tiny random diffusers pipelines: built from config, for tests and the demo only.

Nothing here is a model anyone scores: the weights are random (seeded) and the
pipelines draw noise. They exist so that every code path of the diffusers adapter, each
model family included, runs offline in seconds (``glyphbench demo``, the test suite).

* :mod:`glyphbench.tiny.pipelines`: ``build_tiny_sd``, ``build_tiny_sdxl``, ``build_tiny_if``,
  ``build_tiny_pipeline`` (a family's own tiny pipeline) and the folder marker
  (``TINY_MARKER``, ``read_marker``, ``TINY_DEFAULTS``) the adapter reads;
* :mod:`glyphbench.tiny.parts`: tiny tokenizers, text encoders and VAEs the family modules
  assemble their pipelines from.

This room imports nothing of the project (it sits on the bottom floor beside
``glyphbench.core``); diffusers, transformers and torch load inside the builders.
"""
