"""Benchmark suites: the ``suites`` plug-ins of :data:`bench.core.registry.PLUGINS`.

A suite bundles what a published benchmark fixes (its prompts, its protocol, its
reader, its scorer) under one name: ``glyphbench run --suite NAME[:SUBSET] --data DIR``.
Each suite is one module of this package that builds a :class:`~bench.suites.base.Suite`
and calls :func:`~bench.suites.base.register_suite`; the registry imports every
module here when suites are first looked up, so modules stay cheap to import.

* :mod:`bench.suites.base`: the Suite, Subset and Protocol records, subset selection,
  data location and the prompt set a selection loads;
* :mod:`bench.suites.protocol`: a run config's suite defaults and its protocol card;
* :mod:`bench.suites.scores`: the suite family's scores on a run's rows;
* :mod:`bench.suites.published`: published scores (``published.csv``) and model matching;
* one module per benchmark: ``longtext``, ``oneig``, ``cvtg``, ``lex``, ``anytext``,
  ``mario``, ``textinvision``. See ``docs/suites.md``.
"""
