"""The results table's basics: its fixed column groups, its row key, the failed-row test.

The whole column list, which adds the prompt columns and the metric table's score
columns, is :data:`glyphbench.run.results.RESULT_COLUMNS` (those two come from rooms
above this one). Every report, the human study and re-scoring read this table and
nothing else. Columns, in order (prompt attributes:
:data:`glyphbench.prompts.schema.PROMPT_COLUMNS`):

identity    run_id, model, is_control, prompt_id, seed, sample_index, image_seed
prompt      prompt, text, and every other prompt column (prompt_type, group, ..., prompt_word_count)
image       image_path (relative to the run folder), image_sha256, width, height,
            batch_size, gen_seconds
ocr         ocr_text, ocr_pieces, ocr_boxes, ocr_confidences, ocr_raw (JSON strings;
            ocr_raw: each detection's text as the engine gave it),
            ocr_engine, ocr_version, ocr_seconds
scores      every column of :data:`glyphbench.scoring.SCORE_COLUMNS` (metric table,
            glyphbench family)
status      error (empty string when the row succeeded, else "Stage: ExceptionType: message")
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # loaded inside the functions: this module's names are light to import
    import numpy as np
    import numpy.typing as npt
    import pandas as pd
    import pyarrow as pa

IDENTITY_COLUMNS = (
    "run_id",
    "model",
    "is_control",
    "prompt_id",
    "seed",
    "sample_index",
    "image_seed",
)
IMAGE_COLUMNS = ("image_path", "image_sha256", "width", "height", "batch_size", "gen_seconds")
OCR_COLUMNS = (
    "ocr_text",
    "ocr_pieces",
    "ocr_boxes",
    "ocr_confidences",
    "ocr_raw",
    "ocr_engine",
    "ocr_version",
    "ocr_seconds",
)

#: A row is uniquely identified by these columns within a run.
ROW_KEY = ("model", "prompt_id", "seed", "sample_index")


def failed_mask(frame: pd.DataFrame | pa.Table) -> npt.NDArray[np.bool_]:
    """The one test of a failed row: its ``error`` cell is set (not empty, not missing).

    Every table glyphbench writes (benchmark results, VAE results) has an ``error``
    column; a table without one has no failed rows. ``frame`` may be an Arrow table
    (a batch's rows as the run builds them).

    >>> import pandas as pd
    >>> failed_mask(pd.DataFrame({"error": ["", None, "OCR: boom", "  "]})).tolist()
    [False, False, True, False]
    >>> import pyarrow as pa
    >>> failed_mask(pa.table({"error": ["", None, "OCR: boom", "  "]})).tolist()
    [False, False, True, False]
    """
    import numpy as np
    import pandas as pd

    if not isinstance(frame, pd.DataFrame):
        if "error" not in frame.column_names:
            return np.zeros(frame.num_rows, dtype=bool)
        cells = frame.column("error").to_pylist()
        return np.array([cell is not None and str(cell).strip() != "" for cell in cells], bool)
    if "error" not in frame.columns:
        return np.zeros(len(frame), dtype=bool)
    if isinstance(frame["error"].dtype, pd.StringDtype):  # test each distinct message once
        codes, messages = pd.factorize(frame["error"])  # missing: code -1, not failed
        is_set = np.array([str(m).strip() != "" for m in messages] + [False], dtype=bool)
        failed: npt.NDArray[np.bool_] = is_set[codes]
        return failed
    errors = frame["error"].astype(object)
    return np.asarray(errors.notna() & (errors.astype(str).str.strip() != ""), dtype=bool)


def generated_mask(rows: pd.DataFrame) -> pd.Series:
    """Rows whose image was made: an image path, and no load or generation error.

    Such a row can be read (again), whatever its reading step gave.

    >>> import pandas as pd
    >>> rows = pd.DataFrame({"image_path": ["a.png", None, "c.png"],
    ...                      "error": ["OCR: x", "Generate: y", ""]})
    >>> generated_mask(rows).tolist()
    [True, False, True]
    """
    stage = rows["error"].fillna("").astype(str).str.startswith(("Load:", "Generate:"))
    return rows["image_path"].notna() & ~stage


def unread_mask(frame: pd.DataFrame) -> npt.NDArray[np.bool_]:
    """Rows whose image is made and not read yet (``run --read-later`` before ``read``).

    ``glyphbench read`` reads these next; the report leaves them out of every table. A
    table without an ``image_path`` or ``ocr_text`` column has none.

    >>> import pandas as pd
    >>> rows = pd.DataFrame({"image_path": ["a.png", "b.png", None, "d.png"],
    ...                      "ocr_text": [None, "hi", None, None],
    ...                      "error": ["", "", "Generate: y", "Read: z"]})
    >>> unread_mask(rows).tolist()
    [True, False, False, False]
    """
    import numpy as np

    if "image_path" not in frame.columns or "ocr_text" not in frame.columns:
        return np.zeros(len(frame), dtype=bool)
    made: npt.NDArray[np.bool_] = frame["image_path"].notna().to_numpy(dtype=bool)
    unread: npt.NDArray[np.bool_] = frame["ocr_text"].isna().to_numpy(dtype=bool)
    return made & ~failed_mask(frame) & unread
