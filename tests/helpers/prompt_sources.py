"""REAL, TEMPLATES, TEXTS, write_default: what several test modules share.

Here rather than in one of them: a test module never imports another.
"""

from __future__ import annotations

from pathlib import Path

TEMPLATES = """template_id,prompt_type,template
s1,simple,"A sign that says ""{text}""."
s2,simple,"A mug printed with ""{text}""."
c1,complex,"A rainy street at night, a neon sign reading ""{text}"" above a noodle bar."
"""
TEXTS = """text_id,text,kind
w1,house,word
w2,garden,word
w3,kerfuffle,rare
p1,Fresh bread daily,phrase
s1,We open at nine every day.,sentence
g1,Blopjero,gibberish
n1,50% OFF,numeric
x1,None,word
"""
REAL = """prompt_id,group,subgroup,prompt,text
r1,Advertisements,Billboard,"A billboard with ""Drive Electric"" in white letters.",Drive Electric
r2,Posters,Concert,"A concert poster titled ""Night Owls"".",Night Owls
r3,Posters,,"A poster saying ""Read More"".",Read More
"""


def write_default(
    folder: Path, templates: str = TEMPLATES, texts: str = TEXTS, real: str = REAL
) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "templates.csv").write_text(templates, encoding="utf-8")
    (folder / "texts.csv").write_text(texts, encoding="utf-8")
    (folder / "real_world.csv").write_text(real, encoding="utf-8")
    return folder
