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
    browse/index.js           per image: model, prompt, run, slice labels and scores, as
                              little-endian typed arrays in base64 (filters and sorting)
    browse/rows/NNNNN.js      per image: reading, error, image path, seed, sample
                              (ROWS_PER_FILE images a file; only the files a page shows load)
    browse/prompts/NNNNN.js   per prompt: id, prompt and expected text (PROMPTS_PER_FILE a
                              file; loaded for the rows shown, and all of them by a search)

Images are not copied or re-encoded: each row points at its image in the run folder,
by a path relative to the report folder (``../images/...`` for the default
``RUN/report``). Making a 160 px JPEG from a 1024 px PNG costs about 25 ms, most of it
decoding the PNG (measured with Pillow on this project's 2-core machine), so thumbnails of
10^5 images would add some 20 minutes to a report; the browser instead loads only the
images of the rows on screen (``loading="lazy"``). A report folder copied without its run
shows each missing image's path instead.

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
from glyphbench.report.metric_info import metric_info
from glyphbench.report.slices import slice_labels

#: The page, beside index.html.
PAGE = "browse.html"
#: The folder of the app and its data files, beside the page.
DATA = "browse"
#: Images per row file; a page of sorted rows loads at most one file per row shown.
ROWS_PER_FILE = 256
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
class BrowserSlice:
    """One filter menu: an attribute's labels in display order and each row's label code."""

    column: str
    labels: list[str]
    codes: np.ndarray


def browser_order(frame: pd.DataFrame, models: Sequence[str]) -> np.ndarray:
    """Row positions in report order: models as ``models`` (others after, by name), then
    prompt_id, seed and sample_index.

    >>> frame = pd.DataFrame({"model": ["b", "a", "a", "c"], "prompt_id": ["p2", "p2", "p1", "p1"]})
    >>> browser_order(frame, ["a", "b"]).tolist()
    [2, 1, 0, 3]
    """
    names = frame["model"].astype(str)
    known = {m: i for i, m in enumerate(models)}
    others = sorted(set(names) - set(known))
    known.update({m: len(models) + i for i, m in enumerate(others)})
    keys = [names.map(known).to_numpy()]
    keys.append(pd.factorize(frame["prompt_id"].astype(str), sort=True)[0])
    for column in ("seed", "sample_index"):
        if column in frame.columns:
            keys.append(pd.to_numeric(frame[column], errors="coerce").fillna(-1).to_numpy())
    return np.lexsort(keys[::-1])


def browser_slices(
    frame: pd.DataFrame, report_slices: Mapping[str, pd.Series]
) -> list[BrowserSlice]:
    """The filter menus: the report's own slicings (their labels as given, for ``frame``'s
    rows), then every other prompt attribute, the run and the seed with 2 to
    :data:`MAX_LABELS` labels, then the outcome (scored or failed)."""
    menus = [_menu(column, labels) for column, labels in report_slices.items()]
    extra = [c for c in PROMPT_COLUMNS if c not in NOT_SLICES]
    extra += ["run", "seed"]
    for column in extra:
        if column in report_slices or column not in frame.columns:
            continue
        if frame[column].nunique(dropna=False) < 2:  # cheap test before labelling every row
            continue
        menus.append(_menu(column, slice_labels(frame, column)))
    failed = failed_mask(frame)
    outcome = pd.Series(pd.Categorical.from_codes(failed.astype(np.int8), ["scored", "failed"]))
    menus.append(_menu(OUTCOME, outcome))
    return [m for m in menus if 2 <= len(m.labels) <= MAX_LABELS or m.column in report_slices]


def _menu(column: str, labels: pd.Series) -> BrowserSlice:
    """A menu of the labels rows carry (categories no row has are dropped), in their order."""
    categorical = labels.astype("category") if labels.dtype.name != "category" else labels
    codes = categorical.cat.codes.to_numpy()
    used = np.unique(codes[codes >= 0])
    names = [str(categorical.cat.categories[i]) for i in used]
    remap = np.full(len(categorical.cat.categories) + 1, len(names), dtype=np.int64)
    remap[used] = np.arange(len(used))
    if (codes < 0).any():  # a row without a label (an attribute's NaN): its own entry
        names.append("(none)")
    return BrowserSlice(column, names, remap[codes])


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
    staging folder): image paths are relative to it.
    """
    order = browser_order(frame, models)
    rows = frame.iloc[order].reset_index(drop=True)
    slices = [
        BrowserSlice(s.column, s.labels, s.codes[order])
        for s in browser_slices(frame, report_slices)
    ]
    metrics = [m for m in metrics if m in rows.columns]
    names = rows["model"].astype(str)
    present = set(names)
    model_names = [m for m in models if m in present] + sorted(present - set(models))
    model_codes = pd.Categorical(names, model_names).codes
    data_dir = out_dir / DATA
    prompt_codes = _write_prompts(rows, data_dir / "prompts")
    runs, run_codes = _runs(rows, report_dir or out_dir)
    _write_rows(rows, data_dir / "rows")
    arrays = {"model": model_codes, "prompt": prompt_codes, "run": run_codes}
    arrays.update({f"slice:{s.column}": s.codes for s in slices})
    for m in metrics:
        scores = pd.to_numeric(rows[m], errors="coerce").astype("float64").to_numpy()
        arrays[f"metric:{m}"] = scores
    index = {
        "n": len(rows),
        "rows_per_file": ROWS_PER_FILE,
        "prompts_per_file": PROMPTS_PER_FILE,
        "n_prompts": int(prompt_codes.max()) + 1 if len(rows) else 0,
        "models": model_names,
        "runs": runs,
        "slices": [{"column": s.column, "labels": s.labels} for s in slices],
        "metrics": [_metric_entry(m, arrays[f"metric:{m}"]) for m in metrics],
        "arrays": {key: _encoded(values) for key, values in arrays.items()},
    }
    _write_script(data_dir / "index.js", "window.GLYPHBENCH_BROWSE = ", index, ";\n")
    for name in APP_FILES:
        shutil.copyfile(templates.FOLDER / name, data_dir / name)
    counts = np.bincount(model_codes, minlength=len(model_names))
    page = out_dir / PAGE
    with atomic_open(page, "w", encoding="utf-8") as handle:
        handle.write(
            templates.render(
                "browse.html.j2",
                title=f"Image browser: {title}" if title else "Image browser",
                n_rows=len(rows),
                models=[
                    {"name": m, "count": int(c)} for m, c in zip(model_names, counts, strict=True)
                ],
                menus=[_menu_entry(k, s, s.column in report_slices) for k, s in enumerate(slices)],
                metrics=index["metrics"],
            )
        )
    return page


def _menu_entry(number: int, menu: BrowserSlice, main: bool) -> dict[str, Any]:
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
    from glyphbench.report.latex import ABBREVIATIONS

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


def _runs(rows: pd.DataFrame, report_dir: Path) -> tuple[list[dict[str, Any]], np.ndarray]:
    """Each run's name and its folder relative to the report folder, ending in ``/`` (None
    where no relative path exists, as on another drive), and each row's run code."""
    if "run" not in rows.columns or "run_dir" not in rows.columns:
        return [{"name": "", "base": ""}], np.zeros(len(rows), dtype=np.int64)
    codes, names = pd.factorize(rows["run"].astype(str))
    folders = rows["run_dir"].astype(str).to_numpy()[np.unique(codes, return_index=True)[1]]
    runs = []
    for name, folder in zip(names, folders, strict=True):
        try:
            relative: str | None = Path(os.path.relpath(folder, report_dir.resolve())).as_posix()
        except ValueError:
            relative = None
        base = None if relative is None else "" if relative == "." else relative + "/"
        runs.append({"name": str(name), "base": base})
    return runs, codes


def _write_prompts(rows: pd.DataFrame, folder: Path) -> np.ndarray:
    """Write the prompt files (one entry per prompt_id, in id order); each row's prompt code."""
    codes, ids = pd.factorize(rows["prompt_id"].astype(str), sort=True)
    first = np.zeros(len(ids), dtype=np.int64)
    first[codes[::-1]] = np.arange(len(codes))[::-1]  # each prompt's first row
    columns = {
        "id": [str(i) for i in ids],
        "prompt": _texts(rows, "prompt", first),
        "text": _texts(rows, "text", first),
    }
    _write_chunks(folder, "prompts", columns, PROMPTS_PER_FILE)
    return codes


def _write_rows(rows: pd.DataFrame, folder: Path) -> None:
    """Write the row files: reading, error, image path (relative to its run), seed, sample."""
    everything = np.arange(len(rows))
    columns = {
        "ocr": _texts(rows, "ocr_text", everything),
        "error": _texts(rows, "error", everything),
        "image": _texts(rows, "image_path", everything),
        "seed": _integers(rows, "seed"),
        "sample": _integers(rows, "sample_index"),
    }
    _write_chunks(folder, "rows", columns, ROWS_PER_FILE)


def _texts(rows: pd.DataFrame, column: str, positions: np.ndarray) -> list[str]:
    if column not in rows.columns:
        return [""] * len(positions)
    values = rows[column].to_numpy(dtype=object)[positions]
    return ["" if v is None or v is pd.NA or v != v else str(v) for v in values]


def _integers(rows: pd.DataFrame, column: str) -> list[int | None]:
    if column not in rows.columns:
        return [None] * len(rows)
    values = pd.to_numeric(rows[column], errors="coerce").astype("Int64")
    return [None if v is pd.NA else int(v) for v in values]


def _write_chunks(folder: Path, kind: str, columns: Mapping[str, list[Any]], size: int) -> None:
    """``columns`` cut into files of ``size`` entries, each handing its part to the page."""
    folder.mkdir(parents=True, exist_ok=True)
    total = len(next(iter(columns.values()))) if columns else 0
    for number, start in enumerate(range(0, total, size)):
        part = {name: values[start : start + size] for name, values in columns.items()}
        _write_script(
            folder / f"{number:05d}.js",
            f"glyphbenchBrowse.take({json.dumps(kind)}, {number}, ",
            part,
            ");\n",
        )


def _write_script(path: Path, head: str, data: Any, tail: str) -> None:
    """A script of ``head``, ``data`` as JSON (valid JavaScript), ``tail``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8", errors="backslashreplace") as handle:
        handle.write(head)
        json.dump(data, handle, ensure_ascii=False, separators=(",", ":"), allow_nan=True)
        handle.write(tail)
