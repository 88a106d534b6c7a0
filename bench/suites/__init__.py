"""Benchmark suites: the ``suites`` plug-ins of :data:`bench.registry.PLUGINS`.

A suite bundles what a published benchmark fixes (its prompts, its reader, its
scorer) under one name. Each suite is one module of this package that calls
:func:`bench.registry.register` with kind ``"suites"``; the registry imports every
module here when suites are first looked up. None is registered yet.
"""
