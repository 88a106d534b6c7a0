"""``glyphbench vae-eval --config VAES.yaml [--dry-run]``: a list of VAEs to evaluate, in a file.

A config names the codecs (``vaes``, each a spec string or a mapping with ``spec`` and
what it is) and, optionally, the image set, reader, limit and output folder; flags
given on the command line win over the file. Example (``configs/vaes-2026.yaml``
holds the field's VAEs)::

    images: default
    ocr: easyocr
    vaes:
      - identity
      - spec: diffusers:stabilityai/sd-vae-ft-mse
        label: SD 1.5 (ft-MSE)
        autoencoder: AutoencoderKL

``--dry-run`` resolves everything offline and writes nothing: every spec against its
plug-in (name, target, typed options), every declared ``autoencoder`` class against
the classes the ``diffusers:`` codec supports, the image-set spec, and the reader
spec; then it prints the plan (:func:`plan_lines`). Weights are not downloaded or
loaded, so a hub id that does not exist is only found by a real run.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from glyphbench.core.errors import InputError, validation_error
from glyphbench.core.io import MAX_CONFIG_BYTES, read_text
from glyphbench.core.registry import PLUGINS, Spec
from glyphbench.core.yaml_input import yaml_data
from glyphbench.engine import RunFolder
from glyphbench.readers import DEFAULT_READER
from glyphbench.vae_eval.codecs import check_codec_files
from glyphbench.vae_eval.codecs.diffusers_vae import SUPPORTED_CLASSES, split_target
from glyphbench.vae_eval.imageset import is_default_set, load_image_set


class VaeEntry(BaseModel):
    """One codec of a config: its spec and what it is (for people and the dry run)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    spec: str = Field(min_length=1, description="codec spec, e.g. diffusers:<hub id>:vae")
    label: str = Field(default="", description="what it is, e.g. 'SDXL'")
    autoencoder: str = Field(
        default="", description="expected diffusers class (checked by --dry-run)"
    )
    note: str = Field(default="", description="free text (licence, gating, source)")


class VaeConfig(BaseModel):
    """A ``vae-eval`` config file."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    vaes: list[VaeEntry | str] = Field(min_length=1)
    images: str = "default"
    ocr: str = DEFAULT_READER
    limit: int | None = Field(default=None, ge=1)
    batch_size: int = Field(default=4, ge=1)
    out: str | None = None

    def entries(self) -> list[VaeEntry]:
        """Every codec as a :class:`VaeEntry` (bare strings become entries without labels)."""
        return [VaeEntry(spec=v) if isinstance(v, str) else v for v in self.vaes]


def load_config(path: Path) -> VaeConfig:
    """Read and validate ``path``; any problem is a one-line :class:`InputError`."""
    if not path.is_file():
        raise InputError(path, "config file not found")
    data = yaml_data(read_text(path, limit=MAX_CONFIG_BYTES), path)
    if not isinstance(data, dict):
        raise InputError(path, "expected a mapping with a 'vaes' list")
    try:
        config = VaeConfig.model_validate(data)
    except ValidationError as exc:
        error = validation_error(exc, path)
        if error.key:  # "vaes.0.VaeEntry.lable": pydantic's name of the union member
            error = InputError(path, error.problem, key=error.key.replace(".VaeEntry", ""))
        raise error from None
    # named by the file and its key; a folder a codec needs is checked when the run starts
    # (a config may name one that is only on some machines: ../shared/taef2)
    check_entries(config.entries(), str(path), keyed=True, files=False)
    return config


def check_entries(
    entries: list[VaeEntry], where: str, *, keyed: bool = False, files: bool = True
) -> list[dict[str, Any]]:
    """Resolve every entry offline; one record per entry for :func:`plan_lines`.

    Raises :class:`InputError` (naming ``where`` and the spec; with ``keyed``, a config
    file's key ``vaes.N`` too) for an unknown codec, a bad option, a missing target, or
    an ``autoencoder`` class the diffusers codec does not support or that another codec
    would ignore; with ``files``, a codec's folder that is not there too.
    """
    records = []
    for number, entry in enumerate(entries):
        try:
            records.append(_entry_record(entry, where, files))
        except InputError as exc:
            if not keyed:
                raise
            raise InputError(where, exc.problem, key=f"vaes.{number}") from None
    return records


def _entry_record(entry: VaeEntry, where: str, files: bool = True) -> dict[str, Any]:
    """One entry resolved and checked (see :func:`check_entries`)."""
    resolved = PLUGINS.resolve("codecs", entry.spec, where=where)
    if files:
        check_codec_files(resolved.spec, read=False)  # a taesd: folder that is not there
    if entry.autoencoder and resolved.plugin.name != "diffusers":
        raise InputError(
            where, f"{entry.spec}: autoencoder applies to diffusers: codecs only; remove it"
        )
    if entry.autoencoder and entry.autoencoder not in SUPPORTED_CLASSES:
        raise InputError(
            where,
            f"{entry.spec}: autoencoder {entry.autoencoder!r} is not supported; "
            f"supported: {', '.join(SUPPORTED_CLASSES)}",
        )
    target = resolved.spec.target
    if resolved.plugin.name == "diffusers":
        source, subfolder = split_target(target)
        target = source + (f" [{subfolder}]" if subfolder else "")
    return {
        "label": entry.label or entry.spec,
        "spec": entry.spec,
        "plugin": resolved.plugin.name,
        "target": target,
        "options": resolved.options.model_dump(exclude_defaults=True),
        "autoencoder": entry.autoencoder,
    }


def plan_lines(records: list[dict[str, Any]], settings: dict[str, Any]) -> list[str]:
    """What a dry run prints: the settings, then one line per codec.

    >>> lines = plan_lines([{"label": "JPEG", "spec": "jpeg?quality=30", "plugin": "jpeg",
    ...     "target": "", "options": {"quality": 30}, "autoencoder": ""}], {"images": "default"})
    >>> for line in lines:
    ...     print(line)
    images: default
    1 codec(s), resolved offline:
      JPEG: jpeg?quality=30 -> jpeg (quality=30)
    """
    lines = [f"{key}: {value}" for key, value in settings.items()]
    lines.append(f"{len(records)} codec(s), resolved offline:")
    for record in records:
        details = [record["target"]] if record["target"] else []
        details += [f"{key}={value}" for key, value in record["options"].items()]
        if record["autoencoder"]:
            details.append(record["autoencoder"])
        shown = f" ({', '.join(details)})" if details else ""
        lines.append(f"  {record['label']}: {record['spec']} -> {record['plugin']}{shown}")
    return lines


#: Settings a config may give; a flag given on the command line wins.
SETTINGS = ("images", "ocr", "limit", "batch_size", "out")


def merge_settings(
    config: VaeConfig | None, flags: dict[str, Any], given: set[str]
) -> dict[str, Any]:
    """Settings for the run: each flag in ``given`` (typed on the command line), else the
    config's value, else the flag's default. ``vae`` is the config's codecs, then ``--vae``'s.

    >>> config = VaeConfig(vaes=["identity"], limit=20)
    >>> merged = merge_settings(config, {"vae": ["jpeg"], "limit": None, "ocr": "x"}, {"ocr"})
    >>> merged["vae"], merged["limit"], merged["ocr"]
    (['identity', 'jpeg'], 20, 'x')
    """
    merged = dict(flags)
    if config is None:
        return merged
    for key in SETTINGS:
        if key in flags and key not in given:
            merged[key] = getattr(config, key)
    merged["vae"] = [entry.spec for entry in config.entries()] + list(flags.get("vae") or [])
    return merged


def check_out(out: Path, images: str, codecs: list[str]) -> None:
    """Refuse an ``--out`` of other files (:meth:`RunFolder.refuse_foreign`); the image
    folder (a metadata file's folder, which holds the images it lists) and a codec's weights
    may be kept there. ``images`` is a path, or the built-in set (:func:`is_default_set`)."""
    inputs = [Path(Spec.parse(spec).path) for spec in codecs]
    if not is_default_set(images):
        source = Path(images)
        inputs.append(source.parent if source.is_file() else source)
    RunFolder(out).refuse_foreign("vae-eval", inputs)


def dry_run(config: VaeConfig | None, settings: dict[str, Any]) -> list[str]:
    """Resolve a run's codecs, image set and reader offline; the lines to print."""

    entries = config.entries() if config is not None else []
    named = {entry.spec for entry in entries}
    entries += [VaeEntry(spec=spec) for spec in settings.get("vae") or [] if spec not in named]
    if not entries:
        raise InputError("--vae", "no codecs: give --vae or a config with a 'vaes' list")
    records = check_entries(entries, "--vae")
    PLUGINS.resolve("readers", settings["ocr"], where="--ocr")
    if settings.get("out") is not None:  # the run would refuse it: so does its plan
        check_out(Path(settings["out"]), settings["images"], [e.spec for e in entries])
    if not is_default_set(settings["images"]) or "size=native" not in settings["images"]:
        image_set = load_image_set(settings["images"], limit=settings.get("limit"))
        images = f"{image_set.name} ({len(image_set.items)} images)"
    else:  # the size comes from the codecs' weights, which a dry run does not load
        images = f"{settings['images']} (size from the codecs' weights at run time)"
    shown = {
        "images": images,
        "reader": settings["ocr"],
        "limit": settings.get("limit"),
        "out": settings.get("out") or "(give --out to run)",
    }
    return [*plan_lines(records, shown), "dry run: nothing loaded or written"]


def apply_config(
    ctx: Any, config_path: Path | None, dry: bool, flags: dict[str, Any]
) -> dict[str, Any] | None:
    """The CLI's settings after ``--config`` (flags typed on the command line win).

    With ``dry`` it prints the offline plan and returns None (the command then stops).
    """
    import typer
    from click.core import ParameterSource

    config = load_config(config_path) if config_path is not None else None
    given = {
        name
        for name in SETTINGS
        if ctx.get_parameter_source(name) not in (None, ParameterSource.DEFAULT)
    }
    settings = merge_settings(config, flags, given)
    if settings.get("out") is not None:
        settings["out"] = Path(settings["out"])
    if not dry:
        return settings
    for line in dry_run(config, settings):
        typer.echo(line)
    return None
