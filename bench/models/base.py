"""The model adapter interface: one class that turns prompts and seeds into images.

Adapters are ``models`` plug-ins of :data:`glyphbench.core.registry.PLUGINS`, created from a
spec string: ``diffusers:<hub id or local path>[@revision]`` or ``control:render``,
``control:typo?rate=0.2``, ``control:blank``. Heavy imports (torch, diffusers)
happen inside the adapter, never at module import.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd
    from PIL import Image

    from glyphbench.models.layout import SuiteLayout
    from glyphbench.models.spend import SpendBudget

#: ``image.info`` key where an adapter that pays per image puts what the image cost (USD).
COST_KEY = "glyphbench.cost_usd"
#: ``Image.info`` key of the text a control model drew (the results' ``drawn_text``), so a
#: report reads what was drawn instead of making the control again.
DRAWN_KEY = "glyphbench.drawn_text"


@dataclass(frozen=True)
class ImageRequest:
    """One image to make. ``seed`` is the image's own seed (see glyphbench.core.seeds)."""

    prompt: str
    text: str  # the text the prompt asks for; control models draw it, real models ignore it
    seed: int


class ImageNotMade(Exception):
    """Returned by ``generate()`` in place of one image it could not make (not raised).

    The other images of the batch are kept; this one's row gets ``row_error`` as its
    error (``Refused: ...`` for a content-policy refusal) and ``cost_usd`` as its cost.

    >>> ImageNotMade("Refused: openai: moderation_blocked", cost_usd=0.0).row_error
    'Refused: openai: moderation_blocked'
    """

    def __init__(self, row_error: str, *, cost_usd: float = float("nan")) -> None:
        super().__init__(row_error)
        self.row_error = row_error
        self.cost_usd = cost_usd


class NotAttempted(ImageNotMade):
    """An image the adapter did not try (a spending cap was reached): it gets no row.

    A later run with a higher cap makes it, as it makes any missing row.
    """


@dataclass(frozen=True)
class RunContext:
    """What a run tells an adapter before it loads (:meth:`ModelAdapter.bind_run`).

    ``price_usd`` is the configured price of one image of this model (None: unknown),
    ``budget`` the run's spending cap shared by every paid model (None: no cap), and
    ``cache_dir`` where paid responses are kept so a re-run never pays twice.
    ``expected`` lists every image of the run, all shards, as (prompt_id, run seed,
    sample index), in job order (the ``images`` kind matches its files to them).
    """

    root: Path
    run_id: str
    price_usd: float | None = None
    budget: SpendBudget | None = None
    cache_dir: Path | None = None
    expected: tuple[tuple[str, int, int], ...] = ()
    #: The run's suite spec (None: no suite), how its benchmark names image files, and
    #: each prompt id's (subset, benchmark id): the ``images`` kind reads such a folder.
    suite: str | None = None
    suite_layout: SuiteLayout | None = None
    benchmark_ids: Mapping[str, tuple[str, str]] = field(default_factory=dict)


class ModelAdapter(ABC):
    """Generates one image per request."""

    #: The spec string this adapter was created from, e.g. "control:render".
    spec: str = ""
    #: True for control models (render/typo/blank), labelled as controls everywhere.
    is_control: bool = False

    @abstractmethod
    def generate(self, requests: Sequence[ImageRequest]) -> list[Image.Image]:
        """Return one RGB image per request, in order. One call is one batch.

        An adapter that calls a service may put an :class:`ImageNotMade` in place of
        an image it could not make (a refusal, a request that kept failing).
        """

    #: True for adapters that pay per image (hosted APIs): rows get a ``cost_usd``.
    billable: bool = False

    def check_prompts(self, frame: pd.DataFrame, source: str) -> None:  # noqa: B027 - optional hook
        """Refuse, before a run writes anything, prompts this adapter cannot make images of
        (an :class:`~glyphbench.core.errors.InputError` naming ``source`` and the prompt)."""

    def bind_run(self, context: RunContext) -> None:  # noqa: B027 - optional hook
        """Learn the run's folder, price, spending cap and cache (hosted APIs use them)."""

    def input_summary(self) -> str:
        """One line the run prints after loading (the ``images`` kind: what it found); or ""."""
        return ""

    def describe(self) -> dict[str, Any]:
        """Facts recorded in run.json: resolved settings, revision, dtype, ..."""
        return {"spec": self.spec, "is_control": self.is_control}

    def weights_check(self) -> dict[str, str | None]:
        """Where the weights would come from and why they cannot, found without loading them
        (``run --dry-run``): ``{"source": ..., "problem": None or one line}``.

        Adapters without weights (controls, files, hosted APIs) have nothing to check.
        """
        return {"source": None, "problem": None}

    def local_weights(self) -> list[Path]:
        """The local files or folders the weights load from; none for a hub id, an API or a
        control. A resume is refused when their files changed since the run started."""
        return []

    def planned_size(self) -> tuple[int, int] | None:
        """(width, height) of the images it will make, when known before loading (the run
        then starts its image writer processes while the model loads); None: unknown."""
        return None

    def close(self) -> None:  # noqa: B027 - optional hook
        """Free memory (GPU) before the next model loads."""
