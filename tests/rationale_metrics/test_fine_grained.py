"""The fine-grained benchmark's metrics: worked by hand, then against a plain re-implementation."""

import math
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rationale_metrics.benchmark_format import BenchmarkInstance, BenchmarkPrediction
from rationale_metrics.fine_grained import (
    FineGrainedOptions,
    choose_gold,
    consistency_map,
    gold_ratios,
    resolve_ratios,
    score_fine_grained,
    token_f1,
    top_k_count,
)
from tests.hypothesis_budget import examples


def instance(sent_id, tokens, sets, *, kind="ori", rel_ids=(), label=1):
    """`tokens` and `sets`: one entry per sentence."""
    return BenchmarkInstance(
        sent_id=sent_id,
        sample_type=kind,
        label=label,
        tokens=tokens,
        rationale_sets=sets,
        rel_ids=list(rel_ids),
    )


def prediction(sent_id, rationale, labels=(1, 1, 0), tokens=None):
    label, on_rationale, on_rest = labels
    return BenchmarkPrediction(
        id=sent_id,
        rationale=rationale,
        rationale_tokens=tokens,
        pred_label=label,
        rationale_pred=on_rationale,
        no_rationale_pred=on_rest,
    )


# ---------------------------------------------------------------- worked by hand


def test_a_repeated_predicted_index_counts_twice_in_precision():
    # tp = {2}: precision 1/2 (the list has two entries), recall 1/1: F1 = 2/3.
    assert token_f1([2], [2, 2]) == pytest.approx(2 / 3)


def test_the_greedy_union_joins_sets_that_together_match_the_prediction():
    sets = [[0, 1], [2, 3], [5]]
    predicted = [0, 1, 2, 3]
    # Alone, [0, 1] and [2, 3] each have precision 1/2, recall 1: F1 2/3; [5] has 0.
    # From the first set: [0, 1] (2/3), then [2, 3] raises the union to precision 1,
    # recall 1; [5] has F1 0 on its own and is skipped.

    assert choose_gold(sets, predicted) == [0, 1, 2, 3]
    assert choose_gold(sets, predicted, gold_choice="best_single_set") == [0, 1]


def test_nothing_overlapping_gives_an_empty_gold():
    assert choose_gold([[0], [1]], [2, 3]) == []


def test_float_rounding_and_exact_comparison_pick_different_single_sets():
    sets = [[1, 3, 4, 5, 6], [3, 6]]
    predicted = [1, 2, 3, 6]
    # First set: tp {1, 3, 6}, p = 3/4, r = 3/5, F1 = 2/3, but 2 * 0.75 * 0.6 / 1.35 is
    # 0.6666666666666665 in floats. Second: tp {3, 6}, p = 1/2, r = 1: 1 / 1.5 is
    # 0.6666666666666666. Floats see the second as strictly higher; fractions see a tie,
    # which the earlier set wins. The second is covered by the first: no union is better.

    assert choose_gold(sets, predicted) == [3, 6]
    assert choose_gold(sets, predicted, exact=True) == [1, 3, 4, 5, 6]


def test_float_rounding_and_exact_comparison_build_different_unions():
    a, b, c = [0, 5, 6, 7], [1, 2, 8], [1]
    predicted = [0, 1, 3, 5, 6]
    # Alone: a has tp {0, 5, 6}, p 3/5, r 3/4: F1 2/3 (float 0.6666666666666665);
    # b has tp {1}, p 1/5, r 1/3: F1 1/4; c has tp {1}, p 1/5, r 1: F1 1/3. Best single: a.
    # Union from a: adding b gives 7 tokens, tp {0, 1, 5, 6}, p 4/5, r 4/7: F1 2/3 again,
    # but 0.6666666666666666 in floats, "strictly higher": floats take b, and then c is
    # already covered. Fractions see no gain, skip b, and take c: 5 tokens, tp 4,
    # p = r = 4/5, F1 4/5. From b: c is covered; 1/4 stays below.
    union_by_floats = sorted(a + b)
    union_by_fractions = sorted(a + c)

    assert choose_gold([a, b, c], predicted) == union_by_floats
    assert choose_gold([a, b, c], predicted, exact=True) == union_by_fractions
    assert token_f1(union_by_floats, predicted) == pytest.approx(2 / 3)
    assert token_f1(union_by_fractions, predicted, exact=True) == Fraction(4, 5)

    gold = [instance(1, [list("abcdefghi")], [[a, b, c]], rel_ids=[])]
    predictions = [prediction(1, [predicted])]
    by_floats = score_fine_grained(gold, predictions)["plausibility"]["token_f1"]
    by_fractions = score_fine_grained(gold, predictions, FineGrainedOptions(comparison="exact"))
    assert by_floats == pytest.approx(2 / 3)
    assert by_fractions["plausibility"]["token_f1"] == pytest.approx(0.8)


def test_top_k_is_the_ceiling_of_the_float_product_as_the_public_pipeline_computes_it():
    assert top_k_count(10, 0.192) == 2  # 1.92
    assert top_k_count(5, 0.5) == 3  # 2.5
    assert top_k_count(25, 0.28) == 8  # 25 * 0.28 is 7.000000000000001 in floats


def test_pairs_average_their_two_sentences_and_count_iou_per_sentence():
    gold = [instance(1, [["w", "x", "y", "z"], ["p", "q", "r", "s"]], [[[0, 1]], [[2]]])]
    predictions = [prediction(1, [[0, 3], [2]])]
    # First sentence: tp {0}, p 1/2, r 1/2: F1 1/2; IoU {0, 3} vs {0, 1} = 1/3: no match.
    # Second: [2] vs [2]: F1 1, IoU 1: a match. Instance F1 (1/2 + 1) / 2 = 3/4.

    scores = score_fine_grained(gold, predictions)

    assert scores["plausibility"]["token_f1"] == pytest.approx(0.75)
    assert scores["plausibility"]["iou_match_rate"] == pytest.approx(0.5)


def test_a_perturbed_instance_without_a_prediction_counts_zero_everywhere():
    tokens = [["it", "is", "great", "fun"]]
    gold = [
        instance(1, tokens, [[[2]]], rel_ids=[2, 3]),
        instance(2, [["it", "is", "good", "fun"]], [[[2]]], kind="disturb"),
        instance(3, [["it", "was", "great", "fun"]], [[[2]]], kind="disturb"),
    ]
    predictions = [
        prediction(1, [[2, 3]], labels=(1, 1, 0)),
        prediction(2, [[3, 2]], labels=(1, 1, 1)),
    ]
    # F1: each has tp {2}, p 1/2, r 1 -> 2/3; (2/3 + 2/3 + 0 for id 3) / 3 gold = 4/9.
    # IoU {2, 3} vs {2} = 1/2 for both predictions: 2 matches of 2 predicted sentences.
    # MAP of O = [great, fun], P = [fun, good]: i=1: "fun" not in [great] -> 0;
    # i=2: "fun" in [great, fun], "good" not -> 1/2; MAP = (0 + 1/2) / 2 = 1/4. The pair
    # (1, 3) has no prediction for 3: the sum 1/4 is divided by 2 perturbed -> 1/8.
    # New-P: only id 1 keeps its label on the rationale and loses it on the rest: 1/3.

    scores = score_fine_grained(gold, predictions)

    assert scores["plausibility"]["token_f1"] == pytest.approx(4 / 9)
    assert scores["plausibility"]["iou_match_rate"] == pytest.approx(1.0)
    assert scores["consistency"]["map"] == pytest.approx(1 / 8)
    assert scores["faithfulness"]["new_p"] == pytest.approx(1 / 3)
    assert scores["counts"]["pairs_scored"] == 1


def test_chinese_character_tokens_compare_by_text_in_map():
    original = [list("好看的电影")]
    perturbed = [list("好的电影片")]
    gold = [
        instance("a", original, [[[0, 1]]], rel_ids=["b"]),
        instance("b", perturbed, [[[0]]], kind="disturb"),
    ]
    rationale_tokens = {"a": [["好", "看", "电"]], "b": [["好", "电", "影"]]}
    # i=1: 好 in [好] -> 1; i=2: 好 yes, 电 not in [好, 看] -> 1/2;
    # i=3: 好 and 电 in [好, 看, 电], 影 not -> 2/3. MAP = (1 + 1/2 + 2/3) / 3 = 13/18.

    map_score, pairs = consistency_map(gold, rationale_tokens)

    assert map_score == pytest.approx(13 / 18)
    assert pairs == 1


def test_a_repeated_token_string_counts_at_each_position_in_map():
    gold = [
        instance(1, [["好", "好", "x"]], [[[0]]], rel_ids=[2]),
        instance(2, [["好", "好", "y"]], [[[0]]], kind="disturb"),
    ]
    # O = [好, x], P = [好, 好]: i=1 -> 1; i=2: both 好 are in [好, x] -> 2/2. MAP 1.
    assert consistency_map(gold, {1: [["好", "x"]], 2: [["好", "好"]]})[0] == 1.0


def test_the_ratio_keeps_the_top_of_each_ranking_and_its_tokens():
    gold = [
        instance(1, [list("abcde")], [[[0]]], rel_ids=[2]),
        instance(2, [list("abcdf")], [[[0]]], kind="disturb"),
    ]
    predictions = [prediction(1, [[0, 4, 3, 2, 1]]), prediction(2, [[4, 0, 1, 2, 3]])]
    # ratio 0.2 on 5 tokens keeps 1: [0] against gold [0] -> F1 1; [4] -> F1 0.
    # MAP over [a] and [f]: 0.
    scores = score_fine_grained(gold, predictions, FineGrainedOptions(ratios=(0.2,)))

    assert scores["plausibility"]["token_f1"] == pytest.approx(0.5)
    assert scores["consistency"]["map"] == 0.0


def test_ratios_published_gold_none_and_given():
    gold = [instance(1, [list("abcd")], [[[0], [0, 1]]]), instance(2, [list("ab")], [[[1]]])]
    # Unions: {0, 1} of 4 tokens = 1/2 and {1} of 2 = 1/2: mean 1/2.

    assert resolve_ratios(["published"], "similarity", "zh", gold) == ((0.701, 0.709), "published")
    assert gold_ratios(gold) == (0.5,)
    assert resolve_ratios(["gold"], "sentiment", "en", gold) == ((0.5,), "gold")
    assert resolve_ratios(["none"], "sentiment", "en", gold) == (None, "none")
    assert resolve_ratios(["0.3"], "similarity", "en", gold) == ((0.3, 0.3), "given")
    with pytest.raises(ValueError, match="1 or 1 number"):
        resolve_ratios(["0.3", "0.4"], "sentiment", "en", gold)


def test_new_p_is_none_without_labels_and_map_is_none_without_perturbations():
    gold = [instance(1, [["a"]], [[[0]]])]
    unlabelled = BenchmarkPrediction(id=1, rationale=[[0]])

    scores = score_fine_grained(gold, [unlabelled])

    assert scores["faithfulness"]["new_p"] is None
    assert scores["consistency"]["map"] is None


# ---------------------------------------------------------------- against a plain version


def plain_f1(gold, predicted, divide):
    tp = len(set(gold) & set(predicted))
    precision = divide(tp, len(predicted)) if predicted else 0
    recall = divide(tp, len(gold)) if gold else 0
    if precision == 0 or recall == 0:
        return 0
    return 2 * precision * recall / (precision + recall)


def plain_gold(sets, predicted, divide, unions):
    best, gold = 0, []
    for s in sets:
        if plain_f1(s, predicted, divide) > best:
            best, gold = plain_f1(s, predicted, divide), s
    for start in range(len(sets) - 1 if unions else 0):
        union, union_f1 = set(), 0
        for s in sets[start:]:
            if set(s) <= union or plain_f1(s, predicted, divide) <= 0:
                continue
            if plain_f1(union | set(s), predicted, divide) > union_f1:
                union = union | set(s)
                union_f1 = plain_f1(union, predicted, divide)
        if union_f1 > best:
            best, gold = union_f1, union
    return list(gold) if best > 0 else []


def plain_map(original, perturbed):
    if not perturbed:
        return 0
    total = 0
    for i in range(1, len(perturbed) + 1):
        total += sum(1 for token in perturbed[:i] if token in original[:i]) / i
    return total / len(perturbed)


def plain_scores(gold, predictions, divide, unions, ratios):
    by_id = {g.sent_id: g for g in gold}
    f1_sum, matches, sentences, kept = 0, 0, 0, {}
    for p in predictions:
        g = by_id[p.id]
        f1s = []
        kept[p.id] = []
        for s, ranking in enumerate(p.rationale):
            top = ranking[: math.ceil(len(g.tokens[s]) * ratios[s])]
            kept[p.id].append([g.tokens[s][i] for i in top])
            chosen = plain_gold(g.rationale_sets[s], top, divide, unions)
            f1s.append(plain_f1(chosen, top, divide))
            inter, union = set(top) & set(chosen), set(top) | set(chosen)
            matches += bool(union) and len(inter) / len(union) >= 0.5
            sentences += 1
        f1_sum += sum(f1s) / len(f1s)
    perturbed = [g for g in gold if g.sample_type == "disturb"]
    n_sentences = len(gold[0].tokens)
    maps = []
    for s in range(n_sentences):
        total = 0
        for g in gold:
            if g.sample_type == "ori" and g.sent_id in kept:
                for other in g.rel_ids:
                    if other in kept:
                        total += plain_map(kept[g.sent_id][s], kept[other][s])
        maps.append(total / len(perturbed) if perturbed else None)
    hits = sum(1 for p in predictions if p.rationale_pred == p.pred_label != p.no_rationale_pred)
    return {
        "token_f1": float(f1_sum / len(gold)),
        "iou_match_rate": matches / sentences if sentences else 0.0,
        "map": sum(maps) / n_sentences if perturbed else None,
        "new_p": hits / len(gold),
    }


WORDS = ["good", "bad", "film", "plot", "very", "not", "好", "差"]


@st.composite
def scored_files(draw):
    n_sentences = draw(st.sampled_from([1, 2]))
    gold, next_id = [], 0

    def make(kind):
        nonlocal next_id
        next_id += 1
        tokens, sets = [], []
        for _ in range(n_sentences):
            words = draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=9))
            index = st.integers(0, len(words) - 1)
            unique_sets = st.lists(index, min_size=1, max_size=5, unique=True)
            count = draw(st.integers(0, 4)) if n_sentences == 1 else 1
            tokens.append(words)
            sets.append([draw(unique_sets) for _ in range(count)])
        return instance(next_id, tokens, sets, kind=kind)

    for _ in range(draw(st.integers(1, 5))):
        original = make("ori")
        copies = [make("disturb") for _ in range(draw(st.integers(0, 2)))]
        original.rel_ids = [c.sent_id for c in copies]
        gold += [original, *copies]
    predictions = []
    for inst in gold:
        if draw(st.booleans()) or not predictions:
            rationale = [
                draw(st.lists(st.integers(0, len(t) - 1), max_size=len(t) + 2)) for t in inst.tokens
            ]
            labels = tuple(draw(st.sampled_from([0, 1])) for _ in range(3))
            predictions.append(prediction(inst.sent_id, rationale, labels))
    draw(st.randoms()).shuffle(predictions)
    return gold, predictions


@settings(max_examples=examples(300), deadline=None)
@given(
    files=scored_files(),
    exact=st.booleans(),
    unions=st.booleans(),
    ratio=st.sampled_from([1.0, 0.5, 0.192]),
)
def test_scores_equal_a_plain_reading_of_the_definitions(files, exact, unions, ratio):
    gold, predictions = files
    ratios = (ratio,) * len(gold[0].tokens)
    divide = Fraction if exact else (lambda a, b: a / b)
    options = FineGrainedOptions(
        ratios=ratios,
        comparison="exact" if exact else "float",
        gold_choice="greedy_union" if unions else "best_single_set",
    )

    scores = score_fine_grained(gold, predictions, options)
    expected = plain_scores(gold, predictions, divide, unions, ratios)

    assert scores["plausibility"]["token_f1"] == pytest.approx(expected["token_f1"], abs=1e-12)
    assert scores["plausibility"]["iou_match_rate"] == pytest.approx(
        expected["iou_match_rate"], abs=1e-12
    )
    if expected["map"] is None:
        assert scores["consistency"]["map"] is None
    else:
        assert scores["consistency"]["map"] == pytest.approx(expected["map"], abs=1e-12)
    assert scores["faithfulness"]["new_p"] == pytest.approx(expected["new_p"], abs=1e-12)
