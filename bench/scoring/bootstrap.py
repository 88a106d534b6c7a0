"""The bootstrap kernel's old home: it lives in :mod:`glyphbench.core.bootstrap` (issue 34).

The kernel (its paired comparisons in :mod:`glyphbench.core.paired`) serves the report, the
VAE evaluation, the human study and the reader calibration, none of which is a metric;
it moved below the metric table. Its public names stay importable from here for code
written against this path.
"""

from glyphbench.core.bootstrap import (
    MAX_CELLS,
    MEAN,
    MIN_UNITS,
    Estimands,
    Grouping,
    bootstrap_ci,
    cluster_codes,
    count_blocks,
    grouped_bootstrap,
    index_blocks,
    mean_interval,
    percentile_interval,
    resample_weights,
    resampled_means,
    seeded_rng,
    share_bootstrap,
    single_threaded_blas,
    tail,
    tally,
    wilson_interval,
)
from glyphbench.core.paired import (
    HolmIntervals,
    PairedResampling,
    bootstrap_p_values,
    holm_intervals,
    paired_differences,
)

__all__ = [
    "MAX_CELLS",
    "MEAN",
    "MIN_UNITS",
    "Estimands",
    "Grouping",
    "HolmIntervals",
    "PairedResampling",
    "bootstrap_ci",
    "bootstrap_p_values",
    "cluster_codes",
    "count_blocks",
    "grouped_bootstrap",
    "holm_intervals",
    "index_blocks",
    "mean_interval",
    "paired_differences",
    "percentile_interval",
    "resample_weights",
    "resampled_means",
    "seeded_rng",
    "share_bootstrap",
    "single_threaded_blas",
    "tail",
    "tally",
    "wilson_interval",
]
