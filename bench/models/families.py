"""Per-family defaults for diffusers text-to-image pipelines (a pure table).

A *family* is a group of checkpoints that share a pipeline class and sensible
sampling settings. The diffusers adapter starts from the family's defaults and
lets a config override any of them. Values come from each family's published
model card or the diffusers documentation; docs/models.md lists the source of
every number.

How a checkpoint's family is found (:func:`detect_family`):

1. the ``_class_name`` in its ``model_index.json`` names the pipeline class,
   which narrows the family down (``StableDiffusionXLPipeline`` -> ``sdxl``);
2. where one class serves several families (``FluxPipeline``: dev or schnell;
   ``StableDiffusionPipeline``: 1.x, 2.x or 2.x-base), the model id picks one
   through :data:`ID_PATTERNS`;
3. without a ``model_index.json`` (a hub id during ``--dry-run``, when nothing
   may be downloaded) the id patterns alone guess the family, else ``unknown``.

>>> detect_family({"_class_name": "StableDiffusionXLPipeline"}, "my/finetune")
'sdxl'
>>> detect_family("FluxPipeline", "black-forest-labs/FLUX.1-schnell")
'flux-schnell'
>>> guess_family_from_id("stabilityai/stable-diffusion-3.5-large")
'sd35-large'
>>> guess_family_from_id("someone/some-model")
'unknown'

This module imports nothing heavy (no torch, no diffusers).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

UNKNOWN = "unknown"


@dataclass(frozen=True)
class Stage:
    """A later stage of a cascaded family (DeepFloyd IF): its own checkpoint and settings."""

    option: str  # the adapter option that names (or disables, with "none") this stage
    repo: str  # default checkpoint; "" means the stage is off unless the config names one
    steps: int
    guidance: float
    call_kwargs: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Family:
    """Defaults for one family. ``None`` leaves the value to the pipeline's own default."""

    name: str
    pipeline_classes: tuple[str, ...]  # ``_class_name`` values in model_index.json
    height: int | None
    width: int | None
    steps: int | None
    guidance: float | None
    dtype: str  # torch dtype name used on CUDA (CPU always runs float32 unless configured)
    max_sequence_length: int | None = None  # only for pipelines whose __call__ accepts it
    call_kwargs: Mapping[str, Any] = field(default_factory=dict)  # further __call__ defaults
    loader: str = "diffusion"  # "diffusion": DiffusionPipeline; "auto": AutoPipelineForText2Image
    stages: tuple[Stage, ...] = ()
    notes: str = ""

    def settings(self) -> dict[str, Any]:
        """The overridable settings as a plain mapping (adapter option names)."""
        return {
            "height": self.height,
            "width": self.width,
            "steps": self.steps,
            "guidance": self.guidance,
            "dtype": self.dtype,
            "max_sequence_length": self.max_sequence_length,
        }


_FAMILY_LIST: tuple[Family, ...] = (
    Family(
        "sd1",
        ("StableDiffusionPipeline",),
        512,
        512,
        50,
        7.5,
        "float16",
        notes="Stable Diffusion 1.x (CLIP ViT-L text encoder, 77 tokens).",
    ),
    Family(
        "sd2",
        ("StableDiffusionPipeline",),
        768,
        768,
        50,
        7.5,
        "float16",
        notes="Stable Diffusion 2.x at 768 px (v-prediction; OpenCLIP text encoder).",
    ),
    Family(
        "sd2-base",
        ("StableDiffusionPipeline",),
        512,
        512,
        50,
        7.5,
        "float16",
        notes="Stable Diffusion 2.x base models at 512 px (epsilon prediction).",
    ),
    Family(
        "sdxl",
        ("StableDiffusionXLPipeline",),
        1024,
        1024,
        50,
        5.0,
        "float16",
        notes="SDXL base; the refiner is not used (base-only, as the model card's first example).",
    ),
    Family(
        "sd3",
        ("StableDiffusion3Pipeline",),
        1024,
        1024,
        28,
        7.0,
        "float16",
        max_sequence_length=256,
        notes="Stable Diffusion 3 Medium; T5 prompt length 256 (pipeline default).",
    ),
    Family(
        "sd35-large",
        ("StableDiffusion3Pipeline",),
        1024,
        1024,
        28,
        3.5,
        "bfloat16",
        max_sequence_length=256,
        notes="Stable Diffusion 3.5 Large.",
    ),
    Family(
        "sd35-large-turbo",
        ("StableDiffusion3Pipeline",),
        1024,
        1024,
        4,
        0.0,
        "bfloat16",
        max_sequence_length=256,
        notes="Stable Diffusion 3.5 Large Turbo (distilled: 4 steps, no guidance).",
    ),
    Family(
        "sd35-medium",
        ("StableDiffusion3Pipeline",),
        1024,
        1024,
        40,
        4.5,
        "bfloat16",
        max_sequence_length=256,
        notes="Stable Diffusion 3.5 Medium.",
    ),
    Family(
        "flux-dev",
        ("FluxPipeline",),
        1024,
        1024,
        50,
        3.5,
        "bfloat16",
        max_sequence_length=512,
        notes="FLUX.1 [dev]; guidance is the distilled guidance embedding, not CFG.",
    ),
    Family(
        "flux-schnell",
        ("FluxPipeline",),
        1024,
        1024,
        4,
        0.0,
        "bfloat16",
        max_sequence_length=256,
        notes="FLUX.1 [schnell]; timestep-distilled, guidance unused, T5 length capped at 256.",
    ),
    Family(
        "pixart-alpha",
        ("PixArtAlphaPipeline",),
        1024,
        1024,
        20,
        4.5,
        "float16",
        max_sequence_length=120,
        notes="PixArt-alpha XL-2 1024-MS (T5 length 120).",
    ),
    Family(
        "pixart-sigma",
        ("PixArtSigmaPipeline",),
        1024,
        1024,
        20,
        4.5,
        "float16",
        max_sequence_length=300,
        notes="PixArt-Sigma XL-2 1024-MS (T5 length 300).",
    ),
    Family(
        "sana",
        ("SanaPipeline",),
        1024,
        1024,
        20,
        4.5,
        "bfloat16",
        max_sequence_length=300,
        notes="Sana 1.6B 1024 px (Gemma-2 text encoder). The *_BF16 repos ship variant 'bf16'.",
    ),
    Family(
        "kandinsky22",
        (
            "KandinskyV22Pipeline",
            "KandinskyV22CombinedPipeline",
            "KandinskyPipeline",
            "KandinskyCombinedPipeline",
        ),
        768,
        768,
        100,
        4.0,
        "float16",
        call_kwargs={"prior_guidance_scale": 4.0, "prior_num_inference_steps": 25},
        loader="auto",
        notes=(
            "Kandinsky 2.1/2.2: the decoder repo is loaded with AutoPipelineForText2Image, "
            "which adds the prior (text -> image embedding) as one combined pipeline."
        ),
    ),
    Family(
        "kandinsky3",
        ("Kandinsky3Pipeline",),
        1024,
        1024,
        25,
        3.0,
        "float16",
        loader="auto",
        notes="Kandinsky 3 (Flan-UL2 text encoder).",
    ),
    Family(
        "deepfloyd-if",
        ("IFPipeline",),
        64,
        64,
        100,
        7.0,
        "float16",
        stages=(
            Stage("stage2", "DeepFloyd/IF-II-L-v1.0", 50, 4.0),
            Stage("stage3", "", 75, 9.0, {"noise_level": 100}),
        ),
        notes=(
            "DeepFloyd IF is a cascade: stage I makes 64 px images, stage II upsamples to "
            "256 px, and an optional stage III (e.g. stabilityai/stable-diffusion-x4-upscaler) "
            "to 1024 px. height/width are stage I's; every stage uses the same per-image "
            "generators."
        ),
    ),
    Family(
        UNKNOWN,
        (),
        None,
        None,
        None,
        None,
        "float16",
        notes="Not a known family: the pipeline's own defaults apply unless configured.",
    ),
)

#: Family name -> defaults.
FAMILIES: dict[str, Family] = {family.name: family for family in _FAMILY_LIST}

#: Model-id patterns (case-insensitive regular expressions searched in the id or
#: path), most specific first. Used to pick among families that share a pipeline
#: class, and alone to guess a hub model's family without downloading anything.
ID_PATTERNS: tuple[tuple[str, str], ...] = (
    (r"deepfloyd|(^|/)if-i-", "deepfloyd-if"),
    (r"flux[.\-_]?1?[.\-_]?schnell|schnell", "flux-schnell"),
    (r"flux", "flux-dev"),
    (r"(stable-diffusion-|sd)3[.\-_]5[.\-_]large[.\-_]turbo", "sd35-large-turbo"),
    (r"(stable-diffusion-|sd)3[.\-_]5[.\-_]medium", "sd35-medium"),
    (r"(stable-diffusion-|sd)3[.\-_]5", "sd35-large"),
    (r"stable-diffusion-3|(^|[/_\-])sd3", "sd3"),
    (r"stable-diffusion-xl|sdxl|(^|[/_\-])sd[_\-]?xl", "sdxl"),
    (r"pixart[.\-_]?sigma", "pixart-sigma"),
    (r"pixart", "pixart-alpha"),
    (r"sana", "sana"),
    (r"kandinsky[.\-_]?3", "kandinsky3"),
    (r"kandinsky", "kandinsky22"),
    (r"stable-diffusion-2(-1)?-base|sd2(\.1)?-base", "sd2-base"),
    (r"stable-diffusion-2|(^|[/_\-])sd2", "sd2"),
    (r"stable-diffusion|(^|[/_\-])sd-?v?1", "sd1"),
)


def guess_family_from_id(model_id: str) -> str:
    """The family whose id pattern first matches ``model_id``, else ``"unknown"``.

    >>> guess_family_from_id("DeepFloyd/IF-I-XL-v1.0")
    'deepfloyd-if'
    >>> guess_family_from_id("stabilityai/stable-diffusion-2-1-base")
    'sd2-base'
    """
    for pattern, family in ID_PATTERNS:
        if re.search(pattern, model_id, flags=re.IGNORECASE):
            return family
    return UNKNOWN


def families_for_class(class_name: str) -> list[str]:
    """Families whose checkpoints use pipeline class ``class_name`` (first is the default)."""
    return [f.name for f in _FAMILY_LIST if class_name in f.pipeline_classes]


def detect_family(model_index: Mapping[str, Any] | str | None, model_id: str = "") -> str:
    """The family of a checkpoint from its ``model_index.json`` (or class name) and id.

    ``model_index`` is the parsed ``model_index.json``, or just its ``_class_name``,
    or None when it is not available (then the id alone decides).

    >>> detect_family({"_class_name": "StableDiffusionPipeline"}, "stabilityai/stable-diffusion-2-1")
    'sd2'
    >>> detect_family({"_class_name": "StableDiffusionPipeline"}, "/tmp/tiny-sd")
    'sd1'
    >>> detect_family("SomeNewPipeline", "lab/sdxl-finetune")
    'sdxl'
    >>> detect_family("SomeNewPipeline", "lab/model")
    'unknown'
    """
    if isinstance(model_index, Mapping):
        class_name = str(model_index.get("_class_name") or "")
    else:
        class_name = model_index or ""
    candidates = families_for_class(class_name) if class_name else []
    from_id = guess_family_from_id(model_id) if model_id else UNKNOWN
    if not candidates:
        return from_id
    if from_id in candidates:
        return from_id
    return candidates[0]


def family_defaults(name: str) -> Family:
    """The :class:`Family` called ``name``; unknown names get the ``unknown`` family."""
    return FAMILIES.get(name, FAMILIES[UNKNOWN])
