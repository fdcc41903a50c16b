"""A tiny BERT-like classifier made from a configuration and a tokenizer trained on the
given data: nothing is downloaded, and it trains in seconds on a CPU. For tests, demos and
benchmarks of the explainers, never for real results."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

SPECIAL_TOKENS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def wordpiece_vocabulary(words: Sequence[str], vocab_size: int) -> dict[str, int]:
    """A WordPiece vocabulary decided by the words alone: the special tokens, then every
    character that starts a word and every one that continues a word (as `##c`), each set
    sorted, then whole words by falling count, ties alphabetical, up to `vocab_size`. The
    tokenizers library's trainer breaks ties differently from run to run, so the same data
    gave different models; this one gives the same vocabulary every time. Characters are
    kept even past `vocab_size`, as the trainer keeps its alphabet, so no seen word is
    ever unknown."""
    counts: dict[str, int] = {}
    for word in words:
        counts[word] = counts.get(word, 0) + 1
    starts = sorted({word[0] for word in counts})
    continuations = sorted({"##" + c for word in counts for c in word[1:]})
    tokens = SPECIAL_TOKENS + starts + continuations
    known = set(tokens)
    frequent = sorted((w for w in counts if w not in known), key=lambda w: (-counts[w], w))
    tokens += frequent[: max(0, vocab_size - len(tokens))]
    return {token: i for i, token in enumerate(tokens)}


def _tokenizer(texts: list[list[str]], vocab_size: int):
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast

    # Chinese characters become words of their own, as the fine-grained benchmark splits them.
    normalizer = normalizers.BertNormalizer(lowercase=True, handle_chinese_chars=True)
    pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    words = [
        word
        for text in texts
        for word, _ in pre_tokenizer.pre_tokenize_str(normalizer.normalize_str(" ".join(text)))
    ]
    backend = Tokenizer(
        models.WordPiece(vocab=wordpiece_vocabulary(words, vocab_size), unk_token=SPECIAL_TOKENS[1])
    )
    backend.normalizer = normalizer
    backend.pre_tokenizer = pre_tokenizer
    # Special tokens are matched whole in a text, not split as punctuation and letters.
    backend.add_special_tokens(SPECIAL_TOKENS)
    cls, sep = backend.token_to_id("[CLS]"), backend.token_to_id("[SEP]")
    backend.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", cls), ("[SEP]", sep)],
    )
    pad, unk, cls_name, sep_name, mask = SPECIAL_TOKENS
    return PreTrainedTokenizerFast(
        tokenizer_object=backend,
        unk_token=unk,
        pad_token=pad,
        cls_token=cls_name,
        sep_token=sep_name,
        mask_token=mask,
        model_max_length=256,
        model_input_names=["input_ids", "token_type_ids", "attention_mask"],
    )


def embeddings_at_unit_scale(model) -> None:
    """Draw the word, position and segment embeddings from N(0, 1), torch's own default
    for an embedding, instead of BERT's N(0, 0.02). The LayerNorm after them divides by
    their spread: at 0.02 it amplified every change of an input's embeddings some 50-fold,
    and the tiny model trained into a two-state switch (the same probability to seven
    digits for every input of a class, leave-one-word-out changes at float32 rounding,
    and cliffs along integrated gradients' paths narrower than 512 steps resolve). At
    the LayerNorm's own scale the model's probabilities move with the words."""
    import torch

    embeddings = model.bert.embeddings
    with torch.no_grad():
        for table in (
            embeddings.word_embeddings,
            embeddings.position_embeddings,
            embeddings.token_type_embeddings,
        ):
            table.weight.normal_(0.0, 1.0)
        embeddings.word_embeddings.weight[model.config.pad_token_id] = 0.0


def train_tiny_model(
    train_token_lists: Sequence[Sequence[str]],
    labels: Sequence[str],
    out_folder: str | Path,
    *,
    queries: Sequence[str | None] | None = None,
    seed: int = 0,
    epochs: int = 8,
    hidden_size: int = 32,
    layers: int = 2,
    heads: int = 2,
    vocab_size: int = 2000,
    max_length: int = 256,
) -> Path:
    """Train a tiny BERT classifier on (tokens, query, label) and save it with
    `save_pretrained` (config with id2label, safetensors weights, tokenizer) in `out_folder`."""
    import torch
    from transformers import BertConfig, BertForSequenceClassification
    from transformers.utils import logging as transformers_logging

    # Progress bars of loading and saving a few kilobytes are noise in a command's output.
    transformers_logging.disable_progress_bar()

    token_lists = [[str(t) for t in tokens] for tokens in train_token_lists]
    queries = list(queries) if queries is not None else [None] * len(token_lists)
    if not (len(token_lists) == len(labels) == len(queries)):
        raise ValueError("train_tiny_model needs as many token lists, labels and queries")
    names = sorted({str(label) for label in labels})
    if len(names) < 2:
        raise ValueError("train_tiny_model needs labelled examples of at least two classes")
    out = Path(out_folder)
    out.mkdir(parents=True, exist_ok=True)

    rng = np.random.default_rng(seed)
    texts = token_lists + [q.split() for q in queries if q]
    tokenizer = _tokenizer(texts, vocab_size)
    config = BertConfig(
        vocab_size=tokenizer.backend_tokenizer.get_vocab_size(),
        hidden_size=hidden_size,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        intermediate_size=hidden_size * 2,
        max_position_embeddings=max_length,
        num_labels=len(names),
        id2label=dict(enumerate(names)),
        label2id={name: i for i, name in enumerate(names)},
        pad_token_id=tokenizer.pad_token_id,
    )
    encodings = [
        tokenizer(
            tokens,
            q.split() if q else None,
            is_split_into_words=True,
            truncation=True,
            max_length=max_length,
        )
        for tokens, q in zip(token_lists, queries, strict=True)
    ]
    # The seed alone decides the initial weights and the dropout: the same data and seed
    # give byte-identical weights, and the caller's own torch generator is left as it was.
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = BertForSequenceClassification(config)
        embeddings_at_unit_scale(model)
        targets = torch.tensor([names.index(str(label)) for label in labels])
        optimiser = torch.optim.AdamW(model.parameters(), lr=3e-3)
        model.train()
        for _ in range(epochs):
            for batch in np.array_split(
                rng.permutation(len(encodings)), max(1, len(encodings) // 16)
            ):
                padded = tokenizer.pad([encodings[i] for i in batch], return_tensors="pt")
                loss = model(**padded, labels=targets[batch]).loss
                optimiser.zero_grad()
                loss.backward()
                optimiser.step()
    model.eval()
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out
