"""A sequence-classification checkpoint behind the `TextClassifier` protocol.

torch and transformers are imported inside the functions that need them, so importing this
module (and `rationale_metrics`) stays cheap and works without the `models` extra.

Words are the dataset's tokens. Each input is tokenized once with `is_split_into_words`, and
every piece remembers the word it came from; erasing words deletes their pieces from that
one encoding (special tokens and the unexplained query stay), so an erased input is exactly
the full input without those words, and attributions of pieces add up to words.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path

import numpy as np

from rationale_metrics.models.checkpoint import model_labels, read_config, refuse_question_answering

DEFAULT_MEMORY_BUDGET_MB = 512
FLOAT_BYTES = 4
# Inputs share forward passes in consecutive groups of this many, counted from the first
# input of a call. Padding and batch size change a pass's rounding (by 1e-7), so an input's
# figures depend on its group: a caller that explains a dataset in parts starts every part
# at a multiple of it (explain.py does), and the parts then do the very passes of the whole.
INSTANCE_BATCH = 8


def instance_batches(count: int) -> Iterator[list[int]]:
    """Indexes 0..count-1 in the groups that share forward passes."""
    for start in range(0, count, INSTANCE_BATCH):
        yield list(range(start, min(start + INSTANCE_BATCH, count)))


@dataclass(frozen=True)
class ModelInput:
    """One instance as the model reads it. `words` are explained (scored, erased). A
    `query` goes in as the second segment and is never erased; or, for sentence pairs,
    `pair_break` splits `words` into the two segments, both explained."""

    words: Sequence[str]
    query: str | None = None
    pair_break: int | None = None


@dataclass(frozen=True)
class Encoded:
    """An input's pieces: ids, segment ids (None when the model takes none), and per
    piece the index of its explained word (-1 for special tokens and the query)."""

    ids: np.ndarray
    type_ids: np.ndarray | None
    word: np.ndarray
    n_words: int

    def kept_rows(self, keeps: np.ndarray) -> list[tuple[np.ndarray, np.ndarray | None]]:
        """For each row of `keeps` (m x n_words booleans), the ids (and segment ids) with
        the pieces of the words it does not keep deleted."""
        keeps = np.asarray(keeps, dtype=bool).reshape(-1, self.n_words)
        explained = self.word >= 0
        stays = np.broadcast_to(~explained, (len(keeps), len(self.word))).copy()
        stays[:, explained] = keeps[:, self.word[explained]]
        if self.type_ids is None:
            return [(self.ids[row], None) for row in stays]
        return [(self.ids[row], self.type_ids[row]) for row in stays]


def torch_imported():
    try:
        import torch
    except ImportError as exc:
        raise ValueError(
            "explaining a Transformers model needs the models extra, which is not installed: "
            "pip install 'rationale-metrics[models]'"
        ) from exc
    return torch


def resolve_device(device: str | None) -> str:
    """cuda when present and not asked otherwise, else cpu."""
    torch = torch_imported()
    if device is None:
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise ValueError(f"device {device!r} asked for, but torch sees no CUDA device")
    if device != "cpu" and not device.startswith("cuda"):
        raise ValueError(f"device {device!r}: give cpu, cuda or cuda:N")
    return device


class TransformersClassifier:
    """`labels`, `predict_proba(token_lists, queries)` and `predict_proba_kept(tokens,
    query, keep)` over a Transformers checkpoint; forward passes padded and batched
    across inputs within `memory_budget_mb`."""

    def __init__(self, model, tokenizer, *, device: str, memory_budget_mb: int, labels):
        self.model = model
        self.tokenizer = tokenizer
        self.device = device
        self.memory_budget_mb = memory_budget_mb
        self.labels: list[str] = list(labels)
        config = model.config
        self.max_length = min(
            getattr(config, "max_position_embeddings", 512) or 512,
            tokenizer.model_max_length if tokenizer.model_max_length < 10**6 else 10**6,
        )
        self.uses_type_ids = (
            "token_type_ids" in tokenizer.model_input_names
            and (getattr(config, "type_vocab_size", 2) or 0) > 1
        )
        self.pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
        self._hidden = int(getattr(config, "hidden_size", 768))
        self._layers = int(getattr(config, "num_hidden_layers", 12))
        self._heads = int(getattr(config, "num_attention_heads", 12))
        self._intermediate = int(getattr(config, "intermediate_size", 4 * self._hidden))

    # ------------------------------------------------------------ encoding

    def encode(self, inp: ModelInput) -> Encoded:
        words = [str(w) for w in inp.words]
        if inp.pair_break is not None:
            first, second = words[: inp.pair_break], words[inp.pair_break :]
            second_explained = True
        else:
            first = words
            second = inp.query.split() if inp.query else None
            second_explained = False
        encoding = self.tokenizer(
            first,
            second,
            is_split_into_words=True,
            truncation="longest_first" if second else True,
            max_length=self.max_length,
            return_token_type_ids=self.uses_type_ids,
        )
        sequence_ids = encoding.sequence_ids()
        word = np.full(len(encoding["input_ids"]), -1, dtype=np.int64)
        for position, (segment, index) in enumerate(
            zip(sequence_ids, encoding.word_ids(), strict=True)
        ):
            if index is None or segment is None:
                continue
            if segment == 0:
                word[position] = index
            elif second_explained:
                word[position] = len(first) + index
        type_ids = (
            np.asarray(encoding["token_type_ids"], dtype=np.int64) if self.uses_type_ids else None
        )
        return Encoded(
            ids=np.asarray(encoding["input_ids"], dtype=np.int64),
            type_ids=type_ids,
            word=word,
            n_words=len(words),
        )

    # ------------------------------------------------------------ batching

    def row_bytes(self, length: int, *, gradients: bool = False) -> int:
        """A rough upper bound on the activations of one row of `length` pieces."""
        per_layer = length * (6 * self._hidden + self._intermediate) + 2 * self._heads * length**2
        layers = self._layers if gradients else 2
        factor = 3 if gradients else 1
        return FLOAT_BYTES * factor * (per_layer * layers + length * self._hidden * 4)

    def rows_per_pass(self, length: int, *, gradients: bool = False) -> int:
        budget = self.memory_budget_mb * 1024 * 1024
        return max(1, budget // max(1, self.row_bytes(length, gradients=gradients)))

    def batches(self, lengths: Sequence[int], *, gradients: bool = False, factor: int = 1):
        """Row indexes grouped into passes: by length, each pass within the budget
        (`factor` rows of work per row, as integrated gradients' steps)."""
        order = sorted(range(len(lengths)), key=lambda i: (lengths[i], i))
        start = 0
        while start < len(order):
            stop = start + 1
            while stop < len(order):
                longest = lengths[order[stop]]
                if (stop - start + 1) * factor > self.rows_per_pass(longest, gradients=gradients):
                    break
                stop += 1
            yield order[start:stop]
            start = stop

    def padded(self, rows: Sequence[tuple[np.ndarray, np.ndarray | None]]):
        """Tensors (ids, attention mask, segment ids or None) of rows padded on the right."""
        torch = torch_imported()
        width = max(len(ids) for ids, _ in rows)
        ids = np.full((len(rows), width), self.pad_id, dtype=np.int64)
        mask = np.zeros((len(rows), width), dtype=np.int64)
        types = np.zeros((len(rows), width), dtype=np.int64) if self.uses_type_ids else None
        for r, (row_ids, row_types) in enumerate(rows):
            ids[r, : len(row_ids)] = row_ids
            mask[r, : len(row_ids)] = 1
            if types is not None and row_types is not None:
                types[r, : len(row_ids)] = row_types

        def tensor(a):
            return None if a is None else torch.from_numpy(a).to(self.device)

        return tensor(ids), tensor(mask), tensor(types)

    def forward_kwargs(self, mask, types) -> dict:
        kwargs = {"attention_mask": mask}
        if types is not None:
            kwargs["token_type_ids"] = types
        return kwargs

    def row_probabilities(self, rows: Sequence[tuple[np.ndarray, np.ndarray | None]]) -> np.ndarray:
        """Class probabilities of each row (ids, segment ids), in the rows' order."""
        torch = torch_imported()
        out = np.zeros((len(rows), len(self.labels)), dtype=np.float64)
        with torch.inference_mode():
            for batch in self.batches([len(ids) for ids, _ in rows]):
                ids, mask, types = self.padded([rows[i] for i in batch])
                logits = self.model(input_ids=ids, **self.forward_kwargs(mask, types)).logits
                out[batch] = torch.softmax(logits.float(), dim=-1).double().cpu().numpy()
        return out

    def probabilities(
        self, encoded: Sequence[Encoded], keeps: Sequence[np.ndarray]
    ) -> list[np.ndarray]:
        """For each input, the probabilities of each row of its keep matrix (m x n_words
        booleans: which words stay). The rows of a group of `instance_batches` share forward
        passes; no row shares one with another group's."""
        if len(encoded) != len(keeps):
            raise ValueError(f"{len(keeps)} keep matrices for {len(encoded)} inputs")
        out = []
        for group in instance_batches(len(encoded)):
            rows_of = [encoded[i].kept_rows(keeps[i]) for i in group]
            probabilities = self.row_probabilities([row for rows in rows_of for row in rows])
            ends = np.cumsum([0] + [len(rows) for rows in rows_of])
            out.extend(probabilities[a:b] for a, b in pairwise(ends))
        return out

    # ------------------------------------------------------------ the TextClassifier protocol

    def predict_proba(
        self, token_lists: Sequence[Sequence[str]], queries: Sequence[str | None]
    ) -> np.ndarray:
        encoded = [
            self.encode(ModelInput(words=list(t), query=q))
            for t, q in zip(token_lists, queries, strict=True)
        ]
        if not encoded:
            return np.zeros((0, len(self.labels)))
        return np.vstack([self.row_probabilities([(e.ids, e.type_ids)]) for e in encoded])

    def predict_proba_kept(
        self, tokens: Sequence[str], query: str | None, keep: np.ndarray
    ) -> np.ndarray:
        """Probabilities for each row of `keep` (m x n booleans: which tokens stay)."""
        encoded = self.encode(ModelInput(words=list(tokens), query=query))
        return self.probabilities([encoded], [np.asarray(keep, dtype=bool)])[0]


def load_classifier(
    folder: str | Path,
    *,
    device: str | None = None,
    memory_budget_mb: int = DEFAULT_MEMORY_BUDGET_MB,
) -> TransformersClassifier:
    """Load config, weights and tokenizer from a local folder only (never the network)."""
    folder = Path(folder)
    config_dict = read_config(folder)
    refuse_question_answering(folder, config_dict)
    labels = model_labels(folder)
    if memory_budget_mb < 1:
        raise ValueError("memory_budget_mb must be at least 1")
    torch_imported()
    from transformers import AutoModelForSequenceClassification, AutoTokenizer
    from transformers.utils import logging as transformers_logging

    # Progress bars of loading and saving a few kilobytes are noise in a command's output.
    transformers_logging.disable_progress_bar()

    device = resolve_device(device)
    try:
        tokenizer = AutoTokenizer.from_pretrained(folder, local_files_only=True)
        model = AutoModelForSequenceClassification.from_pretrained(
            folder, local_files_only=True, attn_implementation="eager"
        )
    except (OSError, ValueError, KeyError) as exc:
        raise ValueError(f"model folder {folder}: cannot load the checkpoint ({exc})") from exc
    if not getattr(tokenizer, "is_fast", False):
        raise ValueError(
            f"model folder {folder}: the tokenizer is not a fast tokenizer (tokenizer.json), "
            "which mapping words to pieces needs"
        )
    if model.config.num_labels != len(labels):
        raise ValueError(
            f"{folder / 'config.json'}: id2label names {len(labels)} labels, "
            f"the classifier head has {model.config.num_labels}"
        )
    # Explainers differentiate with respect to the inputs only: gradients of the weights
    # would cost a second backward product per layer for nothing.
    model.requires_grad_(False)
    model.to(device).eval()
    return TransformersClassifier(
        model, tokenizer, device=device, memory_budget_mb=memory_budget_mb, labels=labels
    )
