"""Benchmark suites: the ``suites`` plug-ins of :data:`glyphbench.core.registry.PLUGINS`.

A suite bundles what a published benchmark fixes (its prompts, its protocol, its
reader, its scorer) under one name: ``glyphbench run --suite NAME[:SUBSET] --data DIR``.
Each suite is one module of this package that builds a :class:`~glyphbench.suites.base.Suite`
and calls :func:`~glyphbench.suites.base.register_suite`; the registry imports every
module here when suites are first looked up, so modules stay cheap to import.

* :mod:`glyphbench.suites.base`: the Suite, Subset and Protocol records, subset selection,
  data location and the prompt set a selection loads;
* :mod:`glyphbench.suites.protocol`: a run config's suite defaults and its protocol card;
* :mod:`glyphbench.suites.scores`: the suite family's scores on a run's rows;
* :mod:`glyphbench.suites.published`: published scores (``published.csv``) and model matching;
* one module per benchmark: ``longtext``, ``oneig``, ``cvtg``, ``lex``, ``anytext``,
  ``mario``, ``textinvision``. See ``docs/suites.md``.
"""
