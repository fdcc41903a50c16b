"""The explainers of a Transformers model, on a tiny BERT trained in seconds in a session
fixture: word scores are sums of their pieces', integrated gradients is complete, runs are
deterministic and chunks join into the whole, and faithfulness equals a plain loop that
asks the model once per erased input."""

import json

import numpy as np
import pytest

from rationale_metrics.models import torch_available

pytestmark = pytest.mark.skipif(
    not torch_available(),
    reason="the models extra (torch, transformers, captum) is not installed",
)

POSITIVE = ["good", "great", "superb", "wonderful", "moving"]
NEGATIVE = ["bad", "dull", "boring", "awful", "flat"]
FILLER = ["the", "a", "film", "movie", "plot", "story", "was", "is", "and", "it", "unforgettably"]
QUERY = "what is the sentiment ?"


def _texts(count, seed):
    rng = np.random.default_rng(seed)
    texts, labels = [], []
    for i in range(count):
        label = "POS" if i % 2 else "NEG"
        words = [str(w) for w in rng.choice(FILLER, int(rng.integers(4, 12)))]
        for word in rng.choice(POSITIVE if label == "POS" else NEGATIVE, 2):
            words.insert(int(rng.integers(0, len(words) + 1)), str(word))
        texts.append(words)
        labels.append(label)
    return texts, labels


def _train_tiny_model(tmp_path_factory, seed):
    from rationale_metrics.models import train_tiny_model

    texts, labels = _texts(80, seed=1)
    # A small vocabulary splits the rarer words into several pieces.
    return train_tiny_model(
        texts,
        labels,
        tmp_path_factory.mktemp(f"tiny-{seed}") / "model",
        queries=[QUERY] * len(texts),
        seed=seed,
        epochs=8,
        vocab_size=50,
    )


@pytest.fixture(scope="session")
def tiny_model_folder(tmp_path_factory):
    return _train_tiny_model(tmp_path_factory, seed=0)


@pytest.fixture(scope="session")
def model(tiny_model_folder):
    from rationale_metrics.models import load_classifier

    return load_classifier(tiny_model_folder, device="cpu", memory_budget_mb=4)


@pytest.fixture(scope="session", params=[0, 1, 2], ids=lambda seed: f"model-seed-{seed}")
def model_of_each_seed(request, model, tmp_path_factory):
    """The properties that once failed on some models only hold on every seed's."""
    from rationale_metrics.models import load_classifier

    if request.param == 0:
        return model
    folder = _train_tiny_model(tmp_path_factory, seed=request.param)
    return load_classifier(folder, device="cpu", memory_budget_mb=4)


@pytest.fixture(scope="session")
def dataset(tmp_path_factory):
    from rationale_metrics.eraser import read_eraser_dataset
    from rationale_metrics.sources import open_dataset_source

    folder = tmp_path_factory.mktemp("eraser")
    texts, labels = _texts(11, seed=2)
    docs, lines = [], []
    for i, (words, label) in enumerate(zip(texts, labels, strict=True)):
        docid = f"d{i}"
        half = len(words) // 2
        docs.append(
            {"docid": docid, "document": " ".join(words[:half]) + "\n" + " ".join(words[half:])}
        )
        lines.append(
            {
                "annotation_id": docid,
                "classification": label,
                "docids": [docid],
                "evidences": [
                    [
                        {
                            "docid": docid,
                            "start_token": 0,
                            "end_token": 2,
                            "start_sentence": 0,
                            "end_sentence": 1,
                            "text": " ".join(words[:2]),
                        }
                    ]
                ],
                "query": QUERY,
                "query_type": None,
            }
        )
    (folder / "docs.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs))
    (folder / "train.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines[:3]))
    (folder / "val.jsonl").write_text("")
    (folder / "test.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines[3:]))
    with open_dataset_source(str(folder)) as source:
        return folder, read_eraser_dataset(source)


def _inputs(count=6, seed=3):
    from rationale_metrics.models import ModelInput

    texts, _ = _texts(count, seed)
    return [ModelInput(words=words, query=QUERY) for words in texts]


ALL = [
    "gradient",
    "gradient_x_input",
    "integrated_gradients",
    "attention_last",
    "attention_rollout",
    "occlusion",
    "lime",
    "shap",
]


def test_the_tiny_model_learned_and_splits_words_into_pieces(model):
    probabilities = model.predict_proba(
        [["good", "great", "film"], ["awful", "dull", "plot"]], [QUERY] * 2
    )
    encoded = model.encode(_inputs()[0])

    assert model.labels == ["NEG", "POS"]
    assert probabilities[0, 1] > 0.5 > probabilities[1, 1]
    # Some word is more than one piece, and the query's pieces belong to no word.
    assert np.bincount(encoded.word[encoded.word >= 0]).max() > 1
    assert (encoded.word == -1).sum() > 3


@pytest.mark.parametrize(
    "name",
    ["gradient", "gradient_x_input", "integrated_gradients", "attention_last", "attention_rollout"],
)
def test_word_scores_are_the_sums_of_their_pieces(model, name):
    from rationale_metrics.models import MODEL_EXPLAINERS

    explainer = MODEL_EXPLAINERS[name]
    encoded = [model.encode(inp) for inp in _inputs()]
    targets = [1] * len(encoded)
    pieces = explainer.run(model, encoded, targets, [None] * len(encoded))
    words = explainer(model, encoded, targets, [None] * len(encoded))

    for enc, piece_scores, word_scores in zip(encoded, pieces, words, strict=True):
        expected = [0.0] * enc.n_words
        for position, word in enumerate(enc.word):
            if word >= 0:
                expected[word] += float(piece_scores[position])
        assert word_scores.tolist() == expected


def test_integrated_gradients_is_complete(model_of_each_seed):
    import torch

    from rationale_metrics.models.explainers import (
        _baseline_embeddings,
        integrated_gradients_pieces,
    )

    model = model_of_each_seed
    encoded = [model.encode(inp) for inp in _inputs(3)]
    for baseline in ("zero", "mask"):
        scores = integrated_gradients_pieces(
            model, encoded, [1, 1, 1], steps=256, baseline=baseline
        )
        for i, enc in enumerate(encoded):
            ids, mask, types = model.padded([(enc.ids, enc.type_ids)])
            embeds = model.model.get_input_embeddings()(ids)
            base = _baseline_embeddings(model, ids, embeds, encoded, [i], baseline)
            with torch.no_grad():
                ends = [
                    torch.softmax(
                        model.model(inputs_embeds=e, **model.forward_kwargs(mask, types)).logits, -1
                    )[0, 1].item()
                    for e in (embeds, base)
                ]
            assert scores[i].sum() == pytest.approx(ends[0] - ends[1], abs=5e-3)
            # Pieces that are not words equal their baseline: exactly nothing to attribute.
            assert (scores[i][enc.word < 0] == 0).all()


def _lines(model, dataset, explainer, start, stop, seed=0, **options):
    from rationale_metrics.explain import explain_lines

    return list(
        explain_lines(
            model,
            dataset,
            split="test",
            start=start,
            stop=stop,
            explainer=explainer,
            k=2,
            seed=seed,
            lime_samples=40,
            options=options or None,
        )
    )


@pytest.mark.parametrize("name", ALL)
def test_chunks_join_into_the_whole_and_runs_repeat(model, dataset, name, monkeypatch):
    import rationale_metrics.explain as explain
    import rationale_metrics.models.classifier as classifier

    _, data = dataset
    options = {"steps": 8} if name == "integrated_gradients" else {}
    # Instances share forward passes in threes (0-2, 3-5, 6-7), blocks of two such groups
    # in the chunks: chunk edges fall inside the groups and the whole run's blocks.
    monkeypatch.setattr(classifier, "INSTANCE_BATCH", 3)
    monkeypatch.setattr(explain, "INSTANCE_BATCH", 3)
    whole = _lines(model, data, name, 0, 8, **options)
    monkeypatch.setattr(explain, "MODEL_BLOCK", 6)
    chunks = [
        line
        for a, b in ((0, 2), (2, 7), (7, 8))
        for line in _lines(model, data, name, a, b, **options)
    ]

    assert len(whole) == 8
    assert chunks == whole
    assert _lines(model, data, name, 0, 8, **options) == whole


def test_the_seed_decides_the_sampled_explainers(model, dataset):
    _, data = dataset

    for name in ("lime", "shap"):
        assert _lines(model, data, name, 0, 3, seed=1) != _lines(model, data, name, 0, 3, seed=2)


def test_a_line_is_complete_and_its_erasures_are_the_model_on_the_erased_words(model, dataset):
    from rationale_metrics.explain import instance_tokens
    from rationale_metrics.extensions import top_k_indices

    _, data = dataset
    line = json.loads(_lines(model, data, "occlusion", 0, 1)[0])
    inst = data.splits["test"][0]
    tokens, _ = instance_tokens(data, inst)
    scores = np.concatenate([r["soft_rationale_predictions"] for r in line["rationales"]])
    top = set(top_k_indices(scores, 2).tolist())
    without = [t for i, t in enumerate(tokens) if i not in top]
    alone = [t for i, t in enumerate(tokens) if i in top]
    expected = model.predict_proba([tokens, without, alone], [QUERY] * 3)

    assert line["classification"] == model.labels[int(np.argmax(expected[0]))]
    for label, column in (("NEG", 0), ("POS", 1)):
        assert line["classification_scores"][label] == pytest.approx(expected[0, column], abs=1e-6)
        assert line["comprehensiveness_classification_scores"][label] == pytest.approx(
            expected[1, column], abs=1e-6
        )
        assert line["sufficiency_classification_scores"][label] == pytest.approx(
            expected[2, column], abs=1e-6
        )
    assert [t["threshold"] for t in line["thresholded_scores"]] == [0.01, 0.05, 0.1, 0.2, 0.5]
    assert sum(len(r["soft_rationale_predictions"]) for r in line["rationales"]) == len(tokens)


def test_faithfulness_equals_a_plain_loop_over_erasures(model_of_each_seed):
    import itertools
    import math

    from rationale_metrics.extensions import top_k_indices
    from rationale_metrics.models import MODEL_EXPLAINERS
    from rationale_metrics.models.faithfulness import LOO_TIE, model_faithfulness

    model = model_of_each_seed
    inputs = _inputs(5)
    encoded = [model.encode(inp) for inp in inputs]
    scores = MODEL_EXPLAINERS["gradient_x_input"](model, encoded, [1] * 5, [None] * 5)
    bins = (0.1, 0.3, 0.5)
    measured = model_faithfulness(model, inputs, scores, k=3, aopc_thresholds=bins)

    def p(words):
        return model.predict_proba([words], [QUERY])[0]

    for inp, s, got in zip(inputs, scores, measured, strict=True):
        words = list(inp.words)
        full = p(words)
        y = int(np.argmax(full))

        def drop(kept, y=y, full=full):
            return full[y] - p(kept)[y]

        def top(count, s=s):
            return set(top_k_indices(s, count).tolist())

        def without(chosen, words=words):
            return [w for i, w in enumerate(words) if i not in chosen]

        def only(chosen, words=words):
            return [w for i, w in enumerate(words) if i in chosen]

        def tau_b(loo, s=s):
            """Kendall's tau-b pair by pair; drops within LOO_TIE are a tie."""
            concordant = discordant = untied_loo = untied_s = 0
            for i, j in itertools.combinations(range(len(s)), 2):
                a = 0 if abs(loo[i] - loo[j]) <= LOO_TIE else np.sign(loo[i] - loo[j])
                b = np.sign(s[i] - s[j])
                untied_loo += a != 0
                untied_s += b != 0
                concordant += a * b > 0
                discordant += a * b < 0
            if untied_loo * untied_s == 0:
                return math.nan
            return (concordant - discordant) / math.sqrt(untied_loo * untied_s)

        counts = [math.ceil(b * len(words)) for b in bins]
        loo = [drop(without({i})) for i in range(len(words))]
        assert got.label_index == y
        assert got.comprehensiveness == pytest.approx(drop(without(top(3))), abs=1e-6)
        assert got.sufficiency == pytest.approx(drop(only(top(3))), abs=1e-6)
        assert got.aopc_comprehensiveness == pytest.approx(
            np.mean([drop(without(top(c))) for c in counts]), abs=1e-6
        )
        assert got.aopc_sufficiency == pytest.approx(
            np.mean([drop(only(top(c))) for c in counts]), abs=1e-6
        )
        # NaN on both sides when every drop ties: no order to compare.
        assert got.tau_loo == pytest.approx(tau_b(loo), abs=1e-6, nan_ok=True)


def test_the_benchmark_format_with_a_sentence_pair_model(model, tmp_path):
    from rationale_metrics.benchmark_format import BenchmarkInstance
    from rationale_metrics.explain import explain_benchmark

    texts, labels = _texts(4, seed=5)
    gold = [
        BenchmarkInstance(
            sent_id=i,
            sample_type="ori",
            rel_ids=[],
            label=label,
            tokens=[words[: len(words) // 2], words[len(words) // 2 :]],
            rationale_sets=[[], []],
            line=i + 1,
        )
        for i, (words, label) in enumerate(zip(texts, labels, strict=True))
    ]
    out = tmp_path / "pred.jsonl"

    count = explain_benchmark(
        gold, task="similarity", explainer="shap", out_path=out, ratios=[0.3, 0.3], model=model
    )

    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert count == 4
    for inst, line in zip(gold, lines, strict=True):
        assert [len(r) for r in line["rationale"]] == [math_ceil(0.3 * len(s)) for s in inst.tokens]
        assert line["pred_label"] in ("NEG", "POS")
    with pytest.raises(
        ValueError, match="reading comprehension with QA models is not supported yet"
    ):
        explain_benchmark(
            gold,
            task="reading_comprehension",
            explainer="shap",
            out_path=out,
            ratios=None,
            model=model,
        )


def math_ceil(x):
    import math

    return math.ceil(x)


def test_unknown_explainers_and_options_are_refused(model, dataset):
    _, data = dataset

    with pytest.raises(ValueError, match="unknown explainer 'linear' for a Transformers model"):
        _lines(model, data, "linear", 0, 1)
    with pytest.raises(ValueError, match="unknown option 'stepz'"):
        _lines(model, data, "integrated_gradients", 0, 1, stepz=3)
    with pytest.raises(ValueError, match="baseline 'ones'"):
        _lines(model, data, "integrated_gradients", 0, 1, baseline="ones")


def test_the_command_trains_a_tiny_model_and_explains_with_it(dataset, tmp_path, capsys):
    from rationale_metrics.cli import main

    folder, _ = dataset
    model_folder = tmp_path / "tiny"
    trained = main(
        [
            "train-tiny-model",
            "--data_dir",
            str(folder),
            "--split",
            "test",
            "--out",
            str(model_folder),
            "--epochs",
            "1",
        ]
    )
    out = tmp_path / "pred.jsonl"
    explained = main(
        [
            "explain",
            "--data_dir",
            str(folder),
            "--split",
            "test",
            "--model",
            str(model_folder),
            "--explainer",
            "integrated_gradients",
            "--ig_steps",
            "4",
            "--device",
            "cpu",
            "--results",
            str(out),
        ]
    )
    scored = main(
        [
            "score",
            "--data_dir",
            str(folder),
            "--split",
            "test",
            "--results",
            str(out),
            "--score_file",
            str(tmp_path / "s.json"),
        ]
    )

    assert (trained, explained, scored) == (0, 0, 0)
    assert (model_folder / "model.safetensors").is_file()
    assert len(out.read_text().splitlines()) == 8
    assert (
        "comprehensiveness"
        in json.loads((tmp_path / "s.json").read_text())["classification_scores"]
    )
    refused = main(
        [
            "explain",
            "--data_dir",
            str(folder),
            "--model",
            str(model_folder),
            "--explainer",
            "linear",
            "--results",
            str(out),
        ]
    )
    assert refused == 2
    assert "unknown explainer 'linear'" in capsys.readouterr().err


def test_blocks_start_on_the_groups_that_share_forward_passes(monkeypatch):
    import rationale_metrics.explain as explain

    monkeypatch.setattr(explain, "INSTANCE_BATCH", 3)
    monkeypatch.setattr(explain, "MODEL_BLOCK", 6)

    assert list(explain.model_blocks(range(2, 7), 8)) == [range(0, 6), range(6, 8)]
    assert list(explain.model_blocks(range(7, 8), 8)) == [range(6, 8)]
    assert list(explain.model_blocks(range(0, 12), 20)) == [range(0, 6), range(6, 12)]


@pytest.mark.parametrize("name", ["gradient", "gradient_x_input", "integrated_gradients"])
def test_inputs_batched_together_get_their_own_scores(model, name, monkeypatch):
    """Batching changes rounding only: the gradients of a batch's inputs do not mix."""
    import rationale_metrics.models.classifier as classifier
    from rationale_metrics.models import MODEL_EXPLAINERS

    encoded = [model.encode(inp) for inp in _inputs(5)]
    targets = [0, 1, 1, 0, 1]
    options = {"steps": 8} if name == "integrated_gradients" else {}
    batched = MODEL_EXPLAINERS[name](model, encoded, targets, [None] * 5, **options)
    monkeypatch.setattr(classifier, "INSTANCE_BATCH", 1)
    alone = MODEL_EXPLAINERS[name](model, encoded, targets, [None] * 5, **options)

    for together, apart in zip(batched, alone, strict=True):
        np.testing.assert_allclose(together, apart, rtol=0, atol=1e-6)
