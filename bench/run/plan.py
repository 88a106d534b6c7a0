"""``glyphbench run --dry-run``: a short plan of a run, with an estimate of its time.

:func:`glyphbench.run.operations.plan_run` resolves everything (``--dry-run --json`` prints it
whole); :func:`plan_lines` says what matters in a few lines: the models, the
prompts, how many images are to be made and read, and an *estimate* of the time.

The estimate multiplies the images still to make and read by documented
per-image figures (docs/running.md, "The dry-run plan"), measured on the 2-core
CPU machine this project is developed on. Only the parts with a figure are
counted; the plan names every part without one on a line of its own (a diffusers
family, a hosted API, a reader on a GPU), with the command that measures it,
rather than guessing. It warns when ``device auto`` would put a diffusers model
on the CPU (:func:`auto_device`, decided without importing torch).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from glyphbench.core.registry import Spec
from glyphbench.core.words import plural

#: Seconds per image to make one, on CPU, by model kind (drawing/reading + PNG + SHA-256).
#: control: 5 ms drawing a 512-px image + 11 ms PNG and hash, measured 2026-11-23;
#: images: 10 ms decoding at the start check + 10 ms decoding + 11 ms PNG and hash.
MAKE_SECONDS_CPU: dict[str, float] = {"control": 0.02, "images": 0.03}

#: Seconds per image to make one, by diffusers family (``describe()["family"]``) and
#: device. None measured yet: no GPU and no hub were available where the figures above
#: were measured, so every family is "unknown" with the command that measures it.
MAKE_SECONDS_FAMILY: dict[tuple[str, str], float] = {}

#: Model kinds that run on a GPU when there is one (``device auto``).
GPU_KINDS = frozenset({"diffusers"})

#: The command that measures what has no figure (``SPEC``: the model's spec).
MEASURE = "glyphbench run --models SPEC --limit 8 --read-later --out runs/timing"

#: Seconds per image to read one, on CPU, by reader name (docs/performance.md and
#: docs/readers.md: easyocr 0.48 images/s, rapidocr 4.1 images/s (medians of three runs),
#: tesseract 1.77 images/s).
READ_SECONDS_CPU: dict[str, float] = {"easyocr": 2.1, "rapidocr": 0.24, "tesseract": 0.56}


@dataclass
class Estimate:
    """Seconds estimated for the parts with a figure, and the parts without one."""

    make_s: float = 0.0
    read_s: float = 0.0
    not_counted: list[str] = field(default_factory=list)
    #: Models that would generate on the CPU because ``device auto`` finds no GPU.
    on_cpu: list[str] = field(default_factory=list)

    @property
    def total_s(self) -> float:
        return self.make_s + self.read_s


def estimate(plan: Mapping[str, Any]) -> Estimate:
    """The estimate of a :func:`glyphbench.run.operations.plan_run` plan (CPU figures; see above).

    >>> plan = {"device": "cpu", "ocr": "tesseract", "models": [
    ...     {"label": "control:render", "spec": "control:render", "remaining": 100},
    ...     {"label": "sdxl", "spec": "diffusers:stabilityai/sdxl", "remaining": 100,
    ...      "describe": {"family": "sdxl"}}]}
    >>> result = estimate(plan)
    >>> round(result.make_s, 2), round(result.read_s, 2), result.on_cpu
    (2.0, 112.0, [])
    >>> print(result.not_counted[0].replace(": measure", ":" + chr(10) + " measure"))
    making the images of sdxl (family sdxl: no per-image figure on cpu):
     measure with `glyphbench run --models diffusers:stabilityai/sdxl --limit 8 ...
    >>> estimate({**plan, "device": "cuda"}).not_counted[1]
    'reading with tesseract (no per-image figure on cuda)'
    >>> estimate({**plan, "ocr": "pixelocr"}).not_counted[1]
    'reading with pixelocr (no per-image figure for pixelocr)'
    >>> estimate({**plan, "device": "auto", "auto_device": "cpu"}).on_cpu
    ['sdxl']
    """
    result = Estimate()
    device = str(plan.get("device", "auto"))
    resolved = str(plan.get("auto_device") or "cpu") if device == "auto" else device
    on_cpu = device in ("cpu", "auto")  # readers choose their own device: CPU figures
    reader = Spec.parse(str(plan.get("ocr", ""))).kind
    to_read = 0
    uncounted: dict[str, list[Mapping[str, Any]]] = {}  # kind -> its models without a figure
    for model in plan.get("models", []):
        remaining = int(model.get("remaining", 0))
        to_read += remaining
        kind = Spec.parse(str(model.get("spec", ""))).kind
        family = str((model.get("describe") or {}).get("family") or "")
        seconds = MAKE_SECONDS_CPU.get(kind)  # controls and files: the same on any device
        if seconds is None and family:
            seconds = MAKE_SECONDS_FAMILY.get((family, resolved))
        if kind in GPU_KINDS and device == "auto" and resolved == "cpu":
            result.on_cpu.append(str(model.get("label")))
        if seconds is None:
            uncounted.setdefault(kind, []).append(model)
            continue
        result.make_s += remaining * seconds
    for kind, models in uncounted.items():
        result.not_counted.append(_unknown_making(kind, models, resolved))
    seconds = READ_SECONDS_CPU.get(reader)
    if seconds is not None and on_cpu:
        result.read_s = to_read * seconds
    elif to_read:
        why = f"for {reader}" if seconds is None else f"on {resolved}"
        result.not_counted.append(f"reading with {reader} (no per-image figure {why})")
    return result


def _unknown_making(kind: str, models: Sequence[Mapping[str, Any]], device: str) -> str:
    """One plan line for the models of ``kind`` without a figure, with the measuring command.

    >>> line = _unknown_making("api", [{"label": "a", "spec": "api:x/a?size=1"}], "cpu")
    >>> print(line[:63])
    making the images of a (api: no per-image figure): measure with
    >>> print(line[64:])
    `glyphbench run --models 'api:x/a?size=1' --limit 8 --read-later --out runs/timing`
    """
    import shlex

    labels = [str(m.get("label")) for m in models]
    named = labels[0] if len(labels) == 1 else f"{len(labels)} {kind} models"
    families = sorted({str((m.get("describe") or {}).get("family") or "") for m in models} - {""})
    what = f"families {', '.join(families)}" if len(families) > 1 else kind
    what = f"family {families[0]}" if len(families) == 1 else what
    where = f" on {device}" if families else ""
    spec = shlex.quote(str(models[0].get("spec"))) if len(models) == 1 else "SPEC"
    how = MEASURE.replace("SPEC", spec)
    return (
        f"making the images of {named} ({what}: no per-image figure{where}): measure with `{how}`"
    )


def auto_device() -> str:
    """What ``device auto`` resolves to here, ``"cuda"`` or ``"cpu"``, without importing torch.

    The diffusers adapter picks CUDA when ``torch.cuda.is_available()``: torch built with
    CUDA (its ``torch/version.py`` has a ``cuda`` version, not None) and an NVIDIA GPU
    visible (a ``/dev/nvidia<N>`` device, ``CUDA_VISIBLE_DEVICES`` not empty or -1). The
    dry-run must not import torch (seconds, and its test forbids it), so it reads those
    facts instead; the run itself asks torch.
    """
    import importlib.util
    import os
    import re
    from pathlib import Path

    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        return "cpu"
    version = Path(next(iter(spec.submodule_search_locations))) / "version.py"
    text = version.read_text(encoding="utf-8") if version.is_file() else ""
    if not re.search(r"^cuda\b[^=\n]*=\s*['\"]", text, re.MULTILINE):
        return "cpu"  # a CPU (or ROCm) build
    if os.environ.get("CUDA_VISIBLE_DEVICES", "0").strip() in ("", "-1"):
        return "cpu"
    return "cuda" if any(Path("/dev").glob("nvidia[0-9]*")) else "cpu"


def api_cost(models: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """USD the planned images of hosted models cost, from ``api.prices``.

    ``total_usd`` sums the priced models; ``unpriced`` names hosted models without a
    price (their cost is unknown, never taken as zero).

    >>> api_cost([{"label": "a", "price_usd": 0.04, "cost_usd": 4.0},
    ...           {"label": "b", "price_usd": None, "cost_usd": None}, {"label": "c"}])
    {'total_usd': 4.0, 'unpriced': ['b']}
    """
    priced = [m for m in models if m.get("cost_usd") is not None]
    return {
        "total_usd": round(sum(float(m["cost_usd"]) for m in priced), 2) if priced else None,
        "unpriced": [str(m["label"]) for m in models if "price_usd" in m and m["cost_usd"] is None],
    }


def api_caveats(describe: Mapping[str, Any]) -> list[str]:
    """What a hosted model's plan should warn about: seeds it ignores, its key unset."""
    import os

    caveats = []
    if describe.get("seed_honoured") is False:
        caveats.append(f"seeds ignored ({describe.get('seed_note') or 'the provider takes none'})")
    keys = list(describe.get("key_env") or [])
    if keys and not any(os.environ.get(name) for name in keys):
        caveats.append(f"key unset: set {' or '.join(keys)}")
    return caveats


def cost_lines(plan: Mapping[str, Any]) -> list[str]:
    """The plan's cost line and the cap's verdict (no line when no model is hosted).

    >>> plan = {"api": {"max_usd": 200, "total_usd": 506.4, "unpriced": []}, "models": []}
    >>> print("\\n".join(cost_lines(plan)))
    cost:     about $506.40 for the images still to make (api.prices)
    cap:      api.max_usd $200.00 is not enough: the run would stop after about 39% of that cost
    """
    api = plan.get("api") or {}
    total, cap, unpriced = api.get("total_usd"), api.get("max_usd"), api.get("unpriced") or []
    if total is None and not unpriced:
        return []
    lines = []
    known = "" if total is None else f"about ${total:,.2f} for the images still to make"
    if unpriced:
        known += ("; " if known else "") + f"unknown for {', '.join(unpriced)} (no price)"
    lines.append(f"cost:     {known} (api.prices)")
    if cap is None:
        lines.append("cap:      none (api.max_usd not set): nothing stops the spending")
    elif total is not None and total > cap:
        share = 100 * cap / total
        lines.append(
            f"cap:      api.max_usd ${cap:,.2f} is not enough: the run would stop after"
            f" about {share:.0f}% of that cost"
        )
    elif total is not None:
        lines.append(f"cap:      api.max_usd ${cap:,.2f} covers it")
    return lines


def duration(seconds: float) -> str:
    """A rounded, readable duration.

    >>> duration(0.2), duration(42), duration(150), duration(7300)
    ('under 1 s', '42 s', '2.5 min', '2.0 h')
    """
    if seconds < 0.5:
        return "under 1 s"
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:.1f} h"


def plan_lines(plan: Mapping[str, Any]) -> list[str]:
    """The short plan ``--dry-run`` prints (``--dry-run --json``: the whole plan).

    >>> plan = {"run_id": "r1", "out": "runs/r1", "device": "cpu", "ocr": "tesseract",
    ...     "prompts": {"source": "default", "count": 40}, "seeds": [0],
    ...     "images_per_prompt": 1, "shard": "shard-0-of-1",
    ...     "models": [{"label": "control:render", "spec": "control:render", "jobs": 40,
    ...                 "remaining": 40, "is_control": True}]}
    >>> print("\\n".join(plan_lines(plan)))
    dry run: nothing loaded or written (the full plan: --dry-run --json)
    run:      r1 -> runs/r1
    prompts:  40 from default
    images:   40 = 40 prompts x 1 seed x 1 per prompt x 1 model; 40 to make, 0 already done
      control:render  40 to make (control)
    reader:   tesseract
    estimate: about 23 s on cpu: making 1 s + reading 22 s (per-image CPU figures: docs/running.md)
    """
    models = list(plan.get("models", []))
    prompts = plan.get("prompts", {})
    seeds = list(plan.get("seeds", []))
    jobs = sum(int(m.get("jobs", 0)) for m in models)
    remaining = sum(int(m.get("remaining", 0)) for m in models)
    no_file = sum(int(m.get("no_file", 0)) for m in models)
    sharded = not str(plan.get("shard", "shard-0-of-1")).endswith("-of-1")
    shard = f" ({plan['shard']}: this process's share)" if sharded else ""
    lines = [
        "dry run: nothing loaded or written (the full plan: --dry-run --json)",
        f"run:      {plan.get('run_id')} -> {plan.get('out')}",
        f"prompts:  {prompts.get('count')} from {prompts.get('source')}{_named(prompts)}",
        f"images:   {jobs} = {prompts.get('count')} prompts x {plural(len(seeds), 'seed')} x "
        f"{plan.get('images_per_prompt')} per prompt x {plural(len(models), 'model')}{shard}; "
        f"{remaining} to make, {jobs - remaining - no_file} already done"
        + (f", {no_file} without an image file" if no_file else ""),
    ]
    width = max((len(str(m.get("label"))) for m in models), default=0)
    for model in models:
        note = " (control)" if model.get("is_control") else ""
        if model.get("no_file"):
            note += (
                f"; {model['no_file']} expected images have no file and would be rows marked"
                " Missing (narrow the prompts with --where, --limit or a manifest)"
            )
        if model.get("cost_usd") is not None:
            note += f", ${float(model['cost_usd']):,.2f}"
        if model.get("caveats"):
            note += "; " + "; ".join(model["caveats"])
        weights = model.get("weights") or {}
        if weights.get("problem"):
            note += f"; CANNOT RUN: {weights['problem']}"
        elif weights.get("source"):
            note += f"; weights: {weights['source']}"
        lines.append(f"  {model.get('label')!s:<{width}}  {model.get('remaining')} to make{note}")
    lines.extend(cost_lines(plan))
    readers = ""
    if plan.get("read_workers"):
        n = int(plan["read_workers"])
        readers = (
            f", in {n} reader process{'' if n == 1 else 'es'} the run starts "
            f"(generation waits past {plan.get('read_backlog')} images not yet read)"
        )
    lines.append(f"reader:   {plan.get('ocr')}{readers}")
    lines.extend(_estimate_lines(estimate(plan), str(plan.get("device", "auto"))))
    return lines


def unrunnable(plan: Mapping[str, Any]) -> dict[str, str]:
    """The plan's models that cannot run here, each with the reason (their weights
    are in no local folder or cache and the hub does not answer, a package is missing).

    >>> unrunnable({"models": [{"label": "a", "weights": {"problem": "not cached"}},
    ...                        {"label": "b", "weights": {"source": "hub cache"}}, {"label": "c"}]})
    {'a': 'not cached'}
    """
    return {
        str(model.get("label")): str(model["weights"]["problem"])
        for model in plan.get("models", [])
        if (model.get("weights") or {}).get("problem")
    }


def _named(prompts: Mapping[str, Any]) -> str:
    """What chose the prompts, when the files of ``images:`` models did.

    >>> _named({"named_by": ["images:mine"]})
    ': those the files of images:mine name (no --prompts, --where, --sample or --limit given)'
    """
    if not prompts.get("named_by"):
        return ""
    return (
        f": those the files of {', '.join(prompts['named_by'])} name "
        "(no --prompts, --where, --sample or --limit given)"
    )


def _about(seconds: float) -> str:
    text = duration(seconds)
    return text if text.startswith("under") else f"about {text}"


def _estimate_lines(result: Estimate, device: str) -> list[str]:
    where = "cpu (device auto)" if device == "auto" else device
    counted = (
        f"making {duration(result.make_s)} + reading {duration(result.read_s)} "
        "(per-image CPU figures: docs/running.md)"
    )
    if not result.not_counted:
        lines = [f"estimate: {_about(result.total_s)} on {where}: {counted}"]
    else:
        lines = [
            f"estimate: more than {duration(result.total_s)} on {where}: {counted}, "
            f"and {len(result.not_counted)} part{'s' if len(result.not_counted) > 1 else ''}"
            " without a figure:"
        ]
        lines += [f"  unknown: {part}" for part in result.not_counted]
    if result.on_cpu:
        named = ", ".join(result.on_cpu[:3]) + (
            f" and {len(result.on_cpu) - 3} more" if len(result.on_cpu) > 3 else ""
        )
        lines.append(
            f"warning:  device auto is cpu here (no CUDA GPU visible): {named} would "
            "generate on the CPU (full-size SDXL took 31-88 s for one 1-step 128 px image on "
            "a 2-core CPU, docs/performance.md); run on a GPU machine, or give --device cpu "
            "to mean it"
        )
    return lines
