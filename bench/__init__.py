"""glyphbench's benchmark package: scoring, models, OCR, the runner and reports.

Importing this package is cheap: heavy libraries (torch, diffusers, easyocr,
gradio) are imported only inside the adapters that need them.
"""

__version__ = "0.1.0"
