"""Per-family defaults for diffusers text-to-image pipelines (pure tables, one module per group).

A *family* is a group of checkpoints that share a pipeline class and sensible
sampling settings. The diffusers adapter starts from the family's defaults and
lets a config override any of them. Values come from each family's published
model card or the diffusers documentation; docs/models.md lists the source of
every number.

Adding a family is one :class:`Family` record in a module of this package, passed
to :func:`register_family`: families are records of the one plug-in registry
(:mod:`glyphbench.core.registry`, kind ``families``), which imports every module of this
package (``classic``, ``qwen``, ``flux2``, ...) when a family is first looked up. A
name another module registered already is a
:class:`~glyphbench.core.registry.DuplicateName` error naming both modules
(``replace=True`` overrides on purpose). Families are tried in the order ``classic``
first, then the other modules by name, each module's in the order it registers
them. A record may carry a ``tiny`` builder (a tiny random pipeline for the tests)
next to its defaults, so one file holds everything about a family.

How a checkpoint's family is found (:func:`detect_family`):

1. the ``_class_name`` in its ``model_index.json`` names the pipeline class,
   which narrows the family down (``StableDiffusionXLPipeline`` -> ``sdxl``);
   a family may also require keys of ``model_index.json`` (``index_match``:
   FLUX.2 [klein] records ``is_distilled``);
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
>>> guess_family_from_id("Qwen/Qwen-Image")
'qwen-image'
>>> guess_family_from_id("someone/some-model")
'unknown'

This package imports nothing heavy (no torch, no diffusers); tiny builders
import them when called.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from glyphbench.core.registry import PLUGINS, DuplicateName, Plugin

UNKNOWN = "unknown"

#: ``__call__`` keywords the ``guidance`` setting can feed (see :attr:`Family.guidance_keyword`).
GUIDANCE_KEYWORDS = ("guidance_scale", "true_cfg_scale", "distilled_guidance_scale", "guider")

_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")


@dataclass(frozen=True)
class Stage:
    """A later stage of a cascaded family (DeepFloyd IF): its own checkpoint and settings."""

    option: str  # the adapter option that names (or disables, with "none") this stage
    repo: str  # default checkpoint; "" means the stage is off unless the config names one
    steps: int
    guidance: float
    call_kwargs: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Quirk:
    """An optional prompt or call tweak a model card recommends (a "magic" suffix, an enhancer).

    Quirks are off unless ``default`` is true; the adapter option ``quirks`` turns
    them on (``quirks=magic``) or off (``quirks=-name``) and ``describe()`` records
    which were on. When on, ``suffix`` is appended to every prompt (``suffix_cjk``
    instead for prompts with Chinese, Japanese or Korean characters, where a card
    gives one), or the prompt becomes a one-key JSON object (``json_key``), and
    ``call_on`` joins the ``__call__`` arguments; when off, ``call_off`` does (to
    switch off a behaviour the pipeline has on by default).

    >>> magic = Quirk("magic", "card suffix", suffix=", 4K.", suffix_cjk=" 4K。")
    >>> magic.apply("a sign saying OPEN"), magic.apply("写着开门的牌子")
    ('a sign saying OPEN, 4K.', '写着开门的牌子 4K。')
    """

    name: str
    summary: str
    default: bool = False
    suffix: str = ""
    suffix_cjk: str = ""
    json_key: str = ""
    call_on: Mapping[str, Any] = field(default_factory=dict)
    call_off: Mapping[str, Any] = field(default_factory=dict)

    @property
    def rewrites_prompt(self) -> bool:
        return bool(self.suffix or self.suffix_cjk or self.json_key)

    def apply(self, prompt: str) -> str:
        """``prompt`` with this quirk's suffix (the CJK one for CJK prompts), or as JSON.

        >>> Quirk("json", "structured caption", json_key="short_description").apply("a red bike")
        '{"short_description":"a red bike"}'
        """
        if self.json_key:
            return json.dumps({self.json_key: prompt}, ensure_ascii=False, separators=(",", ":"))
        if self.suffix_cjk and _CJK.search(prompt):
            return prompt + self.suffix_cjk
        return prompt + self.suffix

    def call_kwargs(self, on: bool) -> dict[str, Any]:
        """The ``__call__`` arguments this quirk adds when ``on`` (or off)."""
        return dict(self.call_on if on else self.call_off)


@dataclass(frozen=True)
class ExtraComponent:
    """A pipeline component the checkpoint does not ship and the card loads from elsewhere.

    HiDream-I1's diffusers repos leave out ``tokenizer_4``/``text_encoder_4``
    (Llama-3.1-8B-Instruct): the adapter loads them from ``repo`` (or from the
    adapter option named ``option``) when ``model_index.json`` has no entry for them.
    """

    name: str  # pipeline argument, e.g. "text_encoder_4"
    library_class: str  # "transformers.LlamaForCausalLM", "transformers.AutoTokenizer"
    option: str  # adapter option naming another source ("none": do not load)
    repo: str  # default source (hub id)
    kwargs: Mapping[str, Any] = field(default_factory=dict)  # from_pretrained extras
    weighted: bool = True  # loaded in the pipeline's dtype (False for tokenizers)


#: ``tiny(path) -> Path`` builds a tiny random pipeline of the family at ``path``.
TinyBuilder = Callable[[Path], Path]


@dataclass(frozen=True)
class Family:
    """Defaults for one family. ``None`` leaves the value to the pipeline's own default.

    ``guidance`` feeds the ``__call__`` keyword ``guidance_keyword``:
    ``guidance_scale`` (CFG or a distilled guidance embedding), ``true_cfg_scale``
    (Qwen-Image: real CFG, which needs a negative prompt), ``distilled_guidance_scale``
    (HunyuanImage distilled) or ``guider`` (HunyuanImage: the pipeline's guider
    component is rebuilt with that ``guidance_scale`` at load time).
    ``negative_prompt`` is the card's default negative prompt; ``scheduler_shift``
    a shift the card sets on the scheduler at inference (None: the checkpoint's
    scheduler config as shipped); ``scheduler`` a scheduler class the card's script
    swaps in (HiDream). ``parameters`` holds the weighted components'
    parameter counts in billions (memory estimate in docs/models.md).
    """

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
    guidance_keyword: str = "guidance_scale"
    negative_prompt: str | None = None
    scheduler_shift: float | None = None
    #: A diffusers scheduler class the card's inference script uses instead of the
    #: checkpoint's, rebuilt from the shipped config with ``scheduler_config`` on top.
    scheduler: str | None = None
    scheduler_config: Mapping[str, Any] = field(default_factory=dict)
    quirks: tuple[Quirk, ...] = ()
    extras: tuple[ExtraComponent, ...] = ()
    id_patterns: tuple[str, ...] = ()  # regular expressions searched in the id (see ID_PATTERNS)
    match_order: int = 100  # lower is tried first: a specific family before a broad one
    index_match: Mapping[str, Any] = field(default_factory=dict)  # model_index.json keys
    requires: tuple[str, ...] = ()  # python modules needed beyond torch/diffusers/transformers
    parameters: Mapping[str, float] = field(default_factory=dict)  # billions, per component
    sources: str = ""  # where the defaults come from (docs/models.md source numbers)
    tiny: TinyBuilder | None = None
    tiny_note: str = ""  # what the tiny build leaves out, or why it is slow

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

    @property
    def parameters_billion(self) -> float:
        """Total parameters of the weighted components, in billions."""
        return round(sum(self.parameters.values()), 2)


_UNKNOWN_FAMILY = Family(
    UNKNOWN,
    (),
    None,
    None,
    None,
    None,
    "float16",
    notes="Not a known family: the pipeline's own defaults apply unless configured.",
)


def register_family(*families: Family, replace: bool = False) -> None:
    """Register ``families`` (call at import time of their module, in match order).

    A taken name is a :class:`~glyphbench.core.registry.DuplicateName` error naming both
    modules, unless ``replace=True``.
    """
    module = str(sys._getframe(1).f_globals.get("__name__", ""))
    names = [family.name for family in families]
    twice = sorted({name for name in names if names.count(name) > 1})
    if twice:
        raise DuplicateName(f"{module} registers model family {twice[0]!r} twice")
    for family in families:
        PLUGINS.add_record("families", family.name, family, module=module, replace=replace)


def _match_rank(plugin: Plugin[Any]) -> tuple[bool, bool, str]:
    """Families in match order: ``classic``'s first, then by module, ``unknown`` last."""
    return (plugin.name == UNKNOWN, plugin.module != f"{__name__}.classic", plugin.module)


#: Family name -> defaults (live: a family registered later is found too).
FAMILIES = PLUGINS.records("families", Family, key=_match_rank)

register_family(_UNKNOWN_FAMILY)


def _family_list() -> list[Family]:
    return [plugin.record for plugin in FAMILIES.plugins()]


def id_patterns() -> tuple[tuple[str, str], ...]:
    """Model-id patterns and their family, most specific first (see :data:`ID_PATTERNS`)."""
    return tuple(
        (pattern, family.name)
        for family in sorted(_family_list(), key=lambda f: f.match_order)
        for pattern in family.id_patterns
    )


def __getattr__(name: str) -> Any:
    """``ID_PATTERNS``, computed from the families registered now.

    Model-id patterns (case-insensitive regular expressions searched in the id or
    path), most specific first (by each family's ``match_order``). Used to pick among
    families that share a pipeline class, and alone to guess a hub model's family
    without downloading anything.
    """
    if name == "ID_PATTERNS":
        return id_patterns()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def guess_family_from_id(model_id: str) -> str:
    """The family whose id pattern first matches ``model_id``, else ``"unknown"``.

    >>> guess_family_from_id("DeepFloyd/IF-I-XL-v1.0")
    'deepfloyd-if'
    >>> guess_family_from_id("stabilityai/stable-diffusion-2-1-base")
    'sd2-base'
    >>> guess_family_from_id("black-forest-labs/FLUX.2-klein-4B")
    'flux2-klein'
    """
    for pattern, family in id_patterns():
        if re.search(pattern, model_id, flags=re.IGNORECASE):
            return family
    return UNKNOWN


def families_for_class(class_name: str) -> list[str]:
    """Families whose checkpoints use pipeline class ``class_name`` (first is the default)."""
    return [f.name for f in _family_list() if class_name in f.pipeline_classes]


def _index_fits(family: str, model_index: Mapping[str, Any]) -> bool:
    wanted = FAMILIES[family].index_match
    return all(model_index.get(key) == value for key, value in wanted.items())


def detect_family(model_index: Mapping[str, Any] | str | None, model_id: str = "") -> str:
    """The family of a checkpoint from its ``model_index.json`` (or class name) and id.

    ``model_index`` is the parsed ``model_index.json``, or just its ``_class_name``,
    or None when it is not available (then the id alone decides).

    >>> detect_family({"_class_name": "StableDiffusionPipeline"}, "stabilityai/stable-diffusion-2")
    'sd2'
    >>> detect_family({"_class_name": "StableDiffusionPipeline"}, "/tmp/tiny-sd")
    'sd1'
    >>> detect_family("SomeNewPipeline", "lab/sdxl-finetune")
    'sdxl'
    >>> detect_family("SomeNewPipeline", "lab/model")
    'unknown'
    >>> detect_family({"_class_name": "Flux2KleinPipeline", "is_distilled": False}, "/m/klein")
    'flux2-klein-base'
    """
    if isinstance(model_index, Mapping):
        class_name = str(model_index.get("_class_name") or "")
    else:
        class_name = model_index or ""
    candidates = families_for_class(class_name) if class_name else []
    if isinstance(model_index, Mapping):
        candidates = [name for name in candidates if _index_fits(name, model_index)]
    from_id = guess_family_from_id(model_id) if model_id else UNKNOWN
    if not candidates:
        return from_id
    if from_id in candidates:
        return from_id
    return candidates[0]


def family_defaults(name: str) -> Family:
    """The :class:`Family` called ``name``; unknown names get the ``unknown`` family."""
    return FAMILIES.get(name, FAMILIES[UNKNOWN])
