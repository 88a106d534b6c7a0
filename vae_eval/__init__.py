"""How much text survives a VAE: encode-decode images, OCR before and after, score the loss.

Public API (heavy libraries load only when used)::

    from glyphbench.vae_eval.codecs import get_codec       # "identity", "jpeg?quality=30",
                                                           # "resize?factor=8",
                                                           # "diffusers:<id>[:sub]",
                                                           # "taesd:<folder>",
                                                           # "python:module:Object"
    from glyphbench.vae_eval.codecs import register_codec  # your own codec (the protocol)
    from glyphbench.vae_eval.imageset import load_image_set, default_set, write_default_set
    from glyphbench.vae_eval.metrics import (
        word_retention, partial_accuracy, psnr, ssim, image_scores,
    )
    from glyphbench.vae_eval.runner import RunOptions, evaluate  # -> vae_results.parquet
    from glyphbench.vae_eval.report import write_report  # analysis: glyphbench.vae_eval.analyse

CLI: ``glyphbench vae-eval --vae SPEC ... --images SET --out DIR`` (or ``--config
VAES.yaml [--dry-run]``) and
``glyphbench vae-eval download METADATA --out DIR``. See ``docs/vae_eval.md``.
"""
