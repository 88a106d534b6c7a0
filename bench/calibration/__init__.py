"""Reader calibration: how well a reader reads controlled images (control images, the
calibration card; :mod:`~bench.calibration.calibrate`) and ICDAR-style word crops
(:mod:`~bench.calibration.calibrate_icdar`).

It stands on the benchmark run (the reading store) and the run kernel (reading). The package
face imports nothing; import the modules.
"""
