"""Find TrueType fonts that are always available offline.

matplotlib ships the DejaVu family as package data, so these fonts exist on any
machine where glyphbench is installed; Debian/system fonts are added when present.
"""

from __future__ import annotations

import functools
from pathlib import Path

SYSTEM_FONT_DIRS = ("/usr/share/fonts", "/usr/local/share/fonts")


@functools.cache
def bundled_fonts() -> tuple[Path, ...]:
    """DejaVu TTFs from matplotlib's package data, sorted by file name."""
    import matplotlib

    folder = Path(matplotlib.get_data_path()) / "fonts" / "ttf"
    return tuple(sorted(p for p in folder.glob("DejaVu*.ttf")))


@functools.cache
def system_fonts() -> tuple[Path, ...]:
    """TTF/OTF files under the usual system font folders, sorted by path."""
    found: list[Path] = []
    for root in SYSTEM_FONT_DIRS:
        base = Path(root)
        if base.is_dir():
            found.extend(p for p in base.rglob("*") if p.suffix.lower() in (".ttf", ".otf"))
    return tuple(sorted(found))


def available_fonts(include_system: bool = True) -> tuple[Path, ...]:
    """Bundled fonts first, then system fonts not already listed (by file name)."""
    fonts = list(bundled_fonts())
    if include_system:
        names = {p.name for p in fonts}
        fonts.extend(p for p in system_fonts() if p.name not in names)
    return tuple(fonts)


def font_by_name(name: str) -> Path:
    """Path of the font whose file stem is ``name`` (e.g. "DejaVuSans-Bold")."""
    for path in available_fonts():
        if path.stem == name:
            return path
    known = ", ".join(p.stem for p in available_fonts())
    raise LookupError(f"no font named {name!r}; available: {known}")


#: CJK faces the controls may draw Chinese with, in order of preference:
#: (font file name, face name inside the collection). Debian: fonts-noto-cjk, fonts-wqy-microhei.
CJK_FACES = (
    ("NotoSansCJK-Regular.ttc", "Noto Sans CJK SC"),
    ("NotoSansCJK-Bold.ttc", "Noto Sans CJK SC"),
    ("NotoSerifCJK-Regular.ttc", "Noto Serif CJK SC"),
    ("NotoSerifCJK-Bold.ttc", "Noto Serif CJK SC"),
    ("wqy-microhei.ttc", "WenQuanYi Micro Hei"),
    ("wqy-zenhei.ttc", "WenQuanYi Zen Hei"),
)

MISSING_CJK = (
    "no CJK font found (needed to draw Chinese); apt-get install fonts-noto-cjk fonts-wqy-microhei"
)


def _collection_index(path: Path, face: str) -> int | None:
    """The index of ``face`` inside a font collection (.ttc), or None when absent."""
    from PIL import ImageFont

    for index in range(32):
        try:
            family = ImageFont.truetype(str(path), 12, index=index).getname()[0]
        except OSError:  # past the last face of the collection
            return None
        if family == face:
            return index
    return None


@functools.cache
def cjk_fonts() -> tuple[tuple[Path, int], ...]:
    """(file, face index) of every face of :data:`CJK_FACES` installed here, in that order.

    Looked up under the system font folders (collections included); empty when
    none is installed.
    """
    by_name: dict[str, Path] = {}
    for root in SYSTEM_FONT_DIRS:
        base = Path(root)
        if base.is_dir():
            for path in sorted(base.rglob("*.tt[cf]")):
                by_name.setdefault(path.name, path)
    found: list[tuple[Path, int]] = []
    for name, face in CJK_FACES:
        font_file = by_name.get(name)
        if font_file is None:
            continue
        index = _collection_index(font_file, face)
        if index is not None:
            found.append((font_file, index))
    return tuple(found)
