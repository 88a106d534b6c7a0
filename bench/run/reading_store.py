"""Readings kept in the run folder: every reader reads each image once, across commands.

:class:`ReadingStore` is a :class:`~glyphbench.engine.reading.ReadingCache` persisted
under ``<run>/readings/``. A reading is keyed by (image SHA-256, reader identity),
the identity being the reader's name, version and options
(:func:`~glyphbench.engine.reading.reader_identity`); in a benchmark run the image key is
the SHA-256 of the PNG file recorded in ``results.image_sha256``. Each batch of new
readings is one Parquet part file, ``readings/<shard>-<counter>-<pid>-<ns>-<sha>.parquet``
(``<sha>``: 16 hex digits of the file's SHA-256; written with page checksums),
written atomically, so shards and rescores never write the same file and a crash
loses at most the batch in flight. A file whose bytes do not match its name, or that
is damaged in any other way, is set aside (``*.unreadable``) and never used.
Columns: ``image_sha256``, ``reader`` (identity), ``reader_name``, ``reader_version``,
``ocr_text``, ``ocr_pieces``, ``ocr_boxes``, ``ocr_confidences``, ``ocr_raw`` (the JSON
encodings of ``results``), ``read_at``.
``ocr_raw`` holds each detection's text as the engine returned it, in its
own order (:attr:`~glyphbench.readers.base.Reading.raw`); part files written before it
existed lack the column and are read as they are, their readings without raw text.

So ``glyphbench rescore RUN --ocr OTHER`` reads only the images OTHER has not read,
a repeated rescore reads nothing, and the readings of every reader of a run sit
side by side in one table (:func:`readings_table`); :func:`results_with_reader`
joins one reader's readings into the results (re-scored), which is what
``glyphbench report RUN --reader NAME`` shows. ``results.parquet`` itself holds the
*primary* reader: the run's ``ocr`` or the last ``rescore --ocr``.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import time
from itertools import count
from pathlib import Path
from typing import TYPE_CHECKING, Any

from glyphbench.core.errors import InputError
from glyphbench.core.io import (
    READ_CHECKED,
    WRITE_CHECKED,
    read_table,
    slug,
    write_bytes_atomic,
)
from glyphbench.core.paths import inside
from glyphbench.core.schema import failed_mask, generated_mask
from glyphbench.engine.reading import ReadingCache
from glyphbench.readers.base import Reading

if TYPE_CHECKING:
    import pandas as pd

    from glyphbench.readers.base import Reader

READINGS_DIR = "readings"

COLUMNS = (
    "image_sha256",
    "reader",
    "reader_name",
    "reader_version",
    "ocr_text",
    "ocr_pieces",
    "ocr_boxes",
    "ocr_confidences",
    "ocr_raw",
    "read_at",
)
#: Columns a part file may lack (written before the column existed); read as empty.
OPTIONAL_COLUMNS = ("ocr_raw",)

_COUNTER = count(1)
#: Hex digits of a readings file's SHA-256 at the end of its name (as a part file's).
SHA_DIGITS = 16
_NAMED_SHA = re.compile(rf"-([0-9a-f]{{{SHA_DIGITS}}})\.parquet$")


class ReadingStore(ReadingCache):
    """A reading cache backed by ``<root>/readings/``; see the module docstring."""

    def __init__(
        self, root: str | Path, shard: str = "main", table: pd.DataFrame | None = None
    ) -> None:
        super().__init__()
        self.folder = Path(root) / READINGS_DIR
        self.shard = shard
        self._pending: list[dict[str, Any]] = []
        self._names: dict[str, tuple[str, str]] = {}
        table = readings_table(root) if table is None else table  # the stored readings
        for record in table.to_dict("records"):
            self._readings[(str(record["image_sha256"]), str(record["reader"]))] = _reading(record)

    def identity(self, reader: Reader) -> str:
        who = super().identity(reader)
        self._names.setdefault(who, (reader.name, reader.version))
        return who

    def remember(self, identity: str, name: str, version: str) -> None:
        """The name and version of a reader known here by its identity alone (a worker's)."""
        self._names.setdefault(identity, (name, version))

    def put(self, key: tuple[str, str], reading: Reading) -> None:
        super().put(key, reading)
        name, version = self._names.get(key[1], (key[1].split("|", 1)[0], ""))
        self._pending.append(
            {
                "image_sha256": key[0],
                "reader": key[1],
                "reader_name": name,
                "reader_version": version,
                **encoded_reading(reading),
                "read_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            }
        )

    def flush(self) -> None:
        """Write the readings added since the last flush as one part file (atomically)."""
        if not self._pending:
            return
        import pandas as pd

        frame = pd.DataFrame(self._pending, columns=list(COLUMNS))
        buffer = io.BytesIO()
        frame.to_parquet(buffer, index=False, **WRITE_CHECKED)
        data = buffer.getvalue()
        # its SHA-256 in its name: a flipped bit anywhere is found on reading (set aside)
        sha = hashlib.sha256(data).hexdigest()[:SHA_DIGITS]
        name = f"{self.shard}-{next(_COUNTER):05d}-{os.getpid()}-{time.time_ns()}-{sha}.parquet"
        write_bytes_atomic(self.folder / name, data)
        self._pending = []


def encoded_reading(reading: Reading) -> dict[str, str]:
    """A reading's ``ocr_*`` columns as stored (lists as JSON strings)."""
    return {
        "ocr_text": reading.text,
        "ocr_pieces": json.dumps(list(reading.pieces), ensure_ascii=False),
        "ocr_boxes": json.dumps([[list(map(float, p)) for p in box] for box in reading.boxes]),
        "ocr_confidences": json.dumps([float(c) for c in reading.confidences]),
        "ocr_raw": json.dumps(list(reading.raw), ensure_ascii=False),
    }


def _reading(record: dict[str, Any]) -> Reading:
    boxes = [[(float(x), float(y)) for x, y in box] for box in json.loads(record["ocr_boxes"])]
    return Reading(
        text=str(record["ocr_text"]),
        pieces=list(json.loads(record["ocr_pieces"])),
        boxes=boxes,
        confidences=[float(c) for c in json.loads(record["ocr_confidences"])],
        raw=raw_texts(record.get("ocr_raw")),
    )


def raw_texts(cell: Any) -> list[str]:
    """The raw detection texts of a stored ``ocr_raw`` cell; [] when none were kept.

    >>> raw_texts('["stonup ", " WARMING"]'), raw_texts(None), raw_texts(float("nan"))
    (['stonup ', ' WARMING'], [], [])
    """
    if not isinstance(cell, str) or not cell:
        return []
    return [str(text) for text in json.loads(cell)]


def keep_results_readings(root: str | Path, rows: pd.DataFrame) -> list[str]:
    """Store the readings ``rows`` hold that the store lacks; the readers' ``name version``.

    A rescore replaces the readings of ``results.parquet``; calling this first keeps
    the old ones (a run made before the store existed, or whose store was deleted) in
    ``readings/``, under the identity ``name|version|`` of the reader that made them.
    """

    read = rows[rows["ocr_text"].notna() & rows["image_sha256"].notna() & ~failed_mask(rows)]
    table = readings_table(root)
    store = ReadingStore(root, "kept", table)
    readers = []
    for (name, version), group in read.groupby(["ocr_engine", "ocr_version"], sort=True):
        readers.append(f"{name} {version}")
        mine = (table["reader_name"] == name) & (table["reader_version"] == version)
        stored = set(table.loc[mine, "image_sha256"].astype(str))
        identity = f"{name}|{version}|"
        store.remember(identity, str(name), str(version))
        for record in group.drop_duplicates("image_sha256").to_dict("records"):
            if str(record["image_sha256"]) in stored:
                continue
            store.put((str(record["image_sha256"]), identity), _reading(record))
    store.flush()
    return readers


def readings_table(root: str | Path) -> pd.DataFrame:
    """Every stored reading of the run at ``root`` (one row per image and reader identity)."""
    import pandas as pd

    folder = Path(root) / READINGS_DIR
    parts = sorted(folder.glob("*.parquet")) if folder.is_dir() else []
    frames = [frame for frame in map(_read_readings, parts) if frame is not None]
    if not frames:
        return pd.DataFrame({column: pd.Series(dtype="object") for column in COLUMNS})
    frame = pd.concat(frames, ignore_index=True)
    return frame.drop_duplicates(["image_sha256", "reader"], keep="last").reset_index(drop=True)


def _read_readings(path: Path) -> pd.DataFrame | None:
    """One readings file; a damaged one is set aside (``*.unreadable``) and None returned.

    Damaged means anything: bytes that differ from the SHA-256 in its name, a page
    checksum, pandas metadata, a missing column, a cell that is not a reading. Its images
    are then read again by whoever needs them, as a damaged part file's rows are made
    again. A file written before names carried the SHA-256 is read with its
    page checksums (if any).
    """
    import sys

    import pandas as pd

    try:
        data = path.read_bytes()
        named = _NAMED_SHA.search(path.name)
        if named and hashlib.sha256(data).hexdigest()[:SHA_DIGITS] != named[1]:
            raise ValueError("SHA-256 differs from the one in its name: the file is damaged")
        frame = pd.read_parquet(io.BytesIO(data), **READ_CHECKED)
        missing = [c for c in COLUMNS if c not in frame.columns and c not in OPTIONAL_COLUMNS]
        if missing:
            raise ValueError(f"no column {missing[0]!r}")
        for record in frame.to_dict("records"):  # every cell a reading, or none is used
            _check_record(record)
        return frame
    except Exception as exc:  # any damage: set aside, never used, never a traceback
        problem = " ".join(str(exc).split())[:160]
        aside = path.with_name(path.name + ".unreadable")
        try:
            os.replace(path, aside)
        except FileNotFoundError:
            return None  # another process set it aside first
        print(
            f"warning: {path}: unreadable readings file ({type(exc).__name__}: {problem}); "
            f"set aside as {aside.name}, its images will be read again",
            file=sys.stderr,
        )
        return None


def _check_record(record: dict[str, Any]) -> None:
    """Raise when a stored row is not a reading (a damaged file read as a table)."""
    for column in ("image_sha256", "reader", "reader_name", "reader_version", "ocr_text"):
        if not isinstance(record[column], str):
            raise TypeError(f"{column} is not text")
    _reading(record)


def stored_readers(root: str | Path) -> pd.DataFrame:
    """One row per reader identity stored in the run: name, version, identity, images read."""
    table = readings_table(root)
    grouped = table.groupby(["reader_name", "reader_version", "reader"], sort=True)
    return grouped.size().rename("images").reset_index()


def pick_reader(root: str | Path, wanted: str) -> str:
    """The stored identity ``wanted`` names: an identity, a name or a name+version prefix.

    Several identities of one name (e.g. two option sets) must be told apart by
    the full identity; the error lists them.
    """

    readers = stored_readers(root)
    exact = readers[readers["reader"] == wanted]
    if len(exact) == 1:
        return str(exact["reader"].iloc[0])
    named = readers[(readers["reader_name"] == wanted) | readers["reader"].str.startswith(wanted)]
    if len(named) == 1:
        return str(named["reader"].iloc[0])
    known = "; ".join(readers["reader"]) or "none"
    problem = "names several stored readers" if len(named) else "has no stored readings"
    raise InputError(Path(root) / READINGS_DIR, f"reader {wanted!r} {problem}; stored: {known}")


def results_with_reader(root: str | Path, wanted: str) -> pd.DataFrame:
    """The run's results with reader ``wanted``'s readings in the ``ocr_*`` columns, re-scored.

    Rows whose image that reader has not read keep no reading (``ocr_text`` NaN,
    ``error`` ``Reader: not read by ...``) and get NaN scores.
    """

    from glyphbench.engine.folder import RunFolder  # --help loads this module, not the run folder's

    # --help loads this module; config and scoring load with a view
    from glyphbench.run.config import RunConfig

    # --help loads this module; config and scoring load with a view
    from glyphbench.run.results import RESULTS, conform_results, score_rows

    identity = pick_reader(root, wanted)
    table = readings_table(root)
    mine = table[table["reader"] == identity].set_index("image_sha256")
    results = read_table(Path(root) / RESULTS)  # checksums checked
    folder = RunFolder(root)
    config = RunConfig.from_mapping(folder.manifest(required=True)["config"], folder.manifest_path)
    name, version = str(mine["reader_name"].iloc[0]), str(mine["reader_version"].iloc[0])
    keys = results["image_sha256"].astype("string")
    found = keys.isin(mine.index)
    for column in ("ocr_text", "ocr_pieces", "ocr_boxes", "ocr_confidences", "ocr_raw"):
        if column not in mine:  # only part files from before the column (ocr_raw)
            results[column] = None
            continue
        values = keys.map(mine[column])
        results[column] = values.where(found, None).astype("object")
    results["ocr_engine"] = name
    results["ocr_version"] = version
    generated = generated_mask(results)
    results.loc[generated & ~found, "error"] = f"Reader: not read by {name}"
    results.loc[generated & found, "error"] = ""
    return conform_results(score_rows(results, config.score, config.suite))


def write_reader_view(root: str | Path, wanted: str) -> Path:
    """A folder ``<root>/readers/<reader>/`` a report can read: the run seen through ``wanted``.

    It holds ``run.json`` (copied), ``results.parquet`` (:func:`results_with_reader`)
    and ``images`` (a link to the run's images), so ``glyphbench report`` shows that
    reader's numbers with the run's own pictures.
    """

    # --help loads this module, not the run folder's
    from glyphbench.engine.folder import RunFolder

    root = Path(root)
    identity = pick_reader(root, wanted)
    name = slug(identity.split("|", 1)[0] + "-" + _short(identity))
    # the view stays inside the run (a linked readers/ folder is refused), and its files
    # are replaced, never written through a link
    view = inside(root, f"{VIEWS}/{name}/results.parquet", source=root, column="folder").parent
    view.mkdir(parents=True, exist_ok=True)
    write_bytes_atomic(view / "run.json", (root / "run.json").read_bytes())
    RunFolder(view).write_table(results_with_reader(root, identity), "results.parquet")
    link = view / "images"
    if not link.exists() and (root / "images").is_dir():
        link.symlink_to(Path("..") / ".." / "images", target_is_directory=True)
    return view


#: Where :func:`write_reader_view` puts the views of a run (``RUN/readers/<reader>/``).
VIEWS = "readers"


def images_folder(run_dir: str | Path) -> Path:
    """The folder the image paths of ``run_dir``'s table lie in: the run folder itself,
    or, for a reader view (:func:`write_reader_view`), the run it views (its ``images``
    is a link to the run's).
    """
    run_dir = Path(run_dir)
    run = run_dir.parent.parent
    link = run_dir / "images"
    linked = run_dir.parent.name == VIEWS and link.is_symlink()
    return run if linked and link.resolve() == (run / "images").resolve() else run_dir


def _short(identity: str) -> str:
    return hashlib.sha256(identity.encode()).hexdigest()[:8]
