"""Explainers of a Transformers classifier, every one batched across instances.

Each takes the classifier, the encoded inputs, the class each is explained towards, one
seeded generator per input, and its options; it returns one score per explained word.
The gradient methods are Captum's (Saliency, InputXGradient, IntegratedGradients) on the
word embeddings: well-kept implementations, run on padded batches. Their scores are first
per piece (the gradient summed over the embedding's dimensions) and each word's score is the
exact sum of its pieces'. Occlusion, LIME and kernel SHAP act on whole words: their erased
inputs are the words' pieces deleted, all of a batch's in few forward passes.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from rationale_metrics.models.classifier import (
    Encoded,
    TransformersClassifier,
    instance_batches,
    torch_imported,
)

IG_BASELINES = ("zero", "pad", "mask")


def words_of_pieces(piece_scores: np.ndarray, enc: Encoded) -> np.ndarray:
    """Each word's score: the sum of its pieces' scores (special tokens and the query
    left out)."""
    pieces = np.asarray(piece_scores, dtype=np.float64)[: len(enc.word)]
    words = enc.word >= 0
    return np.bincount(enc.word[words], weights=pieces[words], minlength=enc.n_words)


# ---------------------------------------------------------------- gradients (Captum)


def _probability_forward(model: TransformersClassifier):
    torch = torch_imported()

    def forward(embeds, mask, types):
        logits = model.model(inputs_embeds=embeds, **model.forward_kwargs(mask, types)).logits
        return torch.softmax(logits, dim=-1)

    return forward


def _one_by_one(encoded: Sequence[Encoded]):
    """Attention weights are taken one input at a time: the rollout's products would round
    differently with a batch's padding."""
    return ([i] for i in range(len(encoded)))


def _embedded_batches(model: TransformersClassifier, encoded: Sequence[Encoded], *, rows: int = 1):
    """The inputs of each group of `instance_batches` in as few passes as the memory budget
    allows (`rows` rows of work per input, as integrated gradients' steps): the gradients of
    a batch's inputs are independent, and one backward gives them all. The passes depend on
    the group alone, so an input's scores do not change with the chunk it is explained in."""
    for group in instance_batches(len(encoded)):
        lengths = [len(encoded[i].ids) for i in group]
        for part in model.batches(lengths, gradients=True, factor=rows):
            batch = [group[j] for j in part]
            ids, mask, types = model.padded([(encoded[i].ids, encoded[i].type_ids) for i in batch])
            embeds = model.model.get_input_embeddings()(ids).detach()
            yield batch, ids, embeds, mask, types


def _gradient_pieces(model, encoded, targets, *, times_input: bool) -> list[np.ndarray]:
    from captum.attr import InputXGradient, Saliency

    forward = _probability_forward(model)
    out: list[np.ndarray] = [np.zeros(0)] * len(encoded)
    for batch, _, embeds, mask, types in _embedded_batches(model, encoded):
        target = [targets[i] for i in batch]
        if times_input:
            attributions = InputXGradient(forward).attribute(
                embeds, target=target, additional_forward_args=(mask, types)
            )
        else:
            attributions = Saliency(forward).attribute(
                embeds, target=target, abs=False, additional_forward_args=(mask, types)
            )
        summed = attributions.sum(dim=-1).detach().double().cpu().numpy()
        for row, i in enumerate(batch):
            out[i] = summed[row, : len(encoded[i].ids)]
    return out


def gradient_pieces(model, encoded, targets, rngs=None) -> list[np.ndarray]:
    """d p[target] / d embedding, summed over the embedding's dimensions, per piece."""
    return _gradient_pieces(model, encoded, targets, times_input=False)


def gradient_x_input_pieces(model, encoded, targets, rngs=None) -> list[np.ndarray]:
    """gradient x embedding, summed over the embedding's dimensions, per piece."""
    return _gradient_pieces(model, encoded, targets, times_input=True)


def _baseline_embeddings(model, ids, embeds, encoded, batch, baseline: str):
    """The input's embeddings with every explained word's pieces replaced by the baseline
    (zeros, or the pad or mask token's embedding); special tokens and the query stay."""
    torch = torch_imported()
    if baseline not in IG_BASELINES:
        raise ValueError(f"integrated_gradients baseline {baseline!r}: choose from {IG_BASELINES}")
    explained = torch.zeros(ids.shape, dtype=torch.bool, device=ids.device)
    for row, i in enumerate(batch):
        words = torch.from_numpy(encoded[i].word >= 0)
        explained[row, : len(words)] = words.to(ids.device)
    if baseline == "zero":
        replacement = torch.zeros_like(embeds)
    else:
        token = model.tokenizer.pad_token_id if baseline == "pad" else model.tokenizer.mask_token_id
        if token is None:
            raise ValueError(f"integrated_gradients baseline {baseline!r}: the tokenizer has none")
        replacement = model.model.get_input_embeddings()(torch.full_like(ids, token)).detach()
    return torch.where(explained.unsqueeze(-1), replacement, embeds)


def integrated_gradients_pieces(
    model, encoded, targets, rngs=None, *, steps: int = 50, baseline: str = "zero", deltas=None
) -> list[np.ndarray]:
    """Integrated gradients of p[target] along the straight line from the baseline to the
    embeddings (Gauss-Legendre, `steps` points), summed over dimensions, per piece. The
    pieces outside the explained words equal their baseline and get exactly 0. When
    `deltas` is a list, each input's completeness gap is appended to it."""
    from captum.attr import IntegratedGradients

    if steps < 1:
        raise ValueError("integrated_gradients steps must be at least 1")
    forward = _probability_forward(model)
    out: list[np.ndarray] = [np.zeros(0)] * len(encoded)
    gaps = {}
    for batch, ids, embeds, mask, types in _embedded_batches(model, encoded, rows=steps):
        base = _baseline_embeddings(model, ids, embeds, encoded, batch, baseline)
        longest = max(len(encoded[i].ids) for i in batch)
        attributions, delta = IntegratedGradients(forward).attribute(
            embeds,
            baselines=base,
            target=[targets[i] for i in batch],
            additional_forward_args=(mask, types),
            n_steps=steps,
            internal_batch_size=model.rows_per_pass(longest, gradients=True),
            return_convergence_delta=True,
        )
        summed = attributions.sum(dim=-1).detach().double().cpu().numpy()
        for row, i in enumerate(batch):
            out[i] = summed[row, : len(encoded[i].ids)]
            gaps[i] = float(delta[row])
    if deltas is not None:
        deltas.extend(gaps[i] for i in range(len(encoded)))
    return out


# ---------------------------------------------------------------- attention


def _attentions(model, encoded):
    torch = torch_imported()
    with torch.inference_mode():
        for batch in _one_by_one(encoded):
            ids, mask, types = model.padded([(encoded[i].ids, encoded[i].type_ids) for i in batch])
            outputs = model.model(
                input_ids=ids, output_attentions=True, **model.forward_kwargs(mask, types)
            )
            if not outputs.attentions or outputs.attentions[0] is None:
                raise ValueError("the model returns no attention weights to explain with")
            yield batch, [a.double() for a in outputs.attentions]


def attention_last_pieces(model, encoded, targets=None, rngs=None) -> list[np.ndarray]:
    """The last layer's attention from the first token ([CLS]) to each piece, the mean
    over heads."""
    out: list[np.ndarray] = [np.zeros(0)] * len(encoded)
    for batch, attentions in _attentions(model, encoded):
        last = attentions[-1].mean(dim=1)[:, 0, :].cpu().numpy()
        for row, i in enumerate(batch):
            out[i] = last[row, : len(encoded[i].ids)]
    return out


def _rollout(attentions, length: int) -> np.ndarray:
    """One input's rollout, on its own pieces only: the padding of the batch it came in
    would change the products' rounding."""
    eye = np.eye(length)
    rollout = eye
    for layer in attentions:
        mixed = 0.5 * layer[:, :length, :length].mean(dim=0).cpu().numpy() + 0.5 * eye
        mixed = mixed / mixed.sum(axis=-1, keepdims=True)
        rollout = mixed @ rollout
    return rollout[0]


def attention_rollout_pieces(model, encoded, targets=None, rngs=None) -> list[np.ndarray]:
    """Attention rollout (Abnar & Zuidema, 2020): per layer the head-mean attention plus the
    identity for the residual connection, rows renormalised, multiplied from the first layer
    up; the first token's row."""
    out: list[np.ndarray] = [np.zeros(0)] * len(encoded)
    for batch, attentions in _attentions(model, encoded):
        for row, i in enumerate(batch):
            out[i] = _rollout([a[row] for a in attentions], len(encoded[i].ids))
    return out


# ---------------------------------------------------------------- erasures of words


def occlusion_words(model, encoded, targets, rngs=None) -> list[np.ndarray]:
    """Leave one word out: p[target] on the whole input minus p[target] without the word."""
    keeps = [
        np.vstack([np.ones((1, e.n_words), bool), ~np.eye(e.n_words, dtype=bool)]) for e in encoded
    ]
    probabilities = model.probabilities(encoded, keeps)
    return [p[0, t] - p[1:, t] for p, t in zip(probabilities, targets, strict=True)]


def _weighted_ridge(x: np.ndarray, y: np.ndarray, weights: np.ndarray, alpha: float) -> np.ndarray:
    """Coefficients of a ridge fit with an unpenalised intercept, rows weighted."""
    total = weights.sum()
    x_mean = weights @ x / total
    y_mean = weights @ y / total
    root = np.sqrt(weights)[:, None]
    xc = (x - x_mean) * root
    yc = (y - y_mean) * root[:, 0]
    gram = xc.T @ xc + alpha * np.eye(x.shape[1])
    return np.linalg.solve(gram, xc.T @ yc)


def lime_words(
    model,
    encoded,
    targets,
    rngs,
    *,
    samples: int = 300,
    kernel_width: float = 25.0,
    alpha: float = 1.0,
) -> list[np.ndarray]:
    """LIME over word positions: the first sample keeps every word, each other one drops a
    uniformly drawn number of them; a ridge fit of p[target] on the kept words, weighted by
    an exponential kernel of the cosine distance (x 100) to the whole input."""
    if samples < 2:
        raise ValueError("lime samples must be at least 2")
    masks = []
    for enc, rng in zip(encoded, rngs, strict=True):
        d = enc.n_words
        z = np.ones((samples, d), dtype=bool)
        for row in range(1, samples):
            if d:
                z[row, rng.choice(d, size=rng.integers(1, d + 1), replace=False)] = False
        masks.append(z)
    probabilities = model.probabilities(encoded, masks)
    out = []
    for enc, z, p, t in zip(encoded, masks, probabilities, targets, strict=True):
        d = enc.n_words
        if d == 0:
            out.append(np.zeros(0))
            continue
        kept = z.sum(axis=1)
        cosine = kept / (np.sqrt(kept.clip(min=1)) * math.sqrt(d))
        distance = (1 - cosine) * 100
        weights = np.sqrt(np.exp(-(distance**2) / kernel_width**2))
        out.append(_weighted_ridge(z.astype(np.float64), p[:, t], weights, alpha))
    return out


def _shap_coalitions(d: int, samples: int, rng: np.random.Generator):
    """Coalitions and their weights: every one when 2^d - 2 <= samples (exact Shapley
    values), else sizes drawn from the Shapley kernel's distribution, weights equal."""
    if d <= 1:
        return np.zeros((0, d), dtype=bool), np.zeros(0)
    if 2**d - 2 <= samples:
        codes = np.arange(1, 2**d - 1)
        z = ((codes[:, None] >> np.arange(d)) & 1).astype(bool)
        sizes = z.sum(axis=1)
        weights = (d - 1) / (np.array([math.comb(d, int(s)) for s in sizes]) * sizes * (d - sizes))
        return z, weights
    sizes = np.arange(1, d)
    size_weights = (d - 1) / (sizes * (d - sizes))
    drawn = rng.choice(sizes, size=samples, p=size_weights / size_weights.sum())
    z = np.zeros((samples, d), dtype=bool)
    for row, size in enumerate(drawn):
        z[row, rng.choice(d, size=int(size), replace=False)] = True
    return z, np.ones(samples)


def shap_words(model, encoded, targets, rngs, *, samples: int = 300) -> list[np.ndarray]:
    """Kernel SHAP over words (Lundberg & Lee, 2017): a weighted least-squares fit of
    p[target] on coalitions of kept words, with the scores summing to p(all) - p(none)."""
    if samples < 1:
        raise ValueError("shap samples must be at least 1")
    plans = []
    keeps = []
    for enc, rng in zip(encoded, rngs, strict=True):
        z, weights = _shap_coalitions(enc.n_words, samples, rng)
        plans.append((z, weights))
        ends = np.vstack([np.ones((1, enc.n_words), bool), np.zeros((1, enc.n_words), bool)])
        keeps.append(np.vstack([ends, z]))
    probabilities = model.probabilities(encoded, keeps)
    out = []
    for enc, (z, weights), p, t in zip(encoded, plans, probabilities, targets, strict=True):
        d = enc.n_words
        full, empty = p[0, t], p[1, t]
        if d <= 1:
            out.append(np.full(d, full - empty))
            continue
        y = p[2:, t] - empty
        x = z.astype(np.float64)
        # The last word's score is what the others leave of p(all) - p(none).
        y_reduced = y - x[:, -1] * (full - empty)
        x_reduced = x[:, :-1] - x[:, -1:]
        root = np.sqrt(weights)[:, None]
        phi, *_ = np.linalg.lstsq(x_reduced * root, y_reduced * root[:, 0], rcond=None)
        out.append(np.append(phi, (full - empty) - phi.sum()))
    return out


# ---------------------------------------------------------------- the registry


@dataclass(frozen=True)
class ModelExplainer:
    name: str
    run: Callable
    per_piece: bool
    options: dict = field(default_factory=dict)
    seeded: bool = False

    def __call__(self, model, encoded, targets, rngs, **options) -> list[np.ndarray]:
        unknown = sorted(set(options) - set(self.options))
        if unknown:
            allowed = ", ".join(sorted(self.options)) or "none"
            raise ValueError(
                f"explainer {self.name}: unknown option {unknown[0]!r} (takes {allowed})"
            )
        scores = self.run(model, encoded, targets, rngs, **options)
        if self.per_piece:
            scores = [words_of_pieces(s, e) for s, e in zip(scores, encoded, strict=True)]
        return [np.asarray(s, dtype=np.float64) for s in scores]


MODEL_EXPLAINERS: dict[str, ModelExplainer] = {
    e.name: e
    for e in [
        ModelExplainer("gradient", gradient_pieces, per_piece=True),
        ModelExplainer("gradient_x_input", gradient_x_input_pieces, per_piece=True),
        ModelExplainer(
            "integrated_gradients",
            integrated_gradients_pieces,
            per_piece=True,
            options={"steps": 50, "baseline": "zero"},
        ),
        ModelExplainer("attention_last", attention_last_pieces, per_piece=True),
        ModelExplainer("attention_rollout", attention_rollout_pieces, per_piece=True),
        ModelExplainer("occlusion", occlusion_words, per_piece=False),
        ModelExplainer(
            "lime",
            lime_words,
            per_piece=False,
            options={"samples": 300, "kernel_width": 25.0, "alpha": 1.0},
            seeded=True,
        ),
        ModelExplainer("shap", shap_words, per_piece=False, options={"samples": 300}, seeded=True),
    ]
}

EXPLAINER_OPTIONS: dict[str, dict] = {name: dict(e.options) for name, e in MODEL_EXPLAINERS.items()}
