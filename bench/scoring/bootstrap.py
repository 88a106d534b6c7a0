"""The bootstrap kernel's old home: it lives in :mod:`bench.core.bootstrap` (issue 34).

The kernel serves the report, the VAE evaluation, the human study and the reader
calibration, none of which is a metric; it moved below the metric table. Its public
names stay importable from here for code written against this path.
"""

from bench.core.bootstrap import (
    MAX_CELLS,
    MEAN,
    MIN_UNITS,
    Estimands,
    Grouping,
    HolmIntervals,
    PairedResampling,
    bootstrap_ci,
    bootstrap_p_values,
    cluster_codes,
    count_blocks,
    grouped_bootstrap,
    holm_intervals,
    index_blocks,
    mean_interval,
    paired_differences,
    percentile_interval,
    resample_weights,
    resampled_means,
    seeded_rng,
    share_bootstrap,
    single_threaded_blas,
    tail,
    tally,
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
]
