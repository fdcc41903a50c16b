"""The tiny test model is decided by its data and seed alone: its WordPiece vocabulary is
built without the tokenizers library's trainer (whose ties fell differently from run to
run), and two trainings with one seed save byte-identical files."""

import pytest

from rationale_metrics.models import torch_available
from rationale_metrics.models.tiny import SPECIAL_TOKENS, wordpiece_vocabulary


def test_the_vocabulary_is_specials_then_characters_then_words_by_count_ties_alphabetical():
    words = ["ba", "ab", "ab", "c", "ba", "cab", "c"]

    vocabulary = wordpiece_vocabulary(words, vocab_size=14)

    assert list(vocabulary) == [
        *SPECIAL_TOKENS,
        "a",
        "b",
        "c",
        "##a",
        "##b",
        # "ab", "ba" and "c" are each there twice: alphabetical, and "c" is a character.
        "ab",
        "ba",
        "cab",
    ]
    assert list(vocabulary.values()) == list(range(len(vocabulary)))


def test_characters_stay_past_the_vocabulary_size_and_words_fill_what_is_left():
    vocabulary = wordpiece_vocabulary(["xyz", "xyz", "xy"], vocab_size=3)

    assert list(vocabulary) == [*SPECIAL_TOKENS, "x", "##y", "##z"]
    assert wordpiece_vocabulary(["xyz", "xyz", "xy"], vocab_size=9) == {
        **vocabulary,
        "xyz": 8,
    }


@pytest.mark.skipif(
    not torch_available(),
    reason="the models extra (torch, transformers, captum) is not installed",
)
def test_two_trainings_with_one_seed_save_the_same_bytes(tmp_path):
    import torch

    from rationale_metrics.models import train_tiny_model

    texts = [
        ["a", "good", "film"],
        ["a", "dull", "plot"],
        ["great", "story"],
        ["awful", "movie", "indeed"],
    ] * 4
    labels = ["POS", "NEG"] * 8
    state = torch.random.get_rng_state()

    folders = [
        train_tiny_model(texts, labels, tmp_path / name, seed=3, epochs=2, vocab_size=40)
        for name in ("first", "second")
    ]
    other = train_tiny_model(texts, labels, tmp_path / "other", seed=4, epochs=2, vocab_size=40)

    for name in ("tokenizer.json", "model.safetensors", "config.json"):
        assert (folders[0] / name).read_bytes() == (folders[1] / name).read_bytes(), name
    assert (folders[0] / "model.safetensors").read_bytes() != (
        other / "model.safetensors"
    ).read_bytes()
    assert (folders[0] / "tokenizer.json").read_bytes() == (other / "tokenizer.json").read_bytes()
    # The caller's own torch generator is left as it was.
    assert torch.equal(torch.random.get_rng_state(), state)
