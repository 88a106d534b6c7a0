"""``taesd:<folder>``: the Tiny AutoEncoder family (TAESD) from its ``.pth`` state dicts.

TAESD models (madebyollin/taesd, MIT) are small distilled stand-ins for the VAEs of
SD 1.x/2.x (``taesd``), SDXL (``taesdxl``), SD3 (``taesd3``), FLUX.1 (``taef1``),
FLUX.2 (``taef2``) and Sana's DC-AE (``taesana``). Each ships as a pair of plain
PyTorch state dicts, ``<name>_encoder.pth`` and ``<name>_decoder.pth``, whose keys are
positions in an ``nn.Sequential``. diffusers' ``AutoencoderTiny`` loads only some of
them (it has no slot for taef2's mid-block group norms), so the model is built here.

Architecture (facts of the published files; the code is ours):

* a *block* is three 3x3 convolutions with ReLU between them, added to the input
  (identity skip) and passed through a final ReLU; in taef2's low-resolution blocks
  (the encoder's last three, the decoder's first three) the input first gets a
  residual 1x1 conv (64 -> 256, no bias) -> GroupNorm(4 groups) -> ReLU -> 1x1 conv
  (256 -> 64, no bias) added to it;
* f8 encoder: conv 3->64, block, then three times (3x3 stride-2 conv without bias,
  three blocks), conv 64->latent channels;
* f8 decoder: soft clamp ``3 tanh(z / 3)``, conv latent->64, ReLU, then three times
  (three blocks, nearest 2x upsampling, 3x3 conv without bias), block, conv 64->3;
* f32 (taesana): encoder starts with two stride-2 convs (3->32->64, ReLU after each)
  and has four downsampling groups; the decoder's groups are 256, 128, 64, 64, 64 wide
  with five upsamplings;
* pixels enter the encoder in [0, 1] and leave the decoder clamped to [0, 1];
  latents are passed between them unscaled (a round trip needs no latent scaling).

Latent channels: 4 (taesd, taesdxl), 16 (taesd3, taef1), 32 (taef2, taesana). The
variant is detected from the state dicts (first conv width, latent channels, presence
of the group-norm keys), so a renamed pair loads too; ``?variant=NAME`` picks the pair
``NAME_encoder.pth``/``NAME_decoder.pth`` when a folder holds several.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import Field

from glyphbench.core.errors import InputError
from glyphbench.core.registry import Spec, missing_modules, register
from glyphbench.vae_eval.codecs.protocol import TensorCodec, TensorOptions

if TYPE_CHECKING:
    from torch import nn

ENCODER_SUFFIX = "_encoder.pth"
DECODER_SUFFIX = "_decoder.pth"
#: Width of every f8 block, and of the group-norm expansion in taef2's blocks.
WIDTH = 64
NORM_EXPANSION, NORM_GROUPS = 4, 4
#: Soft latent clamp of the decoder: z -> LATENT_CLAMP * tanh(z / LATENT_CLAMP).
LATENT_CLAMP = 3.0
#: Decoder group widths of the f32 layout (taesana), from low to high resolution.
F32_DECODER_WIDTHS = (256, 128, 64, 64, 64)


@dataclass(frozen=True)
class Layout:
    """What distinguishes the TAESD variants."""

    latent_channels: int
    grid: int = 8  # pixels per latent cell: 8, or 32 for taesana
    midblock_norm: bool = False  # taef2's group-norm branch in the low-resolution blocks

    @property
    def family(self) -> str:
        """The published variants this layout fits.

        >>> Layout(32, midblock_norm=True).family
        'taef2'
        >>> Layout(4).family
        'taesd/taesdxl'
        """
        if self.grid == 32:
            return "taesana"
        if self.midblock_norm:
            return "taef2"
        return {4: "taesd/taesdxl", 16: "taesd3/taef1"}.get(self.latent_channels, "taesd-like")


#: The layouts of the published variants, by file-name prefix.
KNOWN_LAYOUTS = {
    "taesd": Layout(4),
    "taesdxl": Layout(4),
    "taesd3": Layout(16),
    "taef1": Layout(16),
    "taef2": Layout(32, midblock_norm=True),
    "taesana": Layout(32, grid=32),
}


def detect_layout(encoder: dict[str, Any], decoder: dict[str, Any]) -> Layout:
    """The layout of a pair of state dicts (key names and tensor shapes only).

    Raises ``ValueError`` when the two halves disagree or do not look like TAESD (keys or
    shapes of another model, values that are not tensors).
    """
    try:
        return _layout(encoder, decoder)
    except (KeyError, AttributeError, IndexError, TypeError) as exc:
        raise ValueError(f"not a TAESD state dict ({type(exc).__name__}: {exc})") from None


def _layout(encoder: dict[str, Any], decoder: dict[str, Any]) -> Layout:
    if "0.weight" not in encoder or "1.weight" not in decoder:
        raise ValueError("not a TAESD state dict (no '0.weight' / decoder '1.weight')")
    grid = 32 if tuple(encoder["0.weight"].shape[:2]) == (32, 3) else 8
    last = max((int(key.split(".")[0]) for key in encoder), default=0)
    latent = int(encoder[f"{last}.weight"].shape[0])
    decoder_in = int(decoder["1.weight"].shape[1])
    if latent != decoder_in:
        raise ValueError(f"encoder makes {latent} latent channels, decoder takes {decoder_in}")
    norms = [any(".pool." in key for key in half) for half in (encoder, decoder)]
    if norms[0] != norms[1]:
        raise ValueError("only one half has the mid-block group norms")
    return Layout(latent, grid, norms[0])


def build(layout: Layout) -> tuple[nn.Sequential, nn.Sequential]:
    """Encoder and decoder of ``layout`` with fresh (random) weights."""
    if layout.grid == 32:
        return _f32_encoder(layout.latent_channels), _f32_decoder(layout.latent_channels)
    return _f8_encoder(layout), _f8_decoder(layout)


def _conv(n_in: int, n_out: int, *, stride: int = 1, bias: bool = True) -> nn.Conv2d:
    from torch import nn

    return nn.Conv2d(n_in, n_out, 3, stride=stride, padding=1, bias=bias)


@functools.cache
def _module_classes() -> tuple[type[nn.Module], type[nn.Module]]:
    """The block and the soft clamp (defined on first use: torch loads only for a TAESD codec)."""
    from torch import nn

    class Block(nn.Module):
        """Three 3x3 convs with ReLUs + identity skip + ReLU; optional group-norm branch."""

        def __init__(self, width: int, midblock_norm: bool = False) -> None:
            super().__init__()
            self.conv = nn.Sequential(
                _conv(width, width), nn.ReLU(), _conv(width, width), nn.ReLU(), _conv(width, width)
            )
            self.skip = nn.Identity()
            self.fuse = nn.ReLU()
            self.pool: nn.Module | None = None
            if midblock_norm:
                wide = width * NORM_EXPANSION
                self.pool = nn.Sequential(
                    nn.Conv2d(width, wide, 1, bias=False),
                    nn.GroupNorm(NORM_GROUPS, wide),
                    nn.ReLU(),
                    nn.Conv2d(wide, width, 1, bias=False),
                )

        def forward(self, x: Any) -> Any:
            if self.pool is not None:
                x = x + self.pool(x)
            return self.fuse(self.conv(x) + self.skip(x))

    class SoftClamp(nn.Module):
        """z -> LATENT_CLAMP * tanh(z / LATENT_CLAMP): keeps latents in (-3, 3), smoothly."""

        def forward(self, z: Any) -> Any:
            return (z / LATENT_CLAMP).tanh() * LATENT_CLAMP

    return Block, SoftClamp


def block(width: int, midblock_norm: bool = False) -> nn.Module:
    return _module_classes()[0](width, midblock_norm)


def soft_clamp() -> nn.Module:
    return _module_classes()[1]()


def _f8_encoder(layout: Layout) -> nn.Sequential:
    from torch import nn

    layers: list[nn.Module] = [_conv(3, WIDTH), block(WIDTH)]
    for group in range(3):
        norm = layout.midblock_norm and group == 2  # the lowest resolution only
        layers.append(_conv(WIDTH, WIDTH, stride=2, bias=False))
        layers.extend(block(WIDTH, norm) for _ in range(3))
    layers.append(_conv(WIDTH, layout.latent_channels))
    return nn.Sequential(*layers)


def _f8_decoder(layout: Layout) -> nn.Sequential:
    from torch import nn

    layers: list[nn.Module] = [soft_clamp(), _conv(layout.latent_channels, WIDTH), nn.ReLU()]
    for group in range(3):
        norm = layout.midblock_norm and group == 0  # the lowest resolution only
        layers.extend(block(WIDTH, norm) for _ in range(3))
        layers += [nn.Upsample(scale_factor=2), _conv(WIDTH, WIDTH, bias=False)]
    layers += [block(WIDTH), _conv(WIDTH, 3)]
    return nn.Sequential(*layers)


def _f32_encoder(latent_channels: int) -> nn.Sequential:
    from torch import nn

    layers: list[nn.Module] = [
        _conv(3, 32, stride=2),
        nn.ReLU(),
        _conv(32, WIDTH, stride=2),
        nn.ReLU(),
        block(WIDTH),
    ]
    for _ in range(3):
        layers.append(_conv(WIDTH, WIDTH, stride=2, bias=False))
        layers.extend(block(WIDTH) for _ in range(3))
    layers.append(_conv(WIDTH, latent_channels))
    return nn.Sequential(*layers)


def _f32_decoder(latent_channels: int) -> nn.Sequential:
    from torch import nn

    widths = F32_DECODER_WIDTHS
    layers: list[nn.Module] = [soft_clamp(), _conv(latent_channels, widths[0]), nn.ReLU()]
    for width, narrower in zip(widths, (*widths[1:], WIDTH), strict=True):
        layers.extend(block(width) for _ in range(3))
        layers += [nn.Upsample(scale_factor=2), _conv(width, narrower, bias=False)]
    layers += [block(WIDTH), _conv(WIDTH, 3)]
    return nn.Sequential(*layers)


# --------------------------------------------------------------------------- files


def find_pair(target: str, variant: str | None) -> tuple[str, Path, Path]:
    """(name, encoder file, decoder file) for ``taesd:<target>``; InputError when absent.

    ``target`` is a folder (holding one pair, or several and ``variant`` names one) or
    the path of an ``*_encoder.pth`` file.
    """
    path = Path(target).expanduser()
    if path.is_file() and path.name.endswith(ENCODER_SUFFIX):
        path, variant = path.parent, path.name.removesuffix(ENCODER_SUFFIX)
    if not path.is_dir():
        raise InputError(path, "no such folder (taesd:<folder with NAME_encoder.pth and ...>)")
    pairs = sorted(
        encoder.name.removesuffix(ENCODER_SUFFIX)
        for encoder in path.glob(f"*{ENCODER_SUFFIX}")
        if (path / encoder.name.replace(ENCODER_SUFFIX, DECODER_SUFFIX)).is_file()
    )
    if variant is not None and variant not in pairs:
        found = ", ".join(pairs) or "none"
        raise InputError(
            path,
            f"no {variant}{ENCODER_SUFFIX} + {variant}{DECODER_SUFFIX} here; pairs found: {found}",
        )
    if variant is None and len(pairs) != 1:
        problem = (
            "several encoder/decoder pairs; pick one with ?variant="
            if pairs
            else (f"no *{ENCODER_SUFFIX} with a matching *{DECODER_SUFFIX}")
        )
        raise InputError(path, f"{problem} ({', '.join(pairs) or 'none found'})")
    name = variant or pairs[0]
    return name, path / f"{name}{ENCODER_SUFFIX}", path / f"{name}{DECODER_SUFFIX}"


def load_state(path: Path) -> dict[str, Any]:
    """A state dict saved with ``torch.save`` (loaded as plain tensors, never pickled code)."""
    import torch

    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:
        # torch's own message can be a bare number (an unpickling opcode): name the kind
        raise InputError(
            path,
            f"cannot read this state dict ({type(exc).__name__}; expected a file saved with "
            "torch.save, as the TAESD repository ships them)",
        ) from None
    if not isinstance(state, dict):
        raise InputError(path, "not a state dict (expected a mapping of names to tensors)")
    return state


@dataclass
class Pair:
    """An encoder/decoder pair read from disk, with the layout their tensors imply."""

    name: str
    encoder_path: Path
    decoder_path: Path
    encoder_state: dict[str, Any]
    decoder_state: dict[str, Any]
    layout: Layout


def load_pair(target: str, variant: str | None) -> Pair:
    """Read the pair ``taesd:<target>`` names and detect its layout; an
    :class:`~glyphbench.core.errors.InputError` when a file cannot be read or the two
    halves are not one model (an encoder of one family copied beside another's decoder).
    """
    name, encoder_path, decoder_path = find_pair(target, variant)
    encoder_state, decoder_state = load_state(encoder_path), load_state(decoder_path)
    try:
        layout = detect_layout(encoder_state, decoder_state)
    except ValueError as exc:
        raise InputError(
            encoder_path.parent,
            f"{encoder_path.name} and {decoder_path.name} are not one TAESD pair: {exc}",
        ) from None
    return Pair(name, encoder_path, decoder_path, encoder_state, decoder_state, layout)


# --------------------------------------------------------------------------- codec


class TaesdOptions(TensorOptions):
    """Options of the ``taesd:`` codec."""

    variant: str | None = Field(
        default=None, description="file prefix of the pair to load (taesd, taef2, ...)"
    )


class TaesdCodec(TensorCodec):
    """A TAESD-family encoder/decoder pair as a codec (deterministic, no latent scaling)."""

    def __init__(self, spec: Spec, options: TaesdOptions | None = None) -> None:
        options = options or TaesdOptions()
        super().__init__(options)
        self.name = spec.text
        pair = load_pair(spec.target, options.variant)
        self.variant, self.layout = pair.name, pair.layout
        encoder_path, decoder_path = pair.encoder_path, pair.decoder_path
        encoder_state, decoder_state = pair.encoder_state, pair.decoder_state
        self.source = str(encoder_path.parent)
        self.encoder, self.decoder = build(self.layout)
        for module, state, path in (
            (self.encoder, encoder_state, encoder_path),
            (self.decoder, decoder_state, decoder_path),
        ):
            try:
                module.load_state_dict(state)
            except RuntimeError as exc:
                problem = str(exc).splitlines()[0]
                raise InputError(
                    path, f"does not fit the {self.layout.family} layout: {problem}"
                ) from None
            module.to(self.device, self.dtype).eval()
        self.multiple = self.layout.grid
        self.parameters = sum(
            p.numel() for half in (self.encoder, self.decoder) for p in half.parameters()
        )

    def encode(self, x: Any) -> Any:
        return self.encoder((x + 1) / 2)  # TAESD encoders take pixels in [0, 1]

    def decode(self, latents: Any) -> Any:
        return self.decoder(latents).clamp(0, 1) * 2 - 1

    def describe(self) -> str:
        layout = self.layout
        return (
            f"TAESD {self.variant} ({layout.family} layout: {layout.latent_channels} latent "
            f"channels, f{layout.grid}{', mid-block group norms' if layout.midblock_norm else ''}; "
            f"{self.parameters / 1e6:.2f} M parameters) from {self.source}; "
            f"{self.dtype_name()} on {self.device}{self.tiling_text()}; a distilled "
            "approximation, not the full VAE it stands in for"
        )


@register(
    "codecs",
    "taesd",
    options=TaesdOptions,
    target="required",
    usage="taesd:<folder with NAME_encoder.pth + NAME_decoder.pth>",
    summary="A TAESD-family tiny autoencoder (taesd, taesdxl, taesd3, taef1, taef2, taesana).",
    missing=lambda: missing_modules("torch"),
)
def _taesd(spec: Spec, options: TaesdOptions) -> TaesdCodec:
    return TaesdCodec(spec, options)
