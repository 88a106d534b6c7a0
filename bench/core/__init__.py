"""The basics every other room of bench/ stands on (and imports nothing above them).

Registry, file I/O, user errors, the results schema, seeds, the accelerator helpers,
progress, fonts and the hub check.
"""
