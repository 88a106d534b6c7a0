"""Loading options of ``diffusers:`` models: quantisation, CPU offload, torch.compile, extras.

What a 20B model needs to fit on one GPU, kept apart from the adapter so each
piece is small and testable:

* :func:`quantization_plan` turns ``quantize=bnb-4bit`` and a list of components
  into which config class quantises which component (pure, no imports);
  :func:`build_quantization_config` makes diffusers' ``PipelineQuantizationConfig``
  from it (needs ``bitsandbytes`` or ``torchao``: the ``quant`` extra);
* :func:`place_pipeline` moves a pipeline to its device, or offloads it to the
  CPU (``model``: whole sub-models move in and out; ``sequential``: layer by layer,
  slowest and smallest);
* :func:`compile_denoiser` wraps the transformer/UNet in ``torch.compile``;
* :func:`set_scheduler_shift` rebuilds the scheduler with another ``shift``;
* :func:`load_extra_components` loads what a checkpoint leaves out (HiDream's Llama).

Nothing here imports torch or diffusers at module import.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

#: ``quantize`` option value -> (python package needed, backend, config keyword arguments).
#: The torchao entries name a torchao config class, created at load time.
QUANTIZE: dict[str, tuple[str, str, dict[str, Any]]] = {
    "bnb-4bit": (
        "bitsandbytes",
        "bitsandbytes",
        {"load_in_4bit": True, "bnb_4bit_quant_type": "nf4"},
    ),
    "bnb-8bit": ("bitsandbytes", "bitsandbytes", {"load_in_8bit": True}),
    "torchao-int8wo": ("torchao", "torchao", {"quant_type": "Int8WeightOnlyConfig"}),
    "torchao-int4wo": ("torchao", "torchao", {"quant_type": "Int4WeightOnlyConfig"}),
    "torchao-float8wo": ("torchao", "torchao", {"quant_type": "Float8WeightOnlyConfig"}),
}

#: Components whose weights make up the denoiser, in the order they are looked for.
DENOISERS = ("transformer", "unet")

OFFLOAD_MODES = ("none", "model", "sequential")


@dataclass(frozen=True)
class QuantStep:
    """One component to quantise: which library's config class, with which arguments."""

    component: str
    library: str  # "diffusers" or "transformers": whose config class fits the component
    backend: str  # "bitsandbytes" or "torchao"
    kwargs: Mapping[str, Any]


def denoiser_name(model_index: Mapping[str, Any] | None) -> str:
    """The pipeline's denoiser component (``transformer`` or ``unet``).

    >>> denoiser_name({"unet": ["diffusers", "UNet2DConditionModel"]})
    'unet'
    >>> denoiser_name(None)
    'transformer'
    """
    for name in DENOISERS:
        if model_index and name in model_index:
            return name
    return DENOISERS[0]


def component_library(model_index: Mapping[str, Any] | None, component: str) -> str | None:
    """``diffusers`` or ``transformers`` for a component of ``model_index.json`` (None: absent).

    >>> component_library({"text_encoder": ["transformers", "T5EncoderModel"]}, "text_encoder")
    'transformers'
    >>> component_library({"text_encoder": [None, None]}, "text_encoder") is None
    True
    """
    entry = (model_index or {}).get(component)
    if isinstance(entry, (list, tuple)) and entry and entry[0] in ("diffusers", "transformers"):
        return str(entry[0])
    return None


def quantization_plan(
    quantize: str, components: Sequence[str], model_index: Mapping[str, Any] | None
) -> list[QuantStep]:
    """Which components ``quantize`` applies to, and with whose config class.

    ``components`` empty means the denoiser alone. A component the checkpoint does
    not have (or not as a diffusers/transformers model) is an error, so a typo
    does not silently leave a 20B model unquantised.

    >>> index = {"transformer": ["diffusers", "QwenImageTransformer2DModel"],
    ...          "text_encoder": ["transformers", "Qwen2_5_VLForConditionalGeneration"]}
    >>> [(s.component, s.library) for s in quantization_plan("bnb-4bit", [], index)]
    [('transformer', 'diffusers')]
    >>> [s.library for s in quantization_plan("bnb-8bit", ["transformer", "text_encoder"], index)]
    ['diffusers', 'transformers']
    >>> quantization_plan("none", ["transformer"], index)
    []
    """
    if quantize == "none":
        return []
    _package, backend, kwargs = QUANTIZE[quantize]
    wanted = list(components) or [denoiser_name(model_index)]
    steps = []
    for component in wanted:
        library = component_library(model_index, component)
        if library is None:
            known = ", ".join(
                name for name in (model_index or {}) if component_library(model_index, name)
            )
            raise ValueError(
                f"cannot quantise {component!r}: not a model component here (known: {known})"
            )
        steps.append(QuantStep(component, library, backend, kwargs))
    return steps


def build_quantization_config(plan: Sequence[QuantStep], dtype: str) -> Any:
    """diffusers' ``PipelineQuantizationConfig`` for ``plan`` (compute dtype ``dtype``)."""
    import torch

    quantizers = importlib.import_module("diffusers.quantizers")
    mapping = {step.component: _config_object(step, getattr(torch, dtype)) for step in plan}
    return quantizers.PipelineQuantizationConfig(quant_mapping=mapping)


def _config_object(step: QuantStep, compute_dtype: Any) -> Any:
    library = importlib.import_module(step.library)
    kwargs = dict(step.kwargs)
    if step.backend == "bitsandbytes":
        if kwargs.get("load_in_4bit"):
            kwargs["bnb_4bit_compute_dtype"] = compute_dtype
        return library.BitsAndBytesConfig(**kwargs)
    torchao_quantization = importlib.import_module("torchao.quantization")
    quant_type = getattr(torchao_quantization, kwargs.pop("quant_type"))()
    return library.TorchAoConfig(quant_type, **kwargs)


def place_pipeline(pipe: Any, device: str, offload: str) -> Any:
    """Move ``pipe`` to ``device``, or offload it to the CPU (CUDA only; ignored on CPU)."""
    pipe.set_progress_bar_config(disable=True)
    if offload == "model" and device.startswith("cuda"):
        pipe.enable_model_cpu_offload(device=device)
    elif offload == "sequential" and device.startswith("cuda"):
        pipe.enable_sequential_cpu_offload(device=device)
    else:
        pipe.to(device)
    return pipe


def compile_denoiser(pipe: Any, mode: str | None) -> str:
    """Wrap the pipeline's transformer/UNet in ``torch.compile``; returns the component's name."""
    import torch

    for name in DENOISERS:
        module = getattr(pipe, name, None)
        if module is not None:
            wanted = mode if mode and mode != "default" else None
            setattr(pipe, name, torch.compile(module, mode=wanted))
            return name
    raise ValueError(f"{type(pipe).__name__} has no transformer or unet to compile")


def set_scheduler(pipe: Any, name: str, config: Mapping[str, Any]) -> None:
    """Swap in diffusers' scheduler ``name``, built from the shipped config plus ``config``."""
    import diffusers

    cls = getattr(diffusers, name)
    pipe.scheduler = cls.from_config(pipe.scheduler.config, **dict(config))


def set_scheduler_shift(pipe: Any, shift: float) -> None:
    """Rebuild the scheduler with ``shift`` (``flow_shift`` for UniPC-style schedulers).

    Dynamic shifting, where the scheduler has it, is turned off: a fixed shift is
    what a card that sets one means.
    """
    scheduler = pipe.scheduler
    key = next((k for k in ("flow_shift", "shift") if k in scheduler.config), None)
    if key is None:
        raise ValueError(f"{type(scheduler).__name__} has no 'shift' setting")
    extra: dict[str, Any] = {key: shift}
    if "use_dynamic_shifting" in scheduler.config:
        extra["use_dynamic_shifting"] = False
    pipe.scheduler = type(scheduler).from_config(scheduler.config, **extra)


def load_extra_component(
    library_class: str, source: str, dtype_keyword: str, dtype: Any, **kwargs: Any
) -> Any:
    """Load ``library_class`` (``"transformers.LlamaForCausalLM"``) from ``source``.

    ``dtype`` None loads without a dtype (tokenizers).
    """
    module_name, _, class_name = library_class.rpartition(".")
    cls = getattr(importlib.import_module(module_name), class_name)
    if dtype is not None:
        kwargs[dtype_keyword] = dtype
    return cls.from_pretrained(source, **kwargs)
