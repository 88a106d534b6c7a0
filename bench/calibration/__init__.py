"""Reader calibration: how well a reader reads controlled images (control images, the
calibration card; :mod:`~glyphbench.calibration.calibrate`) and ICDAR-style word crops
(:mod:`~glyphbench.calibration.calibrate_icdar`).

It stands on the benchmark run (the reading store) and the run kernel (reading). The package
face imports nothing; import the modules.
"""
