"""Tesseract, run as the ``tesseract`` command-line binary with TSV output.

Needs the binary (Debian: ``apt-get install tesseract-ocr``); the engine is always
registered, and creating it without the binary raises a one-line
:class:`~glyphbench.core.errors.InputError`. Spec options (:class:`TesseractOptions`):

``psm``      page segmentation mode (default 11, "sparse text": find as much text
             as possible in no particular order, which suits generated images
             better than the page-layout default 3)
``lang``     traineddata language(s), e.g. ``eng`` (default) or ``eng+deu``
``workers``  images OCR'd in parallel, one process each (default 1)
``timeout``  seconds allowed per image (default 120)

Each image is sent to ``tesseract stdin stdout --psm N -l LANG tsv`` as PNG; the
word rows (level 5) become the pieces, their rectangles the boxes and their
confidences (0..100) divided by 100 the confidences. Tesseract's own block/line
order is discarded for :func:`~glyphbench.readers.order.reading_order`.
"""

from __future__ import annotations

import functools
import io
import os
import shutil
import subprocess
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

from pydantic import Field

from glyphbench.core.errors import InputError
from glyphbench.core.images import to_rgb_image
from glyphbench.core.registry import Options, Spec, register
from glyphbench.readers.base import Point, Reader, Reading
from glyphbench.readers.common import ReadError, assemble, rect_points
from glyphbench.readers.scripts import LATIN

if TYPE_CHECKING:
    from PIL import Image

MISSING_BINARY = "tesseract binary not found; apt-get install tesseract-ocr"
WORD_LEVEL = "5"


@functools.cache
def _binary_version(binary: str) -> str:
    """First line of ``tesseract --version``, e.g. ``tesseract 5.3.0``."""
    done = subprocess.run([binary, "--version"], capture_output=True, text=True, check=True)
    lines = (done.stdout or done.stderr).strip().splitlines()
    return lines[0].strip() if lines else "tesseract (unknown version)"


def parse_tsv(tsv: str) -> list[tuple[list[Point], str, float]]:
    """Word detections ``(box, text, confidence 0..1)`` from Tesseract's TSV output.

    >>> header = "level\\tpage_num\\tblock_num\\tpar_num\\tline_num\\tword_num\\t"
    >>> header += "left\\ttop\\twidth\\theight\\tconf\\ttext"
    >>> rows = ["4\\t1\\t1\\t1\\t1\\t0\\t10\\t5\\t90\\t20\\t-1\\t",
    ...         "5\\t1\\t1\\t1\\t1\\t1\\t10\\t5\\t40\\t20\\t91.5\\tHELLO"]
    >>> parse_tsv("\\n".join([header, *rows]))
    [([(10.0, 5.0), (50.0, 5.0), (50.0, 25.0), (10.0, 25.0)], 'HELLO', 0.915)]
    """
    words: list[tuple[list[Point], str, float]] = []
    for line in tsv.splitlines()[1:]:
        fields = line.split("\t", 11)
        if len(fields) < 12 or fields[0] != WORD_LEVEL or not fields[11].strip():
            continue
        left, top, width, height = (float(v) for v in fields[6:10])
        confidence = min(max(float(fields[10]) / 100.0, 0.0), 1.0)
        words.append((rect_points(left, top, width, height), fields[11].strip(), confidence))
    return words


class TesseractOptions(Options):
    """Options of the ``tesseract`` reader."""

    psm: int = Field(default=11, ge=0, description="page segmentation mode (11: sparse text)")
    lang: str = Field(default="eng", description="traineddata language(s), e.g. eng+deu")
    workers: int = Field(default=1, ge=1, description="images read in parallel, one process each")
    timeout: float = Field(default=120.0, description="seconds allowed per image")

    def scripts(self) -> frozenset[str]:
        """The scripts of the ``lang`` traineddata files (see :data:`TESSDATA_SCRIPTS`)."""
        return tessdata_scripts(self.lang)

    @classmethod
    def script_variants(cls) -> list[str]:
        """Specs reading other scripts: each installed traineddata language, then all of them."""
        langs = [lang for lang in installed_langs() if lang not in ("eng", "osd")]
        variants = [f"tesseract?lang={lang}" for lang in langs]
        if len(langs) > 1:
            variants.append(f"tesseract?lang={'+'.join(langs)}")
        return variants


#: Traineddata language -> scripts it reads; a language not listed reads Latin (most do).
#: The CJK models also hold the Latin alphabet, digits and ASCII punctuation.
TESSDATA_SCRIPTS: dict[str, frozenset[str]] = {
    "chi_sim": frozenset({"han", "latin"}),
    "chi_tra": frozenset({"han", "latin"}),
    "chi_sim_vert": frozenset({"han", "latin"}),
    "chi_tra_vert": frozenset({"han", "latin"}),
    "jpn": frozenset({"han", "kana", "latin"}),
    "jpn_vert": frozenset({"han", "kana", "latin"}),
    "kor": frozenset({"hangul", "latin"}),
    "rus": frozenset({"cyrillic"}),
    "ukr": frozenset({"cyrillic"}),
    "bul": frozenset({"cyrillic"}),
    "srp": frozenset({"cyrillic"}),
    "ell": frozenset({"greek"}),
    "ara": frozenset({"arabic"}),
    "heb": frozenset({"hebrew"}),
    "hin": frozenset({"devanagari"}),
    "tha": frozenset({"thai"}),
}


def tessdata_scripts(lang: str) -> frozenset[str]:
    """Scripts read by a ``+``-joined list of traineddata languages (``osd`` reads none).

    >>> sorted(tessdata_scripts("eng+chi_sim"))
    ['han', 'latin']
    """
    scripts: set[str] = set()
    for code in lang.split("+"):
        if code and code != "osd":
            scripts |= TESSDATA_SCRIPTS.get(code, LATIN)
    return frozenset(scripts)


@functools.cache
def installed_langs() -> tuple[str, ...]:
    """The traineddata languages installed here (``tesseract --list-langs``); none without
    the binary."""
    binary = shutil.which("tesseract")
    if binary is None:
        return ()
    try:
        done = subprocess.run(
            [binary, "--list-langs"], capture_output=True, text=True, timeout=30, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return ()
    lines = (done.stdout or done.stderr).splitlines()
    return tuple(line.strip() for line in lines[1:] if line.strip())


def missing_binary() -> str | None:
    """Why the engine cannot run here (no binary), or None."""
    return None if shutil.which("tesseract") else MISSING_BINARY


def _check_langs(lang: str) -> None:
    """Refuse a ``lang`` whose traineddata is not installed (checked at creation,
    not on every image). Nothing is checked when ``--list-langs`` answers nothing."""
    installed = installed_langs()
    missing = [code for code in lang.split("+") if code and code not in installed]
    if installed and missing:
        raise InputError(
            None,
            f"tesseract has no language data for {'+'.join(missing)!r} (installed: "
            f"{', '.join(installed)}); apt-get install tesseract-ocr-LANG",
        )


class TesseractReader(Reader):
    """OCR with the Tesseract binary; see the module docstring for options."""

    name = "tesseract"

    def __init__(self, options: TesseractOptions | None = None) -> None:
        options = options or TesseractOptions()
        binary = shutil.which("tesseract")
        if binary is None:
            raise InputError(None, MISSING_BINARY)
        self.binary = binary
        _check_langs(options.lang)
        self.psm = options.psm
        self.lang = options.lang
        self.workers = options.workers
        self.timeout = options.timeout
        # Parallel processes each using OpenMP threads would oversubscribe the CPU.
        self._env = {**os.environ, "OMP_THREAD_LIMIT": "1"} if self.workers > 1 else None

    @property
    def version(self) -> str:
        return f"{_binary_version(self.binary)}; lang {self.lang}; psm {self.psm}"

    def _read_one(self, index: int, image: Image.Image) -> Reading:
        try:
            buffer = io.BytesIO()
            to_rgb_image(image).save(buffer, format="PNG")
            command = [
                self.binary,
                "stdin",
                "stdout",
                "--psm",
                str(self.psm),
                "-l",
                self.lang,
                "tsv",
            ]
            done = subprocess.run(
                command,
                input=buffer.getvalue(),
                capture_output=True,
                timeout=self.timeout,
                env=self._env,
            )
            if done.returncode != 0:
                message = done.stderr.decode(errors="replace").strip().splitlines()
                raise RuntimeError(
                    f"exit code {done.returncode}: {message[-1] if message else 'no message'}"
                )
            words = parse_tsv(done.stdout.decode("utf-8", errors="replace"))
        except Exception as error:
            raise ReadError(self.name, index, error) from error
        return assemble(words)

    def read(self, images: Sequence[Image.Image]) -> list[Reading]:
        if self.workers == 1 or len(images) < 2:
            return [self._read_one(i, image) for i, image in enumerate(images)]
        with ThreadPoolExecutor(max_workers=self.workers) as pool:
            # map keeps input order and re-raises the first failure in that order.
            return list(pool.map(self._read_one, range(len(images)), images))


@register(
    "readers",
    "tesseract",
    options=TesseractOptions,
    summary="Tesseract, run as the command-line binary with TSV output.",
    missing=missing_binary,
)
def create_tesseract(spec: Spec, options: TesseractOptions) -> TesseractReader:
    return TesseractReader(options)
