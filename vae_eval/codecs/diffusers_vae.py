"""``diffusers:<hub id or path>[:subfolder]``: any diffusers autoencoder an image pipeline uses.

The class comes from the folder's ``config.json`` (``_class_name``); :data:`RECIPES`
says, per class, how a pipeline turns pixels into the latents its denoiser sees and
back, and this codec does exactly that (deterministically):

* **encode output**: KL autoencoders give a distribution and the codec takes its mode
  (``latent_dist.mode()``, no sampling); Tiny, VQ and DC-AE encoders give latents;
* **latent normalisation** (exact up to float rounding, so the round trip sees the
  numbers a denoiser does): ``(z - shift_factor) * scaling_factor`` from the config
  (SD, SDXL, SD3, FLUX.1, Sana, HunyuanImage); per-channel ``(z - latents_mean) /
  latents_std`` (Qwen-Image, Wan-style); FLUX.2's batch-norm statistics on 2x2-patched
  latents (``(patch(z) - running_mean) / sqrt(running_var + eps)``); none for VQ;
* **video VAEs** (Qwen-Image, Wan, HunyuanImage's refiner) get one frame as a 5-D
  ``B x 3 x 1 x H x W`` tensor and the frame is taken back out;
* **RGBA autoencoders** (``in_channels: 4``, Qwen-Image 2.1) get the image with an
  opaque alpha channel, as its pipeline converts inputs to RGBA; the decoded alpha is
  dropped.

Spec parsing: the target is split at its *last* colon when the part after it is a
plain folder name (no ``/`` or ``\\``); that part is the subfolder. So
``diffusers:stabilityai/stable-diffusion-xl-base-1.0:vae`` loads the ``vae`` folder
of that hub repo, ``diffusers:/models/sd-vae`` a local folder, and a Windows path like
``diffusers:C:\\models\\vae`` keeps its drive letter.

dtype defaults to fp32; with ``dtype=fp16``/``bf16`` a config with ``force_upcast:
true`` (SD/SDXL VAEs, known to overflow in fp16) runs in fp32 anyway, and
``describe()`` says so. Padding, batching, tiling and NaN handling are the tensor
protocol's (:class:`~glyphbench.vae_eval.codecs.protocol.TensorCodec`).

:func:`pipeline_autoencoders` lists, from the installed diffusers itself, the
autoencoder classes its text-to-image pipelines declare; the tests check that each
one has a recipe here.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from glyphbench.core.dtypes import dtype_name
from glyphbench.core.errors import InputError
from glyphbench.core.hub import offline_kwargs, unreachable_note
from glyphbench.core.registry import Spec, missing_modules, register
from glyphbench.vae_eval.codecs.protocol import TensorCodec, TensorOptions

Normalisation = Literal["factor", "mean_std", "batch_norm", "none"]


def _halvings(*keys: str) -> Callable[[dict[str, Any]], int]:
    """Grid size from a list of blocks: each block after the first halves the resolution."""

    def grid(config: dict[str, Any]) -> int:
        blocks = next((config[key] for key in keys if config.get(key)), ())
        return 2 ** max(0, len(blocks) - 1) if blocks else 8

    return grid


def _ratio(config: dict[str, Any]) -> int:
    return int(config.get("spatial_compression_ratio") or 16)


def _video_grid(config: dict[str, Any]) -> int:
    """Wan-style 3-D VAEs: a halving per ``dim_mult`` step after the first, times the patch."""
    steps = len(config.get("dim_mult") or (1, 2, 4, 4)) - 1
    patch = int(config.get("patch_size") or 1)
    return int(2**steps) * patch


def _flux2_grid(config: dict[str, Any]) -> int:
    patch = config.get("patch_size") or (2, 2)
    return _halvings("block_out_channels")(config) * int(max(patch))


@dataclass(frozen=True)
class Recipe:
    """How a pipeline hands one autoencoder class's latents to its denoiser."""

    output: Literal["latent_dist", "latents", "latent"]  # attribute of encode()'s result
    normalise: Normalisation
    grid: Callable[[dict[str, Any]], int]  # pixels per latent cell, from the config
    frames: bool = False  # a video VAE: fed one frame as B x C x 1 x H x W


_KL = Recipe("latent_dist", "factor", _halvings("block_out_channels", "down_block_out_channels"))
_VIDEO = Recipe("latent_dist", "mean_std", _video_grid, frames=True)

#: Autoencoder classes by ``_class_name``: what their pipelines do with latents.
RECIPES: dict[str, Recipe] = {
    "AutoencoderKL": _KL,  # SD 1.x/2.x, SDXL, SD3, FLUX.1, PixArt, AuraFlow, CogView, ...
    "AsymmetricAutoencoderKL": _KL,
    "AutoencoderKLHunyuanImage": Recipe("latent_dist", "factor", _ratio),
    "AutoencoderKLFlux2": Recipe("latent_dist", "batch_norm", _flux2_grid),
    "AutoencoderTiny": Recipe("latents", "factor", _halvings("encoder_block_out_channels")),
    "AutoencoderDC": Recipe("latent", "factor", _halvings("encoder_block_out_channels")),
    "VQModel": Recipe("latents", "none", _halvings("block_out_channels")),  # Kandinsky MoVQ
    "AutoencoderKLQwenImage": _VIDEO,
    "AutoencoderKLQwenImage21": _VIDEO,
    "AutoencoderKLWan": _VIDEO,
    "AutoencoderKLHunyuanImageRefiner": Recipe("latent_dist", "factor", _ratio, frames=True),
}
SUPPORTED_CLASSES = tuple(RECIPES)


def split_target(target: str) -> tuple[str, str | None]:
    """Split ``<hub id or path>[:subfolder]`` (see the module docstring).

    >>> split_target("stabilityai/stable-diffusion-xl-base-1.0:vae")
    ('stabilityai/stable-diffusion-xl-base-1.0', 'vae')
    >>> split_target("stabilityai/sd-vae-ft-mse")
    ('stabilityai/sd-vae-ft-mse', None)
    >>> split_target("C:\\\\models\\\\vae")
    ('C:\\\\models\\\\vae', None)
    """
    head, sep, tail = target.rpartition(":")
    if sep and head and tail and "/" not in tail and "\\" not in tail:
        return head, tail
    return target, None


class DiffusersCodecOptions(TensorOptions):
    """Options of the ``diffusers:`` codec (the tensor codec options)."""


class DiffusersCodec(TensorCodec):
    """A diffusers autoencoder, loaded with ``from_pretrained`` and run as its pipeline would."""

    def __init__(self, spec: Spec, options: DiffusersCodecOptions | None = None) -> None:
        options = options or DiffusersCodecOptions()
        super().__init__(options)
        self.name = spec.text
        self.source, self.subfolder = split_target(spec.target)

        import diffusers
        import torch

        config = self._load_config(diffusers)
        self.class_name = str(config.get("_class_name", "AutoencoderKL"))
        if self.class_name not in RECIPES:
            raise InputError(
                None,
                f"{spec.text!r} is a {self.class_name}; "
                f"supported autoencoders: {', '.join(SUPPORTED_CLASSES)}",
            )
        self.recipe = RECIPES[self.class_name]
        requested_low = dtype_name(options.dtype) != "float32"
        self.upcast = requested_low and bool(config.get("force_upcast", False))
        if self.upcast:
            self.dtype = torch.float32
        self.model = self._load_model(diffusers, spec.text)
        self.config = dict(self.model.config)
        self.scaling_factor = float(self.config.get("scaling_factor") or 1.0)
        self.shift_factor = float(self.config.get("shift_factor") or 0.0)
        self.multiple = self.recipe.grid(self.config)
        channels = self.config.get("in_channels") or self.config.get("input_channels") or 3
        self.alpha = int(channels) == 4
        sample_size = self.config.get("sample_size")
        if isinstance(sample_size, (list, tuple)):
            sample_size = max(sample_size)
        self.native_resolution = int(sample_size) if sample_size else None

    def _load_model(self, diffusers: Any, text: str) -> Any:
        kwargs: dict[str, Any] = {"torch_dtype": self.dtype, **self._hub_kwargs()}
        if self.subfolder:
            kwargs["subfolder"] = self.subfolder
        try:
            model = getattr(diffusers, self.class_name).from_pretrained(self.source, **kwargs)
        except (OSError, ValueError) as exc:
            reason = str(exc).splitlines()[0] + self._offline_note()
            raise InputError(None, f"cannot load {text!r}: {reason}") from None
        return model.to(self.device).eval()

    def _load_config(self, diffusers: Any) -> dict[str, Any]:
        local = Path(self.source) / (self.subfolder or "") / "config.json"
        if local.is_file():
            loaded: dict[str, Any] = json.loads(local.read_text(encoding="utf-8"))
            return loaded
        if Path(self.source).exists():
            raise InputError(
                local, "no diffusers config.json here (wrong path or missing :subfolder?)"
            )
        try:
            kwargs: dict[str, Any] = {"subfolder": self.subfolder} if self.subfolder else {}
            kwargs.update(self._hub_kwargs())
            config: dict[str, Any] = diffusers.AutoencoderKL.load_config(self.source, **kwargs)
            return config
        except (OSError, ValueError) as exc:
            reason = str(exc).splitlines()[0] + self._offline_note()
            raise InputError(None, f"cannot load config of {self.name!r}: {reason}") from None

    def _hub_kwargs(self) -> dict[str, bool]:
        """Offline (hub unreachable): the local cache only, failing at once, not after retries."""
        return {} if Path(self.source).exists() else offline_kwargs()

    def _offline_note(self) -> str:
        return "" if Path(self.source).exists() else unreachable_note(self.source)

    def describe(self) -> str:
        import diffusers

        upcast = " (force_upcast)" if self.upcast else ""
        where = self.source + (f" [{self.subfolder}]" if self.subfolder else "")
        return (
            f"{self.class_name} {where}; {self.dtype_name()}{upcast} on {self.device}; "
            f"{self._normalisation_text()}; diffusers {diffusers.__version__}"
            f"{self.tiling_text()}"
        )

    def _normalisation_text(self) -> str:
        normalise = self.recipe.normalise
        if normalise == "factor":
            return f"scale {self.scaling_factor:g} shift {self.shift_factor:g}"
        if normalise == "mean_std":
            return "per-channel latents_mean/latents_std" + (", one frame" * self.recipe.frames)
        if normalise == "batch_norm":
            return "batch-norm latent statistics on 2x2 patches"
        return "no latent scaling"

    # ----------------------------------------------------------------- encode / decode
    def encode(self, x: Any) -> Any:
        if self.alpha:  # an RGBA autoencoder: the image is opaque (alpha 1 in [-1, 1])
            x = torch_cat_alpha(x)
        if self.recipe.frames:
            x = x.unsqueeze(2)
        encoded = getattr(self.model.encode(x), self.recipe.output)
        latents = encoded.mode() if self.recipe.output == "latent_dist" else encoded
        return self._normalise(latents)

    def decode(self, latents: Any) -> Any:
        sample = self.model.decode(self._denormalise(latents)).sample
        sample = sample[:, :, 0] if self.recipe.frames else sample
        return sample[:, :3]  # RGB (an RGBA autoencoder's alpha is dropped)

    def _normalise(self, z: Any) -> Any:
        normalise = self.recipe.normalise
        if normalise == "factor":
            return (z - self.shift_factor) * self.scaling_factor
        if normalise == "mean_std":
            mean, std = self._mean_std(z)
            return (z - mean) / std
        if normalise == "batch_norm":
            mean, std = self._batch_norm_stats(z)
            return (patchify(z) - mean) / std
        return z

    def _denormalise(self, z: Any) -> Any:
        normalise = self.recipe.normalise
        if normalise == "factor":
            return z / self.scaling_factor + self.shift_factor
        if normalise == "mean_std":
            mean, std = self._mean_std(z)
            return z * std + mean
        if normalise == "batch_norm":
            mean, std = self._batch_norm_stats(z)
            return unpatchify(z * std + mean)
        return z

    def _mean_std(self, z: Any) -> tuple[Any, Any]:
        import torch

        shape = (1, -1) + (1,) * (z.ndim - 2)
        mean = torch.tensor(self.config["latents_mean"], dtype=z.dtype, device=z.device)
        std = torch.tensor(self.config["latents_std"], dtype=z.dtype, device=z.device)
        return mean.view(shape), std.view(shape)

    def _batch_norm_stats(self, z: Any) -> tuple[Any, Any]:
        norm = self.model.bn
        mean = norm.running_mean.view(1, -1, 1, 1).to(z.device, z.dtype)
        variance = norm.running_var.view(1, -1, 1, 1).to(z.device, z.dtype)
        return mean, (variance + float(self.config.get("batch_norm_eps", 1e-4))).sqrt()


def torch_cat_alpha(x: Any) -> Any:
    """``B x 3 x ...`` in [-1, 1] -> ``B x 4 x ...`` with an opaque alpha channel (1.0)."""
    import torch

    return torch.cat([x, torch.ones_like(x[:, :1])], dim=1)


def patchify(z: Any) -> Any:
    """``B x C x H x W`` -> ``B x 4C x H/2 x W/2``: each 2x2 patch becomes 4 channels."""
    batch, channels, height, width = z.shape
    patches = z.reshape(batch, channels, height // 2, 2, width // 2, 2)
    return patches.permute(0, 1, 3, 5, 2, 4).reshape(batch, channels * 4, height // 2, width // 2)


def unpatchify(z: Any) -> Any:
    """The inverse of :func:`patchify`."""
    batch, channels, height, width = z.shape
    patches = z.reshape(batch, channels // 4, 2, 2, height, width)
    return patches.permute(0, 1, 4, 2, 5, 3).reshape(batch, channels // 4, height * 2, width * 2)


# --------------------------------------------------------------------------- discovery

#: ``__call__`` parameters that make a pipeline a video or audio pipeline.
NOT_IMAGE_PARAMETERS = ("num_frames", "video", "audio_duration", "audio_length_in_s")


def is_text_to_image(pipeline: type) -> bool:
    """A pipeline that makes images from a prompt alone (its own signature says so).

    Its ``__call__`` takes ``prompt``, ``height`` and ``width``, no required ``image``,
    and none of :data:`NOT_IMAGE_PARAMETERS`; its name mentions no video, audio or world.
    """
    import inspect

    try:
        parameters = inspect.signature(pipeline.__call__).parameters
    except (TypeError, ValueError):
        return False
    if not {"prompt", "height", "width"} <= set(parameters):
        return False
    if any(name in parameters for name in NOT_IMAGE_PARAMETERS):
        return False
    if any(word in pipeline.__name__ for word in ("Video", "Audio", "World")):
        return False
    image = parameters.get("image")
    return image is None or image.default is not inspect.Parameter.empty


def pipeline_autoencoders() -> dict[str, list[str]]:
    """Autoencoder class -> the installed diffusers text-to-image pipelines that declare it.

    Pipelines: every ``*Pipeline`` diffusers exports that :func:`is_text_to_image`
    accepts, plus the text-to-image table of ``AutoPipelineForText2Image``. The class
    comes from the type hint of the pipeline's ``vae`` (or Kandinsky's ``movq``)
    parameter, read with :func:`typing.get_type_hints` (unions are split).
    """
    import typing

    import diffusers
    from diffusers.pipelines.auto_pipeline import AUTO_TEXT2IMAGE_PIPELINES_MAPPING

    pipelines: set[type] = set(AUTO_TEXT2IMAGE_PIPELINES_MAPPING.values())
    for name in dir(diffusers):
        if name.endswith("Pipeline"):
            candidate = getattr(diffusers, name, None)
            if isinstance(candidate, type) and is_text_to_image(candidate):
                pipelines.add(candidate)
    uses: dict[str, list[str]] = {}
    for pipeline in sorted(pipelines, key=lambda cls: cls.__name__):
        for parameter in ("vae", "movq"):
            hint = _parameter_hint(pipeline, parameter)
            for option in typing.get_args(hint) or (hint,):
                if isinstance(option, type) and option is not type(None):
                    uses.setdefault(option.__name__, []).append(pipeline.__name__)
    return dict(sorted(uses.items()))


def _parameter_hint(pipeline: type, parameter: str) -> Any:
    """The type hint of ``parameter`` in ``pipeline.__init__`` (resolved when written as text)."""
    import inspect
    import typing

    init = vars(pipeline).get("__init__") or getattr(pipeline, "__init__", None)
    try:
        return typing.get_type_hints(init).get(parameter)
    except Exception:  # an unresolvable forward reference elsewhere in the signature
        found = inspect.signature(pipeline).parameters.get(parameter)
        return None if found is None else found.annotation


@register(
    "codecs",
    "diffusers",
    options=DiffusersCodecOptions,
    target="required",
    usage="diffusers:<hub id or path>[:subfolder]",
    summary="A diffusers autoencoder of any image pipeline (KL, Flux2, Qwen-Image, DC-AE, ...).",
    missing=lambda: missing_modules("torch", "diffusers"),
)
def _diffusers(spec: Spec, options: DiffusersCodecOptions) -> DiffusersCodec:
    return DiffusersCodec(spec, options)
