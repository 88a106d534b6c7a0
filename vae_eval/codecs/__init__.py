"""Codecs under test: anything that encodes an image and decodes it back.

``codecs`` plug-ins of :data:`glyphbench.core.registry.PLUGINS`, one module per family (every
module of this package is imported when codecs are first looked up, so adding a
codec is one file):

=====================  ==========================================================
module                 specs
=====================  ==========================================================
``protocol``           the codec protocol (:class:`Codec`, :class:`TensorCodec`),
                       :func:`register_codec` for objects made in Python
``reference``          ``identity``, ``jpeg?quality=Q``, ``resize?factor=F``
``diffusers_vae``      ``diffusers:<hub id or path>[:subfolder]``: every diffusers
                       autoencoder class an image pipeline uses
``taesd``              ``taesd:<folder>``: TAESD-family ``.pth`` pairs (taesd ... taef2)
``python_entry``       ``python:module:Object``: anything following the protocol
=====================  ==========================================================

Every codec has ``name`` (the spec text, used as the ``vae`` column), ``describe()``
(what exactly ran, recorded per row), ``native_resolution`` (a size hint or None) and
``roundtrip(images) -> list[Image | CodecFailure]``, one entry per input, in order.
See ``docs/vae_eval.md`` for the protocol and a ten-line example codec.
"""

from __future__ import annotations

from pathlib import Path

from glyphbench.core.errors import InputError
from glyphbench.core.fingerprint import files_fingerprint
from glyphbench.core.registry import PLUGINS, Spec
from glyphbench.models.diffusers_options import looks_local
from glyphbench.vae_eval.codecs.diffusers_vae import (
    SUPPORTED_CLASSES,
    DiffusersCodec,
    DiffusersCodecOptions,
    split_target,
)
from glyphbench.vae_eval.codecs.protocol import (
    Codec,
    CodecFailure,
    TensorCodec,
    TensorOptions,
    adapt,
    register_codec,
)
from glyphbench.vae_eval.codecs.reference import (
    IdentityCodec,
    JpegCodec,
    JpegOptions,
    ResizeCodec,
    ResizeOptions,
)
from glyphbench.vae_eval.codecs.taesd import TaesdCodec, TaesdOptions, find_pair, load_pair

__all__ = [
    "SUPPORTED_CLASSES",
    "Codec",
    "CodecFailure",
    "DiffusersCodec",
    "DiffusersCodecOptions",
    "IdentityCodec",
    "JpegCodec",
    "JpegOptions",
    "ResizeCodec",
    "ResizeOptions",
    "TaesdCodec",
    "TaesdOptions",
    "TensorCodec",
    "TensorOptions",
    "adapt",
    "check_codec_files",
    "codec_fingerprint",
    "get_codec",
    "register_codec",
    "split_target",
]


def check_codec_files(spec: str | Spec, *, read: bool = True) -> None:
    """Check the files a codec spec names, before anything is written (no model is built).

    ``taesd:<folder>``: the folder and its encoder/decoder pair must be there, readable
    and one model (:func:`glyphbench.vae_eval.codecs.taesd.load_pair`); a missing or
    misspelt folder, an unreadable file or two halves of different families is an
    :class:`~glyphbench.core.errors.InputError` naming it, not failure rows after the run
    has started (``read=False``: the files must be there, and are not read, so that
    ``--dry-run`` imports no torch). ``diffusers:<path>``: a path (not a hub id) must be
    there. Other codecs name no local files (a diffusers hub id is checked when it loads).

    >>> from glyphbench.core.errors import InputError
    >>> check_codec_files("identity")
    >>> try:
    ...     check_codec_files("taesd:no/such/folder")
    ... except InputError as exc:
    ...     print(str(exc)[:30])
    no/such/folder: no such folder
    """
    parsed = PLUGINS.resolve("codecs", spec).spec
    variant = parsed.options.get("variant") or None
    if parsed.kind == "taesd" and not read:
        find_pair(parsed.target, variant)
    elif parsed.kind == "taesd":  # a pair of a few MB, read whole: cheap, and a swapped half
        # or an unreadable file is one line now, not every row failed once the run started
        load_pair(parsed.target, variant)
    if parsed.kind == "diffusers":
        location, _ = split_target(parsed.target)
        if looks_local(location) and not Path(location).expanduser().exists():
            raise InputError(
                location, "no such folder (diffusers:<hub id or local folder>[:subfolder])"
            )


def codec_fingerprint(spec: str | Spec) -> str | None:
    """Fingerprint of the local weight files a codec spec names, or None (no local files).

    ``taesd:<folder>``: its encoder/decoder pair; ``diffusers:<path>[:subfolder]``: the
    folder (:func:`glyphbench.core.fingerprint.files_fingerprint`). A resumed evaluation
    whose codec files changed is refused: its rows would mix two autoencoders.

    >>> codec_fingerprint("jpeg?quality=30") is None
    True
    """
    parsed = PLUGINS.resolve("codecs", spec).spec
    if parsed.kind == "taesd":
        _, encoder, decoder = find_pair(parsed.target, parsed.options.get("variant") or None)
        return files_fingerprint(encoder.parent, [encoder.name, decoder.name])
    if parsed.kind == "diffusers":
        location, subfolder = split_target(parsed.target)
        path = Path(location).expanduser() / (subfolder or "")
        return files_fingerprint(path) if path.exists() else None
    return None


def get_codec(spec: str | Spec) -> Codec:
    """Create the codec named by ``spec``; unknown names and bad options raise InputError.

    >>> get_codec("jpeg?quality=30").name
    'jpeg?quality=30'
    """
    codec: Codec = PLUGINS.create("codecs", spec)
    return codec
