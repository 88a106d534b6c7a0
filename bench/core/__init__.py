"""The basics every other room of bench/ stands on (and imports nothing above them).

Registry, file I/O, durable commits of several files, paths kept inside their folder,
user errors, the results schema, seeds, the accelerator helpers,
progress, fonts and the hub check.
"""
