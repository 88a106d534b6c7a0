"""The image browser: every read image of a report, browsable from the static report folder.

``browse.html`` beside ``index.html`` lists each image with its prompt, expected text,
reading and scores; it filters by model, by any attribute slice and by score range,
sorts, searches the prompts, pages, and shows one prompt's images side by side across
models. It is plain HTML, CSS and JavaScript shipped with glyphbench (nothing fetched
from the network), and works opened as a ``file://`` page: browsers refuse ``fetch()``
of local files, so every data file is a script that hands its data to the page.

Files (all relative to the report folder)::

    browse.html               the page (filters, table, pager, detail dialog)
    browse/browse.js|.css     the app (package data of glyphbench.templates, copied)
    browse/index.js           per image: model, prompt, run, seed, sample, slice labels and
                              scores, as little-endian typed arrays in base64 (filters, sorting)
    browse/rows/NNNNN.js      per image: reading, error, image path (ROWS_PER_FILE images a
                              file; only the files of the rows a page shows are loaded)
    browse/prompts/NNNNN.js   per prompt: id, prompt and expected text (PROMPTS_PER_FILE a
                              file; loaded for the rows shown, and all of them by a search)

Images are not copied or re-encoded: each row points at its image in the run folder,
by a path relative to the report folder (``../images/...`` for the default
``RUN/report``). Making a 160 px JPEG from a 1024 px PNG costs about 28 ms of CPU, most of
it decoding the PNG (``python benchmarks/bench_browser.py --thumbnails 40``), so thumbnails
of 10^5 images would add some 46 CPU-minutes to a report; the browser instead loads only
the images of the rows on screen (``loading="lazy"``). A report folder copied without its
run shows each missing image's path instead.

The rows are those of ``tables/per_image.csv``: every read row, failed ones included
(with their error), in report order (models as in the summary, then prompt, seed, sample).
"""

from __future__ import annotations

import base64
import json
import os
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from glyphbench import templates
from glyphbench.core.io import atomic_open
from glyphbench.core.schema import failed_mask
from glyphbench.prompts.schema import PROMPT_COLUMNS
from glyphbench.report.latex import ABBREVIATIONS
from glyphbench.report.metric_info import metric_info
from glyphbench.report.slices import slice_labels

#: The page, beside index.html.
PAGE = "browse.html"
#: The folder of the app and its data files, beside the page.
DATA = "browse"
#: Images per row file. A page of sorted rows loads at most one file per row shown (50
#: files, some 3.5 MB at 70 bytes a row); half as many rows a file made twice as many files,
#: and a million rows' data took 3.6-4.4 s of CPU instead of 2.5 (bench_browser.py --build).
ROWS_PER_FILE = 1024
#: Prompts per prompt file.
PROMPTS_PER_FILE = 1024
#: The app, copied from the templates folder.
APP_FILES = ("browse.js", "browse.css")
#: Attribute columns that name or hold one prompt's text: searched or shown, never sliced.
NOT_SLICES = frozenset({"prompt_id", "prompt", "text", "template_id", "text_id"})
#: An attribute with more labels than this is left out of the filters (a menu too long to use).
MAX_LABELS = 60
#: The slice every table leaves out of its means: said per row, filterable.
OUTCOME = "outcome"


@dataclass(frozen=True)
class Coded:
    """Labels in display order and each row's label code: a filter menu, or a key (seed)."""

    column: str
    labels: list[str]
    codes: np.ndarray


def model_codes(frame: pd.DataFrame, models: Sequence[str]) -> tuple[np.ndarray, list[str]]:
    """Each row's model code and the models in report order: as ``models``, then any
    others by name.

    >>> codes, names = model_codes(pd.DataFrame({"model": ["c", "b", "a", "b"]}), ["b", "z", "a"])
    >>> codes.tolist(), names
    ([2, 0, 1, 0], ['b', 'a', 'c'])
    """
    codes, uniques = pd.factorize(frame["model"])
    present = [str(m) for m in uniques]
    names = [m for m in models if m in set(present)] + sorted(set(present) - set(models))
    position = {m: i for i, m in enumerate(names)}
    return np.array([position[m] for m in present], dtype=np.int64)[codes], names


def prompt_keys(frame: pd.DataFrame) -> tuple[np.ndarray, int]:
    """Each row's prompt code, in prompt_id order, and the number of prompts.

    A prompt is its id, prompt and expected text: runs that give one id to different
    prompts (two prompt sets) keep them apart. One factorize of the id serves the usual
    case, where every row of an id has the same texts.

    >>> frame = pd.DataFrame({"prompt_id": ["b", "a", "b", "a"], "prompt": "x",
    ...                       "text": ["one", "two", "one", "three"]})
    >>> codes, n = prompt_keys(frame)
    >>> codes.tolist(), n
    ([2, 1, 2, 0], 3)
    """
    codes, ids = pd.factorize(frame["prompt_id"], sort=True)
    first = np.unique(codes, return_index=True)[1]
    columns = [c for c in ("prompt", "text") if c in frame.columns]
    every = np.arange(len(frame))
    same = all(_strings(frame, c, first[codes]).equals(_strings(frame, c, every)) for c in columns)
    if same:
        return codes, len(ids)
    keys = frame.groupby(["prompt_id", *columns], sort=True, dropna=False).ngroup().to_numpy()
    return keys, int(keys.max()) + 1


def browser_order(
    model_codes: np.ndarray, prompt_codes: np.ndarray, frame: pd.DataFrame
) -> np.ndarray:
    """Row positions in report order: by model code, prompt code, seed and sample_index.

    >>> browser_order(np.array([1, 0, 0, 2]), np.array([1, 1, 0, 0]), pd.DataFrame()).tolist()
    [2, 1, 0, 3]
    """
    keys = [model_codes, prompt_codes]
    for column in ("seed", "sample_index"):
        if column in frame.columns:
            keys.append(pd.to_numeric(frame[column], errors="coerce").fillna(-1).to_numpy())
    return np.lexsort(keys[::-1])


def browser_slices(frame: pd.DataFrame, report_slices: Mapping[str, pd.Series]) -> list[Coded]:
    """The filter menus: the report's own slicings (their labels as given, for ``frame``'s
    rows), then every other prompt attribute, the run and the seed with 2 or more labels,
    then the outcome (scored or failed). A menu of more than :data:`MAX_LABELS` labels
    (``--by prompt_id``) is left out: the search finds prompts."""
    menus = [_menu(column, labels) for column, labels in report_slices.items()]
    extra = [c for c in PROMPT_COLUMNS if c not in NOT_SLICES]
    extra += ["run", "seed"]
    for column in extra:
        if column in report_slices or column not in frame.columns:
            continue
        if not frame[column].notna().any():  # a column no prompt set filled: no labels to make
            continue
        menus.append(_menu(column, slice_labels(frame, column)))
    failed = failed_mask(frame)
    outcome = pd.Series(pd.Categorical.from_codes(failed.astype(np.int8), ["scored", "failed"]))
    menus.append(_menu(OUTCOME, outcome))
    return [
        m
        for m in menus
        if len(m.labels) <= MAX_LABELS and (len(m.labels) > 1 or m.column in report_slices)
    ]


def _menu(column: str, labels: pd.Series) -> Coded:
    """A menu of the labels rows carry (categories no row has are dropped), in their order."""
    categorical = labels.astype("category") if labels.dtype.name != "category" else labels
    codes = categorical.cat.codes.to_numpy()
    used = np.unique(codes[codes >= 0])
    names = [str(categorical.cat.categories[i]) for i in used]
    remap = np.full(len(categorical.cat.categories) + 1, len(names), dtype=np.int64)
    remap[used] = np.arange(len(used))
    if (codes < 0).any():  # a row without a label (an attribute's NaN): its own entry
        names.append("(none)")
    return Coded(column, names, remap[codes])


def _key(frame: pd.DataFrame, column: str) -> Coded:
    """A row key column (seed, sample_index) as its distinct values and each row's code."""
    if column not in frame.columns:
        return Coded(column, [""], np.zeros(len(frame), dtype=np.int64))
    codes, values = pd.factorize(frame[column], sort=True, use_na_sentinel=False)
    return Coded(column, ["" if pd.isna(v) else str(v) for v in values], codes)  # None, NaN, NA


def write_browser(
    frame: pd.DataFrame,
    out_dir: Path,
    *,
    models: Sequence[str],
    metrics: Sequence[str],
    report_slices: Mapping[str, pd.Series],
    report_dir: Path | None = None,
    title: str = "",
) -> Path:
    """Write ``browse.html`` and ``browse/`` into ``out_dir``; return the page's path.

    ``frame``: the rows to show (read rows; see :func:`glyphbench.report.analyse.read_rows`),
    with ``run`` and ``run_dir`` as :func:`glyphbench.report.load.load_runs` adds them.
    ``models`` orders the models (the report's), ``metrics`` are the score columns (the
    first is the primary one), ``report_slices`` the report's slice labels per column, for
    ``frame``'s rows. ``report_dir`` is where the folder will live (``out_dir`` may be a
    staging folder): image paths are relative to it. The frame itself is never reordered
    or copied: each column the page needs is taken in report order on its own.
    """
    models_of_rows, names = model_codes(frame, models)
    prompt_codes, n_prompts = prompt_keys(frame)
    order = browser_order(models_of_rows, prompt_codes, frame)
    data_dir = out_dir / DATA
    _write_prompts(frame, prompt_codes, data_dir / "prompts")
    runs, run_codes = _runs(frame, report_dir or out_dir)
    _write_rows(frame, order, data_dir / "rows")
    slices = [
        Coded(s.column, s.labels, s.codes[order]) for s in browser_slices(frame, report_slices)
    ]
    keys = [_key(frame, c) for c in ("seed", "sample_index")]
    arrays = {
        "model": models_of_rows[order],
        "prompt": prompt_codes[order],
        "run": run_codes[order],
    }
    arrays.update({f"key:{k.column}": k.codes[order] for k in keys})
    arrays.update({f"slice:{s.column}": s.codes for s in slices})
    metrics = [m for m in metrics if m in frame.columns]
    for m in metrics:
        scores = pd.to_numeric(frame[m], errors="coerce").to_numpy(dtype="float64", na_value=np.nan)
        arrays[f"metric:{m}"] = scores[order]
    index = {
        "n": len(frame),
        "rows_per_file": ROWS_PER_FILE,
        "prompts_per_file": PROMPTS_PER_FILE,
        "n_prompts": n_prompts,
        "models": names,
        "runs": runs,
        "keys": {k.column: k.labels for k in keys},
        "slices": [{"column": s.column, "labels": s.labels} for s in slices],
        "metrics": [_metric_entry(m, arrays[f"metric:{m}"]) for m in metrics],
        "arrays": {key: _encoded(values) for key, values in arrays.items()},
    }
    _write_script(data_dir / "index.js", "window.GLYPHBENCH_BROWSE = ", index, ";\n")
    for name in APP_FILES:
        shutil.copyfile(templates.FOLDER / name, data_dir / name)
    counts = np.bincount(models_of_rows, minlength=len(names))
    page = out_dir / PAGE
    with atomic_open(page, "w", encoding="utf-8") as handle:
        handle.write(
            templates.render(
                "browse.html.j2",
                title=f"Image browser: {title}" if title else "Image browser",
                n_rows=len(frame),
                models=[{"name": m, "count": int(c)} for m, c in zip(names, counts, strict=True)],
                menus=[_menu_entry(k, s, s.column in report_slices) for k, s in enumerate(slices)],
                metrics=index["metrics"],
            )
        )
    return page


def _menu_entry(number: int, menu: Coded, main: bool) -> dict[str, Any]:
    """A filter menu for the page: its labels with their image counts."""
    counts = np.bincount(menu.codes, minlength=len(menu.labels))
    return {
        "id": f"s{number}",
        "column": menu.column,
        "main": main or menu.column == OUTCOME,
        "options": [
            {"value": i, "label": label, "count": int(count)}
            for i, (label, count) in enumerate(zip(menu.labels, counts, strict=True))
        ],
    }


def _metric_entry(name: str, values: np.ndarray) -> dict[str, Any]:
    """A score column's name, label, short header, direction and decimals (none where every
    image's value is a whole number, as an edit count is)."""

    info = metric_info(name)
    known = values[~np.isnan(values)]
    return {
        "name": name,
        "label": info.label,
        "short": ABBREVIATIONS.get(name, info.label),
        "higher": info.higher_is_better,
        "digits": 0 if np.array_equal(known, np.round(known)) else info.digits,
        "flag": name == "exact_match",  # 0 or 1 per image: shown as yes / no
    }


def _encoded(values: np.ndarray) -> dict[str, str]:
    """An array as the page decodes it: its type and its little-endian bytes in base64.

    Integer codes take the narrowest unsigned type that holds them.

    >>> _encoded(np.array([1, 2, 300]))
    {'type': '<u2', 'data': 'AQACACwB'}
    """
    if values.dtype.kind == "f":
        typed = values.astype("<f4")
    else:
        top = int(values.max()) if len(values) else 0
        typed = values.astype("<u1" if top < 2**8 else "<u2" if top < 2**16 else "<u4")
    return {"type": typed.dtype.str, "data": base64.b64encode(typed.tobytes()).decode("ascii")}


def _runs(frame: pd.DataFrame, report_dir: Path) -> tuple[list[dict[str, Any]], np.ndarray]:
    """Each run's name and its folder relative to the report folder, ending in ``/`` (None
    where no relative path exists, as on another drive), and each row's run code."""
    if "run" not in frame.columns or "run_dir" not in frame.columns:
        return [{"name": "", "base": ""}], np.zeros(len(frame), dtype=np.int64)
    codes, names = pd.factorize(frame["run"])
    folders = frame["run_dir"].to_numpy()[np.unique(codes, return_index=True)[1]]
    runs = []
    for name, folder in zip(names, folders, strict=True):
        try:
            relative: str | None = Path(os.path.relpath(folder, report_dir.resolve())).as_posix()
        except ValueError:
            relative = None
        base = None if relative is None else "" if relative == "." else relative + "/"
        runs.append({"name": str(name), "base": base})
    return runs, codes


def _write_prompts(frame: pd.DataFrame, codes: np.ndarray, folder: Path) -> None:
    """Write the prompt files: per prompt code (prompt_id order), its id and its first row's
    prompt and expected text."""
    first = np.unique(codes, return_index=True)[1]
    columns = {
        "id": _strings(frame, "prompt_id", first),
        "prompt": _strings(frame, "prompt", first),
        "text": _strings(frame, "text", first),
    }
    _write_files(folder, "prompts", columns, PROMPTS_PER_FILE)


def _write_rows(frame: pd.DataFrame, order: np.ndarray, folder: Path) -> None:
    """Write the row files: each row's reading, error and image path (relative to its run)."""
    columns = {
        "ocr": _strings(frame, "ocr_text", order),
        "error": _strings(frame, "error", order),
        "image": _strings(frame, "image_path", order),
    }
    _write_files(folder, "rows", columns, ROWS_PER_FILE)


def _strings(frame: pd.DataFrame, column: str, positions: np.ndarray) -> Any:
    """The column's values at ``positions`` as an Arrow string array, missing ones "".

    Arrow, not Python: the frame's text columns are Arrow-backed, and a million rows are
    taken and converted in a fraction of a second (a Python loop over them took seconds).
    """
    import pyarrow as pa

    if column not in frame.columns:
        return pa.array([""] * len(positions), pa.string())
    series = frame[column]
    try:
        array = pa.array(series, from_pandas=True)
    except (pa.ArrowInvalid, pa.ArrowTypeError):  # mixed Python objects: name each one
        array = pa.array(
            series.astype(object).where(series.notna(), None).map(str, na_action="ignore")
        )
    if not pa.types.is_string(array.type) and not pa.types.is_large_string(array.type):
        array = array.cast(pa.string())
    return array.take(pa.array(positions)).fill_null("")


def _write_files(folder: Path, kind: str, columns: Mapping[str, Any], size: int) -> None:
    """Arrow string ``columns`` cut into files of ``size`` entries, each handing its part
    to the page (``glyphbenchBrowse.take(kind, number, {column: [...]})``)."""
    folder.mkdir(parents=True, exist_ok=True)
    total = len(next(iter(columns.values()))) if columns else 0
    head = "glyphbenchBrowse.take(" + json.dumps(kind) + ", {}, "
    for number, start in enumerate(range(0, total, size)):
        part = {name: values.slice(start, size).to_pylist() for name, values in columns.items()}
        _write_script(folder / f"{number:05d}.js", head.format(number), part, ");\n")


def _write_script(path: Path, head: str, data: Any, tail: str) -> None:
    """A script of ``head``, ``data`` as JSON (valid JavaScript), ``tail``.

    ``json.dumps``, not ``json.dump``: only the former uses the C encoder (ten times faster
    on a million rows' texts).
    """
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8", errors="backslashreplace") as handle:
        handle.write(head + text + tail)
