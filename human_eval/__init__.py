"""Human rating study over benchmark runs (see docs/human_eval.md).

Modules: ``sampling`` (stratified sample, inclusion probabilities, gold items),
``study`` (the self-contained study folder), ``store`` (SQLite ratings,
balanced claims), ``service`` (the rating flow), ``app`` (Gradio), ``guard`` (what the
app lets in), ``serve`` (its server), ``stats``
(agreement and metric-human alignment), ``report`` (export and HTML), ``cli``.
Nothing heavy is imported here: ``from glyphbench.human_eval.stats import agreement``.
"""
