"""Reports: tables, figures and an HTML page from one or more runs' ``results.parquet``.

Public API::

    from glyphbench.report import write_report, load_runs
    from glyphbench.report.analyse import analyse, Settings      # every table, no files
    from glyphbench.report.render import render                  # the folder from the tables
    from glyphbench.report.slices import Slicing                 # --by, resolved once
    from glyphbench.report.stats import summarize
    from glyphbench.report.compare import paired_difference, compare_models, rank_models

``write_report`` is ``load_runs`` -> ``Slicing.resolve`` -> ``analyse`` -> ``render``
(``glyphbench report`` calls it). :mod:`glyphbench.report.analyse`,
:mod:`glyphbench.report.stats` and :mod:`glyphbench.report.controls` are pure functions
over the results table; intervals come from :mod:`glyphbench.core.bootstrap`. See
``docs/report.md``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from glyphbench.report.build import write_report
    from glyphbench.report.load import load_runs

__all__ = ["load_runs", "write_report"]


def __getattr__(name: str) -> Any:
    # Lazy so that importing glyphbench.report (e.g. from the CLI) stays cheap.
    if name == "write_report":
        from glyphbench.report.build import write_report

        return write_report
    if name == "load_runs":
        from glyphbench.report.load import load_runs

        return load_runs
    raise AttributeError(name)
