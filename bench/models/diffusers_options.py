"""The options of ``diffusers:`` models, checked before anything loads.

:class:`DiffusersOptions` is the typed record the registry resolves a spec's query (or a
config entry's ``options:``) into; the table of what each option does is the adapter's
(:mod:`glyphbench.models.diffusers_adapter`). :func:`split_target` and :func:`looks_local`
read the spec's target: a hub id (with an optional ``@revision``) or a local folder.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field, field_validator, model_validator

from glyphbench.core.dtypes import dtype_name
from glyphbench.core.registry import Options, missing_modules
from glyphbench.models.diffusers_loading import QUANTIZE
from glyphbench.models.families import FAMILIES

PositiveInt = Annotated[int, Field(gt=0)]


class DiffusersOptions(Options):
    """Options of ``diffusers:`` models (see the module docstring); unset ones are None."""

    model_config = ConfigDict(str_strip_whitespace=True)

    height: PositiveInt | None = Field(default=None, description="image height in pixels")
    width: PositiveInt | None = Field(default=None, description="image width in pixels")
    steps: PositiveInt | None = Field(default=None, description="num_inference_steps")
    guidance: float | None = Field(default=None, description="guidance_scale")
    max_sequence_length: PositiveInt | None = Field(
        default=None, description="T5/Gemma prompt length (SD3, FLUX, PixArt, Sana)"
    )
    negative_prompt: str | None = Field(
        default=None, description="one negative prompt for every image"
    )
    dtype: Literal["float32", "float16", "bfloat16"] | None = Field(
        default=None,
        description="weights dtype (fp32/fp16/bf16 accepted); default: the family's on CUDA",
    )
    variant: str | None = Field(default=None, description="weight file variant, e.g. fp16")
    revision: str | None = Field(default=None, description="hub revision (same as @revision)")
    device: str | None = Field(
        default=None, description="auto | cpu | cuda | cuda:N (default auto)"
    )
    enable_cpu_offload: bool | None = Field(
        default=None, description="enable_model_cpu_offload() instead of moving to the GPU"
    )
    safety_checker: bool | None = Field(default=None, description="false: remove SD's NSFW checker")
    family: str | None = Field(
        default=None, description="force a family of glyphbench.models.families"
    )
    loader: Literal["diffusion", "auto"] | None = Field(
        default=None, description="DiffusionPipeline or AutoPipelineForText2Image"
    )
    stage2: str | None = Field(
        default=None, description="DeepFloyd IF stage II: hub id, folder or none"
    )
    stage3: str | None = Field(
        default=None, description="DeepFloyd IF stage III: hub id, folder or none"
    )
    stage2_steps: PositiveInt | None = Field(
        default=None, description="DeepFloyd IF stage II steps"
    )
    stage2_guidance: float | None = Field(
        default=None, description="DeepFloyd IF stage II guidance"
    )
    stage3_steps: PositiveInt | None = Field(
        default=None, description="DeepFloyd IF stage III steps"
    )
    stage3_guidance: float | None = Field(
        default=None, description="DeepFloyd IF stage III guidance"
    )

    offload: Literal["none", "model", "sequential"] | None = Field(
        default=None,
        description="CPU offload on CUDA: model (sub-models move in and out) or sequential",
    )
    quantize: (
        Literal[
            "none", "bnb-4bit", "bnb-8bit", "torchao-int8wo", "torchao-int4wo", "torchao-float8wo"
        ]
        | None
    ) = Field(
        default=None,
        description="quantise on load (needs bitsandbytes or torchao: the quant extra)",
    )
    quantize_components: str | None = Field(
        default=None,
        description="comma-separated components to quantise (default: the transformer/UNet)",
    )
    compile: bool | None = Field(default=None, description="torch.compile the transformer/UNet")
    compile_mode: (
        Literal["default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs"] | None
    ) = Field(default=None, description="torch.compile mode (with compile=true)")
    quirks: str | None = Field(
        default=None,
        description="card quirks on (name) or off (-name), comma-separated; see docs/models.md",
    )
    shift: float | None = Field(
        default=None, gt=0, description="scheduler shift (default: the checkpoint's scheduler)"
    )
    text_encoder_4: str | None = Field(
        default=None,
        description="HiDream-I1: hub id or folder of its Llama text encoder/tokenizer, or none",
    )

    @field_validator("dtype", mode="before")
    @classmethod
    def _dtype_alias(cls, value: Any) -> Any:
        return dtype_name(value) if isinstance(value, str) and value.strip() else value

    @field_validator("family")
    @classmethod
    def _known_family(cls, value: str | None) -> str | None:
        if value is not None and value not in FAMILIES:
            raise ValueError(f"unknown family {value!r}; known: {', '.join(FAMILIES)}")
        return value

    @field_validator("quirks")
    @classmethod
    def _known_quirks(cls, value: str | None) -> str | None:
        if value is None:
            return None
        known = sorted({quirk.name for family in FAMILIES.values() for quirk in family.quirks})
        for name in split_list(value):
            if name.lstrip("-") not in known:
                raise ValueError(f"unknown quirk {name.lstrip('-')!r}; known: {', '.join(known)}")
        return value

    @model_validator(mode="after")
    def _quantization_package_installed(self) -> DiffusersOptions:
        if self.quantize and self.quantize != "none":
            package = QUANTIZE[self.quantize][0]
            if missing_modules(package):
                raise ValueError(
                    f"quantize={self.quantize} needs the python package {package!r}, which is "
                    "not installed (pip install 'glyphbench[quant]')"
                )
        return self

    def settings(self) -> dict[str, Any]:
        """The options that were set, by name (what the adapter reads)."""
        return self.model_dump(exclude_none=True)


def split_list(value: str | None) -> list[str]:
    """``"a, b,,c"`` -> ``["a", "b", "c"]``.

    >>> split_list("transformer, text_encoder")
    ['transformer', 'text_encoder']
    """
    return [part.strip() for part in (value or "").split(",") if part.strip()]


def split_target(target: str) -> tuple[str, str | None]:
    """``"owner/name@rev"`` -> ``("owner/name", "rev")``; an existing folder is never split.

    >>> split_target("stabilityai/stable-diffusion-xl-base-1.0@main")
    ('stabilityai/stable-diffusion-xl-base-1.0', 'main')
    >>> split_target("black-forest-labs/FLUX.1-dev")
    ('black-forest-labs/FLUX.1-dev', None)
    """
    if "@" in target and not Path(target).expanduser().exists():
        head, _, revision = target.rpartition("@")
        return head, revision or None
    return target, None


def looks_local(target: str) -> bool:
    """A folder path rather than a hub id (hub ids are ``name`` or ``owner/name``)."""
    if Path(target).expanduser().exists():
        return True
    return (
        target.startswith(("/", "./", "../", "~", "."))
        or "\\" in target
        or target.count("/") > 1
        or bool(re.match(r"^[A-Za-z]:", target))
    )
