"""The benchmark run: what ``glyphbench run``, ``read``, ``rescore`` and ``merge`` do.

It stands on the run kernel (:mod:`bench.engine`: run folder, locks, jobs, loop, reading,
read pool, backlog) and adds what only the benchmark needs: the run config
(:mod:`~bench.run.config`), the plan, image jobs, the shard runner (:mod:`~bench.run.shard`),
the results table and reading store, the operations the CLI calls
(:mod:`~bench.run.operations`), reading later and with the run's own reader processes, and
run provenance. The package face imports nothing; import the modules.
"""
