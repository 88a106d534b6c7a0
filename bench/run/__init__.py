"""The benchmark run: what ``glyphbench run``, ``read``, ``rescore`` and ``merge`` do.

It stands on the run kernel (:mod:`glyphbench.engine`: run folder, locks, jobs, loop, reading,
read pool, backlog) and adds what only the benchmark needs: the run config
(:mod:`~glyphbench.run.config`), the plan, image jobs, the shard runner
(:mod:`~glyphbench.run.shard`),
the results table and reading store, the operations the CLI calls
(:mod:`~glyphbench.run.operations`), reading later and with the run's own reader processes, and
run provenance. The package face imports nothing; import the modules.
"""
