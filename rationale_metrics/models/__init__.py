"""Explainers on Transformers checkpoints: the `models` extra (torch, transformers, captum).

Nothing here imports torch until a model is loaded or trained, so `import rationale_metrics`
and its command line work without the extra; `torch_available()` says whether it is there.
"""

from __future__ import annotations

import importlib.util

from rationale_metrics.models.checkpoint import model_labels
from rationale_metrics.models.classifier import (
    DEFAULT_MEMORY_BUDGET_MB,
    Encoded,
    ModelInput,
    TransformersClassifier,
    load_classifier,
)
from rationale_metrics.models.explainers import EXPLAINER_OPTIONS, MODEL_EXPLAINERS
from rationale_metrics.models.tiny import train_tiny_model

__all__ = [
    "DEFAULT_MEMORY_BUDGET_MB",
    "EXPLAINER_OPTIONS",
    "MODEL_EXPLAINERS",
    "Encoded",
    "ModelInput",
    "TransformersClassifier",
    "load_classifier",
    "model_labels",
    "torch_available",
    "train_tiny_model",
]


def torch_available() -> bool:
    return all(
        importlib.util.find_spec(name) is not None for name in ("torch", "transformers", "captum")
    )
