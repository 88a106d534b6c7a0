"""Hosted image APIs as one ``models`` plug-in: ``api:<provider>/<model>``.

The plug-in's options depend on the provider (the part of the target before
``/``): ``api:openai/gpt-image-1?quality=medium`` is checked against the OpenAI
options, ``api:bfl/flux-pro-1.1?width=1024`` against BFL's. Providers are the
``*_provider`` modules of this package (each registers one
:class:`~glyphbench.models.api.core.Provider` record in the registry's ``providers`` kind,
which imports this package's modules when a provider is first looked up); none imports
its client library until a model loads. See docs/apis.md.

>>> from glyphbench.core.registry import PLUGINS
>>> PLUGINS.resolve("models", "api:openai/gpt-image-1?quality=low").options.quality
'low'
>>> try:
...     PLUGINS.resolve("models", "api:nope/x")
... except Exception as exc:
...     print(exc)
unknown api provider 'nope' in 'api:nope/x'; known: bfl, google, http, openai
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from glyphbench.core.registry import PLUGINS, Options, Plugin, Spec
from glyphbench.models.api.core import PROVIDERS, ApiModel, ApiOptions, split_target

__all__ = ["PROVIDERS", "ApiModel", "ApiOptions", "ApiPlugin"]


@dataclass(frozen=True)
class ApiPlugin(Plugin[ApiModel]):
    """The ``api`` plug-in: its options class is the provider's (chosen by the target)."""

    def options_for(self, target: str = "") -> type[Options]:
        if not target:
            return ApiOptions
        return split_target(target)[0].options

    def describe(self) -> dict[str, Any]:
        info = super().describe()
        info.pop("options", None)
        info["targets"] = {
            _usage(name): Plugin("models", name, _no_factory, provider.options).describe()[
                "options"
            ]
            for name, provider in sorted(PROVIDERS.items())
        }
        missing = {name: p.unavailable() for name, p in sorted(PROVIDERS.items())}
        info["providers"] = {
            name: {"summary": p.summary, "key_env": list(p.key_env), "unavailable": missing[name]}
            for name, p in sorted(PROVIDERS.items())
        }
        return info


def _usage(name: str) -> str:
    return name if not PROVIDERS[name].model_required else f"{name}/<model>"


def _no_factory(spec: Spec, options: Any) -> Any:  # pragma: no cover - listing only
    raise NotImplementedError


def create_api_model(spec: Spec, options: ApiOptions) -> ApiModel:
    provider, _ = split_target(spec.target)
    return ApiModel(spec, provider, options)


PLUGINS.add(
    ApiPlugin(
        "models",
        "api",
        create_api_model,
        ApiOptions,
        summary="A hosted image API: openai, bfl, google, or any JSON API through http "
        "(keys from environment variables; cached, capped, retried; see docs/apis.md).",
        target="required",
        module=__name__,
        usage="api:PROVIDER/MODEL  e.g. api:openai/gpt-image-1, api:bfl/flux-pro-1.1, "
        "api:google/gemini-2.5-flash-image, api:http?url=...",
    )
)
