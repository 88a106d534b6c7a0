"""How much GPU memory a family's weights need, and how to fit it on a 24/48/80 GB GPU.

Weights at bfloat16 take two bytes a parameter (parameter counts per component:
:attr:`glyphbench.models.families.Family.parameters`, sources in docs/models.md).
Activations, the CUDA context and the VAE decode at about one megapixel need a
few more GB; :data:`HEADROOM_GB` keeps that margin. The advice is a first try,
not a guarantee: 2K models (HunyuanImage) and large batches need more.

Options, cheapest first (each is a ``diffusers:`` option, recorded in run.json):

* as is: everything on the GPU;
* ``offload: model``: each sub-model (text encoder, transformer, VAE) moves to
  the GPU only while it runs, so the peak is the largest one;
* ``quantize: bnb-4bit``: the transformer in 4-bit NF4 (about 0.55 bytes a
  parameter with its scales), optionally with ``quantize_components:
  transformer,text_encoder`` and model offload;
* ``offload: sequential``: layer by layer, fits almost anything, very slow.

>>> from glyphbench.models.families import FAMILIES
>>> weights_gb(FAMILIES["qwen-image"])
57.7
>>> fit_advice(FAMILIES["qwen-image"], 80), fit_advice(FAMILIES["qwen-image"], 24)
('as is', 'quantize: bnb-4bit, offload: model')
"""

from __future__ import annotations

from glyphbench.models.families import FAMILIES, UNKNOWN, Family

#: GB kept free for activations, the CUDA context and the VAE decode.
HEADROOM_GB = 4.0

#: Bytes per parameter: bfloat16, and NF4 4-bit with its per-block scales.
BF16_BYTES, NF4_BYTES = 2.0, 0.55

#: GPU sizes the docs give advice for.
GPU_SIZES_GB = (24, 48, 80)


def _gb(billions: float, bytes_per_parameter: float = BF16_BYTES) -> float:
    return billions * bytes_per_parameter


def _denoiser(family: Family) -> str:
    for name in ("transformer", "unet"):
        if name in family.parameters:
            return name
    return max(family.parameters, key=family.parameters.__getitem__)


def _text_encoder(family: Family) -> str | None:
    encoders = [name for name in family.parameters if name.startswith("text_encoder")]
    return max(encoders, key=family.parameters.__getitem__) if encoders else None


def weights_gb(family: Family) -> float:
    """All weighted components at bfloat16, in GB (10^9 bytes)."""
    return round(_gb(family.parameters_billion), 1)


def _sizes(family: Family, quantized: tuple[str, ...]) -> list[float]:
    return [
        _gb(billions, NF4_BYTES if name in quantized else BF16_BYTES)
        for name, billions in family.parameters.items()
    ]


def fit_advice(family: Family, gpu_gb: float) -> str:
    """The cheapest loading options that should fit ``family`` on a GPU of ``gpu_gb`` GB."""
    usable = gpu_gb - HEADROOM_GB
    denoiser, encoder = _denoiser(family), _text_encoder(family)
    plans: list[tuple[tuple[str, ...], bool, str]] = [
        ((), False, "as is"),
        ((), True, "offload: model"),
        ((denoiser,), False, "quantize: bnb-4bit"),
        ((denoiser,), True, "quantize: bnb-4bit, offload: model"),
    ]
    if encoder is not None:
        both = f"quantize: bnb-4bit, quantize_components: {denoiser},text_encoder"
        plans.append(((denoiser, encoder), False, both))
        plans.append(((denoiser, encoder), True, both + ", offload: model"))
    for quantized, offload, advice in plans:
        sizes = _sizes(family, quantized)
        peak = max(sizes) if offload else sum(sizes)
        if peak <= usable:
            return advice
    return "offload: sequential (slow)"


def memory_table_markdown() -> str:
    """docs/models.md's memory table: one row per family (a test keeps the doc in step)."""

    header = (
        "| family | parameters (B) | bf16 weights (GB) | 24 GB GPU | 48 GB GPU | 80 GB GPU |\n"
        "| --- | ---: | ---: | --- | --- | --- |"
    )
    rows = [
        f"| `{name}` | {family.parameters_billion:g} | {weights_gb(family):g} | "
        + " | ".join(fit_advice(family, size) for size in GPU_SIZES_GB)
        + " |"
        for name, family in FAMILIES.items()
        if name != UNKNOWN
    ]
    return "\n".join([header, *rows])
