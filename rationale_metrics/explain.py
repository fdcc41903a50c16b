"""A baseline classifier and explainers, so faithfulness can be computed without a GPU.

Any model can be plugged in through the `TextClassifier` protocol: it needs `labels` and
`predict_proba(token_lists, queries) -> array (n, len(labels))`. A model may also offer
`predict_proba_kept(tokens, query, keep)` to score many masked copies of one input at
once; the bundled bag-of-words model does, so occlusion and LIME stay fast.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Protocol, runtime_checkable

import numpy as np

from rationale_metrics.benchmark_format import (
    BenchmarkInstance,
    BenchmarkPrediction,
    write_benchmark_predictions,
)
from rationale_metrics.eraser import EraserDataset, Instance
from rationale_metrics.extensions import runs, top_k_indices
from rationale_metrics.models.classifier import INSTANCE_BATCH, ModelInput, TransformersClassifier
from rationale_metrics.models.explainers import MODEL_EXPLAINERS
from rationale_metrics.scoring import DEFAULT_AOPC_THRESHOLDS

MASK_BATCH = 512
# Instances explained together by a Transformers model, in blocks that start at multiples
# of INSTANCE_BATCH counted from the split's first instance: the groups that share forward
# passes are then the same whatever the chunk, and chunks join byte for byte.
MODEL_BLOCK = 64


@runtime_checkable
class TextClassifier(Protocol):
    labels: list[str]

    def predict_proba(
        self, token_lists: Sequence[Sequence[str]], queries: Sequence[str | None]
    ) -> np.ndarray: ...


def _identity(tokens):
    return tokens


class BagOfWordsClassifier:
    """TF-IDF over lowercased tokens (query tokens prefixed with 'q:') + logistic regression."""

    def __init__(self, *, c: float = 4.0, seed: int = 0):
        # scikit-learn (and scipy) cost seconds to import: every Django process reaches this
        # module through the results board, and only a training or explaining run needs them.
        from sklearn.feature_extraction.text import CountVectorizer, TfidfTransformer
        from sklearn.linear_model import LogisticRegression

        self.vectorizer = CountVectorizer(analyzer=_identity, lowercase=False)
        self.tfidf = TfidfTransformer(sublinear_tf=True)
        self.model = LogisticRegression(C=c, max_iter=2000, random_state=seed)
        self.labels: list[str] = []

    @staticmethod
    def _features(tokens: Sequence[str], query: str | None) -> list[str]:
        words = [t.lower() for t in tokens]
        if query:
            words += ["q:" + w.lower() for w in query.split()]
        return words

    def fit(self, token_lists, queries, labels: Sequence[str]) -> BagOfWordsClassifier:
        counts = self.vectorizer.fit_transform(
            [self._features(t, q) for t, q in zip(token_lists, queries, strict=True)]
        )
        self.model.fit(self.tfidf.fit_transform(counts), list(labels))
        self.labels = [str(c) for c in self.model.classes_]
        return self

    def predict_proba(self, token_lists, queries) -> np.ndarray:
        counts = self.vectorizer.transform(
            [self._features(t, q) for t, q in zip(token_lists, queries, strict=True)]
        )
        return self.model.predict_proba(self.tfidf.transform(counts))

    def predict_proba_kept(
        self, tokens: Sequence[str], query: str | None, keep: np.ndarray
    ) -> np.ndarray:
        """Probabilities for each row of `keep` (m x n booleans: which tokens stay)."""
        from scipy import sparse

        vocabulary = self.vectorizer.vocabulary_
        columns = np.array([vocabulary.get(t.lower(), -1) for t in tokens])
        known = columns >= 0
        one_hot = sparse.csr_matrix(
            (np.ones(known.sum()), (np.flatnonzero(known), columns[known])),
            shape=(len(tokens), len(vocabulary)),
        )
        query_counts = self.vectorizer.transform([self._features([], query)])
        out = []
        for start in range(0, len(keep), MASK_BATCH):
            rows = sparse.csr_matrix(keep[start : start + MASK_BATCH].astype(np.float64))
            counts = rows @ one_hot + sparse.vstack([query_counts] * rows.shape[0])
            out.append(self.model.predict_proba(self.tfidf.transform(counts)))
        return np.vstack(out) if out else np.zeros((0, len(self.labels)))

    def linear_weights(
        self, tokens: Sequence[str], query: str | None, label_index: int
    ) -> np.ndarray:
        """Per token: the model's weight for its word towards the label x the word's TF-IDF value."""
        features = self.tfidf.transform(self.vectorizer.transform([self._features(tokens, query)]))
        values = dict(zip(features.indices, features.data, strict=True))
        coef = self.model.coef_
        weights = coef[0] if coef.shape[0] == 1 else coef[label_index]
        if coef.shape[0] == 1 and label_index == 0:
            weights = -weights
        vocabulary = self.vectorizer.vocabulary_
        scores = np.zeros(len(tokens))
        for i, token in enumerate(tokens):
            column = vocabulary.get(token.lower())
            if column is not None:
                scores[i] = weights[column] * values.get(column, 0.0)
        return scores


def proba_kept(model: TextClassifier, tokens, query, keep: np.ndarray) -> np.ndarray:
    if hasattr(model, "predict_proba_kept"):
        return model.predict_proba_kept(tokens, query, keep)
    token_lists = [[t for t, k in zip(tokens, row, strict=True) if k] for row in keep]
    return np.asarray(model.predict_proba(token_lists, [query] * len(token_lists)))


# ---------------------------------------------------------------- explainers


def explain_random(model, tokens, query, label_index, rng: np.random.Generator, **_) -> np.ndarray:
    return rng.random(len(tokens))


def explain_occlusion(model, tokens, query, label_index, **_) -> np.ndarray:
    """Leave-one-out: how much the label's probability drops without each token."""
    n = len(tokens)
    keep = ~np.eye(n, dtype=bool)
    full = proba_kept(model, tokens, query, np.ones((1, n), dtype=bool))[0, label_index]
    return full - proba_kept(model, tokens, query, keep)[:, label_index]


def explain_lime(
    model, tokens, query, label_index, rng: np.random.Generator, samples: int = 300, **_
):
    """LIME over the instance's distinct words: sampled masks, cosine-kernel weighted ridge fit."""
    words = [t.lower() for t in tokens]
    vocab = {w: i for i, w in enumerate(dict.fromkeys(words))}
    word_of_token = np.array([vocab[w] for w in words])
    d = len(vocab)
    z = np.ones((samples, d), dtype=bool)
    for row in range(1, samples):
        removed = rng.choice(d, size=rng.integers(1, d + 1), replace=False)
        z[row, removed] = False
    keep = z[:, word_of_token]
    target = proba_kept(model, tokens, query, keep)[:, label_index]
    cosine = z.sum(axis=1) / (np.sqrt(z.sum(axis=1).clip(min=1)) * math.sqrt(d))
    distance = (1 - cosine) * 100
    weights = np.sqrt(np.exp(-(distance**2) / 25**2))
    from sklearn.linear_model import Ridge

    ridge = Ridge(alpha=1.0, random_state=0).fit(z.astype(float), target, sample_weight=weights)
    return ridge.coef_[word_of_token]


def explain_linear(model, tokens, query, label_index, **_) -> np.ndarray:
    if not hasattr(model, "linear_weights"):
        raise ValueError("the linear explainer needs a linear model with linear_weights()")
    return model.linear_weights(tokens, query, label_index)


EXPLAINERS = {
    "random": explain_random,
    "occlusion": explain_occlusion,
    "lime": explain_lime,
    "linear": explain_linear,
}


def explains_model(model) -> bool:
    """Whether `model` is a Transformers checkpoint, explained by `MODEL_EXPLAINERS`
    (anything else by the baselines' `EXPLAINERS`)."""
    return isinstance(model, TransformersClassifier)


def check_explainer(model, explainer: str) -> None:
    if model is not None and explains_model(model):
        if explainer not in MODEL_EXPLAINERS:
            raise ValueError(
                f"unknown explainer {explainer!r} for a Transformers model; choose from "
                f"{sorted(MODEL_EXPLAINERS)}"
            )
    elif explainer not in EXPLAINERS:
        hint = (
            " (that one needs a Transformers model: --model FOLDER)"
            if explainer in MODEL_EXPLAINERS
            else ""
        )
        raise ValueError(f"unknown explainer {explainer!r}; choose from {sorted(EXPLAINERS)}{hint}")


def model_options(explainer: str, options: dict | None, lime_samples: int) -> dict:
    """The explainer's options: LIME and SHAP take `lime_samples` unless given `samples`."""
    options = dict(options or {})
    if explainer in ("lime", "shap"):
        options.setdefault("samples", lime_samples)
    return options


# ---------------------------------------------------------------- predictions file


def instance_tokens(
    dataset: EraserDataset, inst: Instance
) -> tuple[list[str], list[tuple[str, int, int]]]:
    tokens: list[str] = []
    parts = []
    for docid in inst.resolved_docids():
        doc_tokens = dataset.documents[docid].tokens
        parts.append((docid, len(tokens), len(tokens) + len(doc_tokens)))
        tokens += doc_tokens
    return tokens, parts


def _mean_rationale_tokens(instances: list[Instance]) -> float:
    lengths = []
    for inst in instances:
        covered = {
            (ev.docid, t)
            for g in inst.evidences
            for ev in g
            for t in range(ev.start_token, ev.end_token)
        }
        lengths.append(len(covered))
    return float(np.mean(lengths)) if lengths else 0.0


def train_baseline(
    dataset: EraserDataset, split: str = "train", seed: int = 0
) -> BagOfWordsClassifier:
    instances = [i for i in dataset.splits[split] if i.classification is not None]
    if len({i.classification for i in instances}) < 2:
        raise ValueError(
            f"the {split} split needs labelled instances of at least two classes to train on"
        )
    token_lists = [instance_tokens(dataset, i)[0] for i in instances]
    return BagOfWordsClassifier(seed=seed).fit(
        token_lists, [i.query for i in instances], [i.classification for i in instances]
    )


def label_and_scores(
    model: TextClassifier,
    tokens: Sequence[str],
    query: str | None,
    *,
    explainer: str,
    rng: np.random.Generator,
    lime_samples: int = 300,
) -> tuple[np.ndarray, int, np.ndarray]:
    """The model's probabilities on the whole input, the index of its label, and the
    explainer's score of every token towards that label."""
    full = proba_kept(model, tokens, query, np.ones((1, len(tokens)), dtype=bool))[0]
    label_index = int(np.argmax(full))
    scores = np.asarray(
        EXPLAINERS[explainer](model, tokens, query, label_index, rng=rng, samples=lime_samples),
        dtype=np.float64,
    )
    return full, label_index, scores


def erasure_masks(scores: np.ndarray, k: int, aopc_thresholds: Sequence[float]) -> np.ndarray:
    """Rows of kept tokens: without the top k, the top k alone, then the same pair at each
    AOPC bin (its top ceil(bin x n) tokens)."""
    n = len(scores)
    rows = []
    for count in [k] + [math.ceil(b * n) for b in aopc_thresholds]:
        kept = np.ones(n, dtype=bool)
        kept[top_k_indices(scores, count)] = False
        rows += [kept, ~kept]
    return np.vstack(rows) if rows else np.zeros((0, n), dtype=bool)


def prediction_line(
    dataset: EraserDataset,
    inst: Instance,
    parts: list[tuple[str, int, int]],
    labels: Sequence[str],
    full: np.ndarray,
    scores: np.ndarray,
    erased: np.ndarray,
    *,
    k: int,
    aopc_thresholds: Sequence[float],
) -> dict:
    """The predictions file's line: hard top-k, soft scores, the model's probabilities on
    the whole input and on the rows of `erasure_masks` (`erased`)."""

    def as_dict(row: np.ndarray) -> dict:
        return {label: float(p) for label, p in zip(labels, row, strict=True)}

    top = set(top_k_indices(scores, k).tolist())
    rationales = []
    for docid, start, end in parts:
        doc = dataset.documents[docid]
        local = scores[start:end]
        chosen = [t - start for t in top if start <= t < end]
        rationales.append(
            {
                "docid": docid,
                "hard_rationale_predictions": [
                    {"start_token": s, "end_token": e} for s, e in runs(chosen)
                ],
                "soft_rationale_predictions": local.tolist(),
                "soft_sentence_predictions": [
                    float(local[s:e].max()) if e > s else 0.0 for s, e in doc.sentence_ranges
                ],
            }
        )
    return {
        "annotation_id": inst.annotation_id,
        "rationales": rationales,
        "classification": labels[int(np.argmax(full))],
        "classification_scores": as_dict(full),
        "comprehensiveness_classification_scores": as_dict(erased[0]),
        "sufficiency_classification_scores": as_dict(erased[1]),
        "thresholded_scores": [
            {
                "threshold": threshold,
                "comprehensiveness_classification_scores": as_dict(erased[2 + 2 * i]),
                "sufficiency_classification_scores": as_dict(erased[3 + 2 * i]),
            }
            for i, threshold in enumerate(aopc_thresholds)
        ],
    }


def explain_instance(
    model: TextClassifier,
    dataset: EraserDataset,
    inst: Instance,
    *,
    explainer: str,
    k: int,
    aopc_thresholds: Sequence[float],
    rng: np.random.Generator,
    lime_samples: int = 300,
) -> dict:
    tokens, parts = instance_tokens(dataset, inst)
    full, _, scores = label_and_scores(
        model, tokens, inst.query, explainer=explainer, rng=rng, lime_samples=lime_samples
    )
    erased = proba_kept(model, tokens, inst.query, erasure_masks(scores, k, aopc_thresholds))
    return prediction_line(
        dataset,
        inst,
        parts,
        model.labels,
        full,
        scores,
        erased,
        k=k,
        aopc_thresholds=aopc_thresholds,
    )


def explain_model_block(
    model: TransformersClassifier,
    inputs: Sequence[ModelInput],
    rngs: Sequence[np.random.Generator],
    *,
    explainer: str,
    options: dict,
) -> tuple[list, list[np.ndarray], list[int], list[np.ndarray]]:
    """A block of inputs explained together: their encodings, probabilities on the whole
    input, predicted labels and word scores. Consecutive groups of INSTANCE_BATCH inputs,
    counted from the first, share forward passes (`model_blocks` says where blocks start)."""
    encoded = [model.encode(inp) for inp in inputs]
    full = [
        p[0] for p in model.probabilities(encoded, [np.ones((1, e.n_words), bool) for e in encoded])
    ]
    targets = [int(np.argmax(p)) for p in full]
    scores = MODEL_EXPLAINERS[explainer](model, encoded, targets, list(rngs), **options)
    return encoded, full, targets, scores


def model_blocks(positions: range, count: int) -> Iterator[range]:
    """The blocks of positions that a Transformers model explains together, covering
    `positions` of a split of `count` instances. Each starts at a multiple of INSTANCE_BATCH
    and holds whole groups of it, so a range that starts or stops inside a group also
    explains the group's other instances (and leaves their lines out): the forward passes
    are the whole split's."""
    step = INSTANCE_BATCH * max(1, MODEL_BLOCK // INSTANCE_BATCH)
    first = positions.start - positions.start % INSTANCE_BATCH
    last = min(count, -(-positions.stop // INSTANCE_BATCH) * INSTANCE_BATCH)
    for start in range(first, last, step):
        yield range(start, min(start + step, last))


def _model_lines(
    model: TransformersClassifier,
    dataset: EraserDataset,
    positions: range,
    *,
    split: str,
    explainer: str,
    k: int,
    aopc_thresholds: Sequence[float],
    seed: int,
    options: dict,
) -> Iterator[str]:
    instances = dataset.splits[split]
    if not positions:
        return
    for block in model_blocks(positions, len(instances)):
        tokens_parts = [instance_tokens(dataset, instances[p]) for p in block]
        inputs = [
            ModelInput(words=tokens, query=instances[p].query)
            for p, (tokens, _) in zip(block, tokens_parts, strict=True)
        ]
        encoded, full, _, scores = explain_model_block(
            model,
            inputs,
            [np.random.default_rng([seed, p]) for p in block],
            explainer=explainer,
            options=options,
        )
        erased = model.probabilities(
            encoded, [erasure_masks(s, k, aopc_thresholds) for s in scores]
        )
        for i, p in enumerate(block):
            if p not in positions:
                continue
            line = prediction_line(
                dataset,
                instances[p],
                tokens_parts[i][1],
                model.labels,
                full[i],
                scores[i],
                erased[i],
                k=k,
                aopc_thresholds=aopc_thresholds,
            )
            yield json.dumps(line) + "\n"


def rationale_budget(dataset: EraserDataset, split: str) -> int:
    """k, the number of tokens an explainer's hard rationale keeps: the mean length of the
    split's gold rationales (of the whole dataset's when the split has none), at least 1."""
    return max(
        1,
        round(
            _mean_rationale_tokens(dataset.splits[split])
            or _mean_rationale_tokens(dataset.instances())
        ),
    )


def explain_lines(
    model: TextClassifier,
    dataset: EraserDataset,
    *,
    split: str,
    start: int,
    stop: int,
    explainer: str,
    k: int,
    aopc_thresholds: Sequence[float] = DEFAULT_AOPC_THRESHOLDS,
    seed: int = 0,
    lime_samples: int = 300,
    options: dict | None = None,
) -> Iterator[str]:
    """The predictions file's lines for the split's instances start..stop-1, each with its
    newline. Each instance draws from a generator seeded by (seed, its position), so any
    range gives the lines that the whole split gives there: chunks explained apart, in any
    order, join into the one-process file byte for byte.

    A Transformers model (`rationale_metrics.models.load_classifier`) is explained by
    `MODEL_EXPLAINERS`, with their `options`; instances go in blocks, every erasure of a
    block in few forward passes."""
    check_explainer(model, explainer)
    instances = dataset.splits[split]
    if explains_model(model):
        yield from _model_lines(
            model,
            dataset,
            range(start, min(stop, len(instances))),
            split=split,
            explainer=explainer,
            k=k,
            aopc_thresholds=aopc_thresholds,
            seed=seed,
            options=model_options(explainer, options, lime_samples),
        )
        return
    if options:
        raise ValueError("explainer options are for Transformers models' explainers")
    for position in range(start, min(stop, len(instances))):
        line = explain_instance(
            model,
            dataset,
            instances[position],
            explainer=explainer,
            k=k,
            aopc_thresholds=aopc_thresholds,
            rng=np.random.default_rng([seed, position]),
            lime_samples=lime_samples,
        )
        yield json.dumps(line) + "\n"


def explain_split(
    dataset: EraserDataset,
    *,
    split: str,
    explainer: str,
    out_path: Path,
    train_split: str = "train",
    model: TextClassifier | None = None,
    k: int | None = None,
    aopc_thresholds: Sequence[float] = DEFAULT_AOPC_THRESHOLDS,
    seed: int = 0,
    lime_samples: int = 300,
    options: dict | None = None,
) -> int:
    """Write a complete predictions file for `split`; returns the number of lines."""
    check_explainer(model, explainer)
    model = model or train_baseline(dataset, train_split, seed=seed)
    count = len(dataset.splits[split])
    tmp = out_path.with_suffix(out_path.suffix + ".partial")
    with open(tmp, "w") as handle:
        handle.writelines(
            explain_lines(
                model,
                dataset,
                split=split,
                start=0,
                stop=count,
                explainer=explainer,
                k=rationale_budget(dataset, split) if k is None else k,
                aopc_thresholds=aopc_thresholds,
                seed=seed,
                lime_samples=lime_samples,
                options=options,
            )
        )
    tmp.replace(out_path)
    return count


# ---------------------------------------------------------------- the fine-grained benchmark


def train_benchmark_baseline(
    instances: Sequence[BenchmarkInstance], seed: int = 0
) -> BagOfWordsClassifier:
    """The baseline trained on the gold's originals, all sentences' tokens as one text."""
    originals = [i for i in instances if i.is_original]
    unlabelled = [i.line if i.line is not None else i.sent_id for i in originals if i.label is None]
    if unlabelled:
        shown = ", ".join(map(str, unlabelled[:5])) + (", ..." if len(unlabelled) > 5 else "")
        raise ValueError(
            f"the baseline trains on the originals' sent_label, which {len(unlabelled)} "
            f"lack (line {shown}): scoring needs no label, training does"
        )
    if len({str(i.label) for i in originals}) < 2:
        raise ValueError("the gold file needs originals of at least two labels to train on")
    return BagOfWordsClassifier(seed=seed).fit(
        [[t for sentence in i.tokens for t in sentence] for i in originals],
        [None] * len(originals),
        [str(i.label) for i in originals],
    )


def explain_benchmark_instance(
    model: TextClassifier,
    inst: BenchmarkInstance,
    *,
    explainer: str,
    ratios: Sequence[float] | None,
    rng: np.random.Generator,
    lime_samples: int = 300,
) -> tuple[list[list[int]], str, str, str]:
    """Per sentence, the top ceil(ratio x n) token indexes, most important first (the whole
    ranking when `ratios` is None); and the model's label on the whole input, on those
    tokens alone and on the rest."""
    tokens = [t for sentence in inst.tokens for t in sentence]
    _, label_index, scores = label_and_scores(
        model, tokens, None, explainer=explainer, rng=rng, lime_samples=lime_samples
    )
    rationale, kept = benchmark_rationale(inst, scores, ratios)
    on_rationale, on_rest = proba_kept(model, tokens, None, kept).argmax(axis=1)
    labels = model.labels
    return rationale, labels[label_index], labels[on_rationale], labels[on_rest]


def benchmark_rationale(
    inst: BenchmarkInstance, scores: np.ndarray, ratios: Sequence[float] | None
) -> tuple[list[list[int]], np.ndarray]:
    """Per sentence, the top ceil(ratio x n) token indexes, most important first (the whole
    ranking when `ratios` is None); and the kept rows for the rationale alone and the rest."""
    rationale = []
    kept = np.zeros((1, len(scores)), dtype=bool)
    start = 0
    for s, sentence in enumerate(inst.tokens):
        local = scores[start : start + len(sentence)]
        count = len(sentence) if ratios is None else math.ceil(len(sentence) * ratios[s])
        top = top_k_indices(local, count)
        rationale.append(top.tolist())
        kept[0, start + top] = True
        start += len(sentence)
    return rationale, np.vstack([kept, ~kept])


def benchmark_model_input(inst: BenchmarkInstance) -> ModelInput:
    """One sentence as one segment; a sentence pair as the model's two segments, both
    explained."""
    words = [t for sentence in inst.tokens for t in sentence]
    if len(inst.tokens) == 2:
        return ModelInput(words=words, pair_break=len(inst.tokens[0]))
    return ModelInput(words=words)


def _model_benchmark_results(
    model: TransformersClassifier,
    instances: Sequence[BenchmarkInstance],
    *,
    explainer: str,
    ratios: Sequence[float] | None,
    seed: int,
    options: dict,
) -> Iterator[tuple[list[list[int]], str, str, str]]:
    for block in model_blocks(range(len(instances)), len(instances)):
        encoded, _, targets, scores = explain_model_block(
            model,
            [benchmark_model_input(instances[p]) for p in block],
            [np.random.default_rng([seed, p]) for p in block],
            explainer=explainer,
            options=options,
        )
        chosen = [
            benchmark_rationale(instances[p], s, ratios) for p, s in zip(block, scores, strict=True)
        ]
        erased = model.probabilities(encoded, [kept for _, kept in chosen])
        labels = model.labels
        for (rationale, _), target, probabilities in zip(chosen, targets, erased, strict=True):
            on_rationale, on_rest = probabilities.argmax(axis=1)
            yield rationale, labels[target], labels[on_rationale], labels[on_rest]


def explain_benchmark(
    instances: Sequence[BenchmarkInstance],
    *,
    task: str,
    explainer: str,
    out_path: Path,
    ratios: Sequence[float] | None,
    model: TextClassifier | None = None,
    seed: int = 0,
    lime_samples: int = 300,
    options: dict | None = None,
) -> int:
    """Write the benchmark's predictions file for every gold instance, original or
    perturbed; returns the number of lines. Labels keep the gold's JSON type. A Transformers
    model's instances draw from generators seeded by (seed, position), as explain_lines'."""
    if task == "reading_comprehension":
        if model is not None and explains_model(model):
            raise ValueError(
                "reading comprehension with QA models is not supported yet: the model "
                "explainers take sequence-classification checkpoints"
            )
        raise ValueError(
            "the bundled baseline is a classifier and cannot answer reading-comprehension "
            "questions; plug in a model through the TextClassifier protocol instead"
        )
    check_explainer(model, explainer)
    model = model or train_benchmark_baseline(instances, seed=seed)
    as_gold = {str(i.label): i.label for i in instances}
    if explains_model(model):
        results = _model_benchmark_results(
            model,
            instances,
            explainer=explainer,
            ratios=ratios,
            seed=seed,
            options=model_options(explainer, options, lime_samples),
        )
    else:
        if options:
            raise ValueError("explainer options are for Transformers models' explainers")
        rng = np.random.default_rng(seed)
        results = (
            explain_benchmark_instance(
                model, inst, explainer=explainer, ratios=ratios, rng=rng, lime_samples=lime_samples
            )
            for inst in instances
        )

    def predictions():
        for inst, (rationale, label, on_rationale, on_rest) in zip(instances, results, strict=True):
            yield BenchmarkPrediction(
                id=inst.sent_id,
                rationale=rationale,
                rationale_tokens=[
                    [sentence[i] for i in chosen]
                    for sentence, chosen in zip(inst.tokens, rationale, strict=True)
                ],
                pred_label=as_gold.get(label, label),
                rationale_pred=as_gold.get(on_rationale, on_rationale),
                no_rationale_pred=as_gold.get(on_rest, on_rest),
            )

    return write_benchmark_predictions(predictions(), out_path)
