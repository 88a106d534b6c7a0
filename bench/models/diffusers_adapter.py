"""``diffusers:<hub id or local folder>[@revision]``: any diffusers text-to-image pipeline.

One adapter serves every family: it loads the checkpoint with
``DiffusionPipeline.from_pretrained`` (``AutoPipelineForText2Image`` for the
Kandinsky families, whose repos hold only the decoder), starts from the family's
defaults (:mod:`glyphbench.models.families`), applies the config's options, and at
generation time passes only the keyword arguments the pipeline's ``__call__``
accepts (others are recorded in ``describe()["ignored_settings"]``).

Options (:class:`DiffusersOptions`; spec query ``?key=value`` or a config entry's
``options:``; values may be strings; an empty value means not set):

==================== ======================================================================
height, width        image size in pixels (DeepFloyd IF: stage I size)
steps                ``num_inference_steps``
guidance             ``guidance_scale``
max_sequence_length  T5/Gemma prompt length (SD3, FLUX, PixArt, Sana)
negative_prompt      one negative prompt used for every image
dtype                float32 | float16 | bfloat16 (default: the family's on CUDA, float32 on CPU)
variant              weight file variant to load, e.g. fp16 or bf16
revision             hub revision (same as ``@revision`` in the spec)
device               auto | cpu | cuda | cuda:N (default auto: CUDA when available)
enable_cpu_offload   true: ``enable_model_cpu_offload()`` instead of moving to the GPU
safety_checker       false: remove SD's NSFW checker (which blacks images out); recorded
family               force a family from :data:`glyphbench.models.families.FAMILIES`
loader               diffusion | auto (AutoPipelineForText2Image)
stage2, stage3       DeepFloyd IF later stages: a hub id / folder, or ``none``
stageN_steps         DeepFloyd IF: steps / guidance of stage 2 or 3
stageN_guidance
offload              none | model | sequential: CPU offload for GPUs too small for the model
quantize             none | bnb-4bit | bnb-8bit | torchao-int8wo | torchao-int4wo |
                     torchao-float8wo (needs the ``quant`` extra)
quantize_components  comma-separated components to quantise (default: the transformer/UNet)
compile              true: ``torch.compile`` the transformer/UNet (``compile_mode`` to tune)
quirks               card quirks on (``name``) or off (``-name``), e.g. ``magic``
shift                scheduler shift (flow-matching schedulers; default: the checkpoint's)
text_encoder_4       HiDream-I1: where its Llama text encoder comes from (or ``none``)
==================== ======================================================================

Seeding: each request gets its own ``torch.Generator("cpu").manual_seed(req.seed)``
and the pipeline receives the list, so every image's initial noise depends on
its own seed only: an image is the same alone or inside a batch (up to float
rounding of batched kernels). CPU generators make the noise identical on any
GPU; diffusers draws it on the CPU and moves it to the device.

Loading is lazy: creating the adapter and calling ``describe()`` read at most a
local ``model_index.json`` (or the local hub cache), never weights or the
network, so ``--dry-run`` can resolve every model's settings.
"""

from __future__ import annotations

import gc
import hashlib
import inspect
import json
import logging
import sys
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from glyphbench.core.errors import InputError
from glyphbench.core.hub import endpoint, hub_reachable, offline_kwargs, unreachable_note
from glyphbench.core.registry import Spec, missing_modules, parse_options, register
from glyphbench.models.base import ImageRequest, ModelAdapter
from glyphbench.models.diffusers_loading import (
    build_quantization_config,
    compile_denoiser,
    load_extra_component,
    place_pipeline,
    quantization_plan,
    set_scheduler,
    set_scheduler_shift,
)
from glyphbench.models.diffusers_options import (
    DiffusersOptions,
    looks_local,
    split_list,
    split_target,
)
from glyphbench.models.families import FAMILIES, UNKNOWN, Family, detect_family, family_defaults
from glyphbench.tiny.pipelines import read_marker

log = logging.getLogger(__name__)

if TYPE_CHECKING:
    from PIL import Image


def _dtype_keyword() -> str:
    """``dtype`` for diffusers versions that deprecate ``torch_dtype``, else ``torch_dtype``."""
    try:
        from diffusers.utils import deprecation_utils
    except ImportError:  # pragma: no cover - depends on the installed diffusers
        return "torch_dtype"
    return (
        "dtype" if hasattr(deprecation_utils, "_TORCH_DTYPE_DEPRECATION_MESSAGE") else "torch_dtype"
    )


def _cached_pipeline(repo: str, revision: str | None) -> bool:
    """Whether the hub cache holds ``repo``'s ``model_index.json`` and every component folder."""
    from huggingface_hub import try_to_load_from_cache

    cached = try_to_load_from_cache(repo, "model_index.json", revision=revision)
    if not (isinstance(cached, str) and Path(cached).is_file()):
        return False
    index = json.loads(Path(cached).read_text(encoding="utf-8"))
    snapshot = Path(cached).parent
    components = [
        name
        for name, value in index.items()
        if not name.startswith("_") and isinstance(value, list) and value and value[0]
    ]
    return all((snapshot / name).is_dir() for name in components)


def _short_hash(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:12]


class DiffusersModel(ModelAdapter):
    """A diffusers text-to-image pipeline (any family), loaded lazily."""

    is_control = False

    def __init__(
        self,
        target: str,
        options: DiffusersOptions | Mapping[str, Any] | None = None,
        *,
        spec_text: str = "",
    ) -> None:
        self.spec = spec_text or f"diffusers:{target}"
        if not target.strip():
            raise InputError(
                None, f"{self.spec!r}: give a hub id or folder, e.g. diffusers:owner/name"
            )
        if not isinstance(options, DiffusersOptions):
            options = parse_options(DiffusersOptions, options or {}, self.spec)
        self.options: dict[str, Any] = options.settings()
        location, at_revision = split_target(target.strip())
        self.requested_revision: str | None = self.options.get("revision") or at_revision
        self.is_local = looks_local(location)
        self.location = str(Path(location).expanduser()) if self.is_local else location
        self.model_index: dict[str, Any] | None = None
        self.model_index_hash: str | None = None
        self.tiny: dict[str, Any] | None = None
        self.hub_commit: str | None = None
        if self.is_local:
            self._read_local_index(Path(self.location))
        else:
            self._read_hub_cache()
        self._pipe: Any = None
        self._stages: list[Any] = []
        self._device: str | None = None
        self._dtype: str | None = None
        self._ignored: list[str] = []
        self._safety = "not loaded"
        self._nsfw_flagged = 0
        self._truncated = 0  # prompts longer than the (first) tokenizer's limit
        self._token_limit: int | None = None
        self._compiled: str | None = None
        self._extras_loaded: dict[str, str] = {}
        self._resolve_family(self.model_index)

    # ------------------------------------------------------------ settings
    def _read_local_index(self, folder: Path) -> None:
        if not folder.is_dir():
            raise InputError(folder, "diffusers model folder not found")
        index_file = folder / "model_index.json"
        if not index_file.is_file():
            raise InputError(folder, "not a diffusers pipeline folder (no model_index.json)")
        self.model_index = json.loads(index_file.read_text(encoding="utf-8"))
        self.model_index_hash = _short_hash(index_file)
        self.tiny = read_marker(folder)

    def _read_hub_cache(self) -> None:
        """Read model_index.json from the local hub cache if it is there (never downloads)."""
        try:
            from huggingface_hub import try_to_load_from_cache
        except ImportError:  # pragma: no cover - huggingface_hub ships with diffusers
            return
        cached = try_to_load_from_cache(
            self.location, "model_index.json", revision=self.requested_revision
        )
        if isinstance(cached, str) and Path(cached).is_file():
            self.model_index = json.loads(Path(cached).read_text(encoding="utf-8"))
            self.model_index_hash = _short_hash(Path(cached))
            self.hub_commit = Path(cached).parent.name  # .../snapshots/<commit>/model_index.json

    def _resolve_family(self, model_index: Mapping[str, Any] | str | None) -> None:
        if "family" in self.options:
            self.family_name, self.family_source = self.options["family"], "option"
        elif model_index is not None:
            self.family_name = detect_family(model_index, self.location)
            self.family_source = "model_index.json"
        else:
            self.family_name = detect_family(None, self.location)
            self.family_source = "id pattern" if self.family_name != UNKNOWN else "none"
        self.family: Family = family_defaults(self.family_name)
        settings: dict[str, Any] = self.family.settings()
        settings.pop("dtype")  # reported on its own: it depends on the device
        settings["negative_prompt"] = self.family.negative_prompt
        settings["shift"] = self.family.scheduler_shift
        for stage in self.family.stages:
            settings[f"{stage.option}_steps"] = stage.steps
            settings[f"{stage.option}_guidance"] = stage.guidance
        if self.tiny:
            settings.update(self.tiny.get("defaults", {}))
        settings.update({k: v for k, v in self.options.items() if k in settings and k != "dtype"})
        if str(settings.get("negative_prompt") or "").lower() == "none":
            settings["negative_prompt"] = None  # "none" switches a family's default off
        self.settings = settings
        self.quirks = self._resolve_quirks()

    def planned_size(self) -> tuple[int, int] | None:
        """The resolved ``width`` and ``height`` (None where the pipeline's default rules)."""
        width, height = self.settings.get("width"), self.settings.get("height")
        return (int(width), int(height)) if width and height else None

    def _resolve_quirks(self) -> dict[str, bool]:
        """Each of the family's quirks -> on/off (family default, then the ``quirks`` option)."""
        chosen = {quirk.name: quirk.default for quirk in self.family.quirks}
        for name in split_list(self.options.get("quirks")):
            bare = name.lstrip("-")
            if bare not in chosen:
                offered = ", ".join(chosen) or "none"
                raise InputError(
                    self.spec,
                    f"quirk {bare!r} is not one of family {self.family_name}'s quirks ({offered})",
                    key="quirks",
                )
            chosen[bare] = not name.startswith("-")
        return chosen

    @property
    def pipeline_class(self) -> str:
        if self._pipe is not None:
            return type(self._pipe).__name__
        if self.model_index is not None:
            return str(self.model_index.get("_class_name", ""))
        classes = self.family.pipeline_classes
        return classes[0] if classes else ""

    def _stage_repos(self) -> list[tuple[str, str]]:
        """(option, checkpoint) for each enabled later stage of a cascade."""
        chosen = []
        for stage in self.family.stages:
            repo = str(self.options.get(stage.option, stage.repo))
            if repo and repo.lower() != "none":
                chosen.append((stage.option, repo))
        return chosen

    def _offload(self) -> str:
        if "offload" in self.options:
            return str(self.options["offload"])
        return "model" if self.options.get("enable_cpu_offload") else "none"

    def _quantize_components(self) -> list[str]:
        return split_list(self.options.get("quantize_components"))

    def describe(self) -> dict[str, Any]:
        """Resolved settings and provenance (no weights needed; richer once loaded)."""
        if self.is_local:
            revision = "local"
        else:
            revision = self.hub_commit or self.requested_revision or "main"
        info: dict[str, Any] = {
            "spec": self.spec,
            "is_control": False,
            "kind": "diffusers",
            "source": "local" if self.is_local else "hub",
            "target": self.location,
            "family": self.family_name,
            "family_source": self.family_source,
            "pipeline_class": self.pipeline_class,
            "loader": self._loader_name(),
            "revision": revision,
            "requested_revision": self.requested_revision,
            "dtype": self._dtype or self._planned_dtype(),
            "device": self._device or self.options.get("device", "auto"),
            "variant": self.options.get("variant"),
            "enable_cpu_offload": self._offload() == "model",
            "settings": dict(self.settings),
            "guidance_keyword": self.family.guidance_keyword,
            "call_kwargs": {**self.family.call_kwargs, **self._tiny_call_kwargs()},
            "scheduler": self.family.scheduler,
            "quirks": dict(self.quirks),
            **self._loading_info(),
            "safety_checker": self._safety,
            "nsfw_flagged": self._nsfw_flagged,
            "prompts_over_token_limit": self._truncated,
            "tokenizer_max_length": self._token_limit,
            # A marker may also describe a full-size random build (benchmarks.fullsize).
            "tiny_random": bool(self.tiny and self.tiny.get("tiny_random", True)),
            "random_weights": bool(self.tiny and self.tiny.get("random_weights", True)),
            "model_index_sha256": self.model_index_hash,
            "loaded": self._pipe is not None,
        }
        missing = self._missing_requirement()
        if missing:
            info["unavailable"] = missing
        if self.family.stages:
            info["stages"] = [repo for _, repo in self._stage_repos()]
        if self._pipe is not None:
            info["ignored_settings"] = list(self._ignored)
            import diffusers

            info["diffusers_version"] = diffusers.__version__
        if self.tiny:
            note_key = "tiny_note" if info["tiny_random"] else "random_note"
            info[note_key] = self.tiny.get("note", "tiny random pipeline")
        return info

    def local_weights(self) -> list[Path]:
        """The main folder when local, and every later stage (``stage2=``) or extra
        component (``text_encoder_4=``) given as a local path."""
        given = [str(self.options.get(part.option) or "") for part in self.family.stages]
        given += [str(self.options.get(extra.option) or "") for extra in self.family.extras]
        paths = [Path(self.location)] if self.is_local else []
        return paths + [Path(p).expanduser() for p in given if p and looks_local(p)]

    def weights_check(self) -> dict[str, str | None]:
        """The local folder, the hub cache, or the hub when it answers (never downloads).

        A hub model counts as cached when its ``model_index.json`` and a folder for each of
        its components are in the local cache (a cascade's later stages likewise); else the
        hub must answer (:func:`glyphbench.core.hub.hub_reachable`), or the model cannot load:
        the problem names the repositories missing and the cache looked in.
        """
        missing = self._missing_requirement()
        if self.is_local:
            return {"source": f"local folder {self.location}", "problem": missing}
        repos = [self.location, *(repo for _, repo in self._stage_repos())]
        uncached = [repo for repo in repos if not _cached_pipeline(repo, self.requested_revision)]
        if not uncached:
            return {"source": "hub cache", "problem": missing}
        if hub_reachable():
            return {"source": f"hub {endpoint()} (downloaded when loaded)", "problem": missing}
        from huggingface_hub import constants

        problem = (
            f"{', '.join(uncached)} not in the local cache ({constants.HF_HUB_CACHE}) and the "
            f"hub {endpoint()} is unreachable"
        )
        return {"source": None, "problem": "; ".join(p for p in (problem, missing) if p)}

    def _loading_info(self) -> dict[str, Any]:
        """How the weights are (to be) loaded: offload, quantisation, compile, extras."""
        quantize = str(self.options.get("quantize", "none"))
        components: list[str] = []
        if quantize != "none":
            components = self._quantize_components() or ["transformer/unet"]
        # Once loaded, where each extra came from; before, where it will come from.
        planned = {
            extra.name: self._extra_source(extra.option, extra.repo) for extra in self._extras()
        }
        return {
            "offload": self._offload(),
            "quantize": quantize,
            "quantize_components": components,
            "compile": bool(self.options.get("compile", False)),
            "compile_mode": self.options.get("compile_mode"),
            "compiled_component": self._compiled,
            "extra_components": dict(self._extras_loaded) or planned,
        }

    def _loader_name(self) -> str:
        return str(self.options.get("loader", self.family.loader))

    def _planned_dtype(self) -> str:
        """The dtype before loading: configured, else the family's (float32 if on CPU)."""
        if "dtype" in self.options:
            return str(self.options["dtype"])
        if self.options.get("device") == "cpu":
            return "float32"
        return f"{self.family.dtype} on cuda, float32 on cpu"

    def _missing_requirement(self) -> str | None:
        """Why this family cannot load here (a python package it needs is absent), or None."""
        for module in self.family.requires:
            missing = missing_modules(module)
            if missing:
                return f"{missing}; family {self.family_name} needs it (see docs/models.md)"
        return None

    # ------------------------------------------------------------ loading
    def _resolve_device(self) -> str:
        import torch

        wanted = str(self.options.get("device", "auto"))
        if wanted == "auto":
            return "cuda" if torch.cuda.is_available() else "cpu"
        if wanted.startswith("cuda") and not torch.cuda.is_available():
            raise InputError(self.spec, f"device {wanted!r} requested but CUDA is not available")
        return wanted

    def _from_pretrained(
        self, loader: Any, location: str, *, use_variant: bool = True, **extra: Any
    ) -> Any:
        import torch

        kwargs: dict[str, Any] = {_dtype_keyword(): getattr(torch, self._dtype or "float32")}
        if use_variant and "variant" in self.options:
            kwargs["variant"] = self.options["variant"]
        local = Path(location).exists()
        if not local:  # offline: the cache only, failing at once instead of after retries
            kwargs.update(offline_kwargs())
        kwargs.update(extra)
        try:
            with _quiet_loading_bars():
                return loader.from_pretrained(location, **kwargs)
        except OSError as exc:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            if not local:
                first += unreachable_note(location)
            raise InputError(location, f"cannot load diffusers pipeline: {first}") from exc
        except ValueError as exc:
            if "variant" in str(exc):  # diffusers raises ValueError for a missing variant
                raise InputError(
                    location, f"no weights of variant {kwargs.get('variant')!r}", key="variant"
                ) from exc
            raise

    def _place(self, pipe: Any) -> Any:
        return place_pipeline(pipe, str(self._device), self._offload())

    def load(self) -> None:
        """Load the weights (idempotent). Called by the first :meth:`generate`."""
        if self._pipe is not None:
            return
        missing = self._missing_requirement()
        if missing:
            raise InputError(self.spec, f"cannot load: {missing}")
        from diffusers import AutoPipelineForText2Image, DiffusionPipeline

        self._device = self._resolve_device()
        if "dtype" in self.options:
            self._dtype = str(self.options["dtype"])
        else:
            self._dtype = self.family.dtype if self._device.startswith("cuda") else "float32"
        loader = AutoPipelineForText2Image if self._loader_name() == "auto" else DiffusionPipeline
        extra = self._load_kwargs()
        pipe = self._from_pretrained(loader, self.location, **extra)
        if self.options.get("family") is None and self.model_index is None:
            # A hub model not in the cache before: now its real class is known.
            self._resolve_family(type(pipe).__name__)
            self._read_hub_cache()
        stages = []
        for option, repo in self._stage_repos():
            # Later IF stages reuse stage I's prompt embeddings, so they skip their text encoder.
            # The variant option (fp16 for the DeepFloyd repos) applies to stages I and II only:
            # a stage III upscaler comes from another publisher with other variants.
            stage_extra: dict[str, Any] = {"text_encoder": None} if option == "stage2" else {}
            stage = self._from_pretrained(
                DiffusionPipeline, repo, use_variant=option == "stage2", **stage_extra
            )
            stages.append(self._place(stage))
        self._configure_pipeline(pipe)
        self._pipe, self._stages = self._place(pipe), stages
        self._configure_safety_checker()

    def _load_kwargs(self) -> dict[str, Any]:
        """``from_pretrained`` extras: revision, quantisation, components the repo lacks."""
        extra: dict[str, Any] = {}
        if self.requested_revision and not self.is_local:
            extra["revision"] = self.requested_revision
        quantize = str(self.options.get("quantize", "none"))
        if quantize != "none":
            try:
                plan = quantization_plan(quantize, self._quantize_components(), self.model_index)
            except ValueError as exc:
                raise InputError(self.spec, str(exc), key="quantize_components") from None
            extra["quantization_config"] = build_quantization_config(plan, str(self._dtype))
        extra.update(self._load_extras())
        return extra

    def _extras(self) -> list[Any]:
        """The family's extra components this checkpoint does not ship."""
        index = self.model_index or {}
        return [
            extra
            for extra in self.family.extras
            if not (isinstance(index.get(extra.name), list) and index[extra.name][0])
        ]

    def _extra_source(self, option: str, default: str) -> str:
        return str(self.options.get(option) or default)

    def _load_extras(self) -> dict[str, Any]:
        import torch

        loaded: dict[str, Any] = {}
        for extra in self._extras():
            source = self._extra_source(extra.option, extra.repo)
            if source.lower() == "none":
                continue
            dtype = getattr(torch, str(self._dtype)) if extra.weighted else None
            try:
                loaded[extra.name] = load_extra_component(
                    extra.library_class, source, _dtype_keyword(), dtype, **extra.kwargs
                )
            except OSError as exc:
                first = str(exc).strip().splitlines()[0] if str(exc).strip() else repr(exc)
                raise InputError(
                    source, f"cannot load {extra.name}: {first}", key=extra.option
                ) from exc
            self._extras_loaded[extra.name] = source
        return loaded

    def _configure_pipeline(self, pipe: Any) -> None:
        """The family's scheduler and its shift, guider scale and torch.compile, as configured."""
        if self.family.scheduler:  # the card's script swaps the scheduler (HiDream)
            set_scheduler(pipe, self.family.scheduler, self.family.scheduler_config)
        shift = self.settings.get("shift")
        if shift is not None:
            try:
                set_scheduler_shift(pipe, float(shift))
            except ValueError as exc:
                raise InputError(self.spec, str(exc), key="shift") from None
        guidance = self.settings.get("guidance")
        if self.family.guidance_keyword == "guider" and guidance is not None:
            # HunyuanImage: one guider for plain prompts, one for prompts with quoted text.
            for name in ("guider", "ocr_guider"):
                guider = getattr(pipe, name, None)
                if guider is not None:
                    setattr(pipe, name, guider.new(guidance_scale=guidance))
        if self.options.get("compile"):
            self._compiled = compile_denoiser(pipe, self.options.get("compile_mode"))

    def _configure_safety_checker(self) -> None:
        has_checker = getattr(self._pipe, "safety_checker", None) is not None
        if not has_checker:
            self._safety = "absent"
        elif self.options.get("safety_checker") is False:
            self._pipe.safety_checker = None
            for stage in self._stages:
                if getattr(stage, "safety_checker", None) is not None:
                    stage.safety_checker = None
            self._safety = "disabled"
        else:
            self._safety = "kept"

    # ------------------------------------------------------------ generation
    def _call_kwargs(self, pipe: Any, n: int) -> dict[str, Any]:
        """Keyword arguments for ``pipe.__call__``, limited to those it accepts."""
        s = self.settings
        wanted: dict[str, Any] = {
            "num_inference_steps": s.get("steps"),
            "max_sequence_length": s.get("max_sequence_length"),
            "height": s.get("height"),
            "width": s.get("width"),
            **self.family.call_kwargs,
        }
        if self.family.guidance_keyword != "guider":  # the guider got it at load time
            wanted[self.family.guidance_keyword] = s.get("guidance")
        for quirk in self.family.quirks:
            wanted.update(quirk.call_kwargs(self.quirks[quirk.name]))
        wanted.update(self._tiny_call_kwargs())
        if s.get("negative_prompt"):
            wanted["negative_prompt"] = [s["negative_prompt"]] * n
        wanted = {k: v for k, v in wanted.items() if v is not None}
        accepted = inspect.signature(pipe.__call__).parameters
        self._ignored = sorted(k for k in wanted if k not in accepted)
        return {k: v for k, v in wanted.items() if k in accepted}

    def _tiny_call_kwargs(self) -> dict[str, Any]:
        """``__call__`` arguments a tiny build's marker asks for (never set for real models)."""
        return dict((self.tiny or {}).get("call_kwargs", {}))

    def prompts_for(self, requests: Sequence[ImageRequest]) -> list[str]:
        """The prompts the pipeline receives: each request's, with the quirks' suffixes."""
        prompts = []
        for request in requests:
            prompt = request.prompt
            for quirk in self.family.quirks:
                if self.quirks[quirk.name] and quirk.rewrites_prompt:
                    prompt = quirk.apply(prompt)
            prompts.append(prompt)
        return prompts

    def generate(self, requests: Sequence[ImageRequest]) -> list[Image.Image]:
        """One image per request; each request's seed drives its own generator."""
        if not requests:
            return []
        self.load()
        import torch

        generators = [torch.Generator("cpu").manual_seed(int(r.seed)) for r in requests]
        prompts = self.prompts_for(requests)
        self._count_truncated(prompts)
        with _quiet_diffusers():
            if self._stages or self.family_name == "deepfloyd-if":
                images = self._generate_cascade(prompts, generators)
            else:
                kwargs = self._call_kwargs(self._pipe, len(prompts))
                result = self._pipe(
                    prompt=prompts, generator=generators, output_type="pil", **kwargs
                )
                # Kandinsky 5 returns ``image``; every other pipeline ``images``.
                found = getattr(result, "images", None)
                images = list(found if found is not None else result.image)
                self._count_nsfw(result)
        if len(images) != len(requests):
            raise RuntimeError(
                f"{self.spec}: pipeline returned {len(images)} images for {len(requests)} prompts"
            )
        return [image.convert("RGB") for image in images]

    def _count_truncated(self, prompts: list[str]) -> None:
        """Count prompts the pipeline's (first) tokenizer will cut, and warn once per model.

        diffusers logs a warning per batch for this; counting it here keeps progress
        output readable and records the number in ``describe()``. Pipelines with a
        second, longer text encoder (SD3, FLUX: T5) still see the whole prompt there.
        """
        from transformers import PreTrainedTokenizerBase

        # Some pipelines keep a multimodal processor under this name (FLUX.2): not counted.
        tokenizer = getattr(self._pipe, "tokenizer", None)
        if not isinstance(tokenizer, PreTrainedTokenizerBase):
            return
        limit = getattr(tokenizer, "model_max_length", None)
        if not isinstance(limit, int) or limit > 100_000:
            return
        self._token_limit = limit
        lengths = [
            len(ids) for ids in tokenizer(prompts, truncation=False, verbose=False)["input_ids"]
        ]
        over = sum(1 for n in lengths if n > limit)
        if over and not self._truncated:
            log.warning(
                "%s: prompts longer than the text encoder's %d tokens are truncated "
                "(counted in run.json as prompts_over_token_limit)",
                self.spec,
                limit,
            )
        self._truncated += over

    def _count_nsfw(self, result: Any) -> None:
        flags = getattr(result, "nsfw_content_detected", None) or []
        self._nsfw_flagged += sum(1 for flag in flags if flag)

    def _generate_cascade(self, prompts: list[str], generators: list[Any]) -> list[Any]:
        """DeepFloyd IF: stage I (64 px) -> stage II (256 px) -> optional stage III."""
        stage1 = self._pipe
        negative = self.settings.get("negative_prompt")
        embeds, negative_embeds = stage1.encode_prompt(
            prompts, negative_prompt=[negative] * len(prompts) if negative else None
        )
        kwargs = self._call_kwargs(stage1, len(prompts))
        kwargs.pop("negative_prompt", None)  # already inside negative_embeds
        images = stage1(
            prompt_embeds=embeds,
            negative_prompt_embeds=negative_embeds,
            generator=generators,
            output_type="pt",
            **kwargs,
        ).images
        stage_settings = {s.option: s for s in self.family.stages}
        enabled = self._stage_repos()
        for position, ((option, _repo), pipe) in enumerate(zip(enabled, self._stages, strict=True)):
            last = position == len(enabled) - 1
            spec = stage_settings[option]
            call = {
                "image": images,
                "generator": generators,
                "output_type": "pil" if last else "pt",
                "num_inference_steps": self.settings[f"{option}_steps"],
                "guidance_scale": self.settings[f"{option}_guidance"],
                **spec.call_kwargs,
            }
            if option == "stage2":
                call.update(prompt_embeds=embeds, negative_prompt_embeds=negative_embeds)
            else:
                call["prompt"] = prompts
                if negative:
                    call["negative_prompt"] = [negative] * len(prompts)
            accepted = inspect.signature(pipe.__call__).parameters
            result = pipe(**{k: v for k, v in call.items() if k in accepted})
            images = result.images
            self._count_nsfw(result)
        if not enabled:  # stage I alone: tensors in [-1, 1] -> PIL
            import importlib

            pt_to_pil = importlib.import_module("diffusers.utils").pt_to_pil
            images = pt_to_pil(images)
        return list(images)

    def close(self) -> None:
        """Drop the pipeline(s) and free GPU memory before the next model loads."""
        self._pipe = None
        self._stages = []
        gc.collect()
        torch = sys.modules.get("torch")
        if torch is not None and torch.cuda.is_available():
            torch.cuda.empty_cache()


#: The logger and the start of the transformers warning about a prompt longer than the
#: tokenizer's limit; pipelines tokenize the whole prompt to tell what they cut off.
TOKEN_LENGTH_LOGGER = "transformers.tokenization_utils_base"
TOKEN_LENGTH_WARNING = "Token indices sequence length is longer than"


class _DropTokenLengthWarning(logging.Filter):
    """Drops only the "Token indices sequence length is longer than ..." record."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith(TOKEN_LENGTH_WARNING)


@contextmanager
def quiet_token_length_warning() -> Iterator[None]:
    """Silence that one warning while a pipeline runs: truncating prompts is intended.

    Pipelines with a CLIP text encoder cut prompts at its limit on purpose (and
    :meth:`DiffusersModel._count_truncated` counts them into run.json), but they
    tokenize the whole prompt first to tell what was cut, and transformers then warns
    that the sequence "will result in indexing errors", which it will not. Every other
    record of that logger still shows.
    """
    logger = logging.getLogger(TOKEN_LENGTH_LOGGER)
    drop = _DropTokenLengthWarning()
    logger.addFilter(drop)
    try:
        yield
    finally:
        logger.removeFilter(drop)


@contextmanager
def _quiet_diffusers() -> Iterator[None]:
    """Silence diffusers' per-call warnings (we count truncation ourselves)."""
    from diffusers.utils import logging as diffusers_logging

    before = diffusers_logging.get_verbosity()
    diffusers_logging.set_verbosity_error()
    try:
        with quiet_token_length_warning():
            yield
    finally:
        diffusers_logging.set_verbosity(before)


@register(
    "models",
    "diffusers",
    options=DiffusersOptions,
    target="required",
    usage="diffusers:<hub id or folder>[@revision][?option=value&...]",
    summary=(
        "Any diffusers text-to-image pipeline; the family's defaults, then the options. "
        f"Families: {', '.join(name for name in FAMILIES if name != UNKNOWN)} "
        "(defaults and sources: docs/models.md)."
    ),
    missing=lambda: missing_modules("torch", "diffusers"),
)
def create_diffusers_model(spec: Spec, options: DiffusersOptions) -> DiffusersModel:
    """Registry factory: ``diffusers:<hub id or folder>[@revision]?option=value&...``."""
    return DiffusersModel(spec.target, options, spec_text=spec.text)


@contextmanager
def _quiet_loading_bars() -> Iterator[None]:
    """No diffusers "Loading pipeline components" bar in a log (stderr not a terminal).

    On a terminal the bar shows how a long load goes; in a log it is a line of
    block characters between glyphbench's own progress lines.
    """
    from diffusers.utils import logging as diffusers_logging

    if sys.stderr.isatty() or not diffusers_logging.is_progress_bar_enabled():
        yield
        return
    diffusers_logging.disable_progress_bar()
    try:
        yield
    finally:
        diffusers_logging.enable_progress_bar()
