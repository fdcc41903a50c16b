"""ferret's side of bench/model_explain.py, run by the Python of ferret's own virtual
environment (never the project's): it imports nothing from this repository.

Reads a JSON job (model folder, texts, targets, our scores per piece) and writes a JSON
answer: per explainer, seconds to explain and evaluate every text with ferret (AOPC
comprehensiveness and sufficiency, tau leave-one-out), and ferret's metrics of our own
explanations, to compare the definitions both share.

    /work/ferret-venv/bin/python bench/ferret_runner.py JOB.json ANSWER.json
"""

import json
import sys
import time
import warnings

warnings.filterwarnings("ignore")


def main(job_path: str, answer_path: str) -> None:
    import numpy as np
    import torch
    from ferret.evaluators.faithfulness_measures import (
        AOPC_Comprehensiveness_Evaluation,
        AOPC_Sufficiency_Evaluation,
        TauLOO_Evaluation,
    )
    from ferret.explainers.explanation import Explanation
    from ferret.explainers.gradient import GradientExplainer, IntegratedGradientExplainer
    from ferret.explainers.lime import LIMEExplainer
    from ferret.explainers.shap import SHAPExplainer
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    with open(job_path) as handle:
        job = json.load(handle)
    torch.manual_seed(0)
    try:
        tokenizer = AutoTokenizer.from_pretrained(job["model"], local_files_only=True)
    except ValueError:
        # A tokenizer saved by transformers 5 names a class that ferret's transformers 4
        # lacks; its tokenizer.json and special tokens are all a fast tokenizer needs.
        from transformers import PreTrainedTokenizerFast

        with open(f"{job['model']}/tokenizer_config.json") as handle:
            config = json.load(handle)
        special = ("unk_token", "pad_token", "cls_token", "sep_token", "mask_token")
        tokenizer = PreTrainedTokenizerFast(
            tokenizer_file=f"{job['model']}/tokenizer.json",
            model_max_length=config.get("model_max_length", 512),
            **{name: config[name] for name in special if name in config},
        )
    model = AutoModelForSequenceClassification.from_pretrained(job["model"], local_files_only=True)
    model.eval()
    evaluators = {
        "comprehensiveness": AOPC_Comprehensiveness_Evaluation(model, tokenizer),
        "sufficiency": AOPC_Sufficiency_Evaluation(model, tokenizer),
        "tau_loo": TauLOO_Evaluation(model, tokenizer),
    }
    explainers = {
        "gradient": (GradientExplainer(model, tokenizer, multiply_by_inputs=False), {}),
        "gradient_x_input": (GradientExplainer(model, tokenizer, multiply_by_inputs=True), {}),
        "integrated_gradients": (
            IntegratedGradientExplainer(model, tokenizer),
            {"call_args": {"n_steps": job["ig_steps"]}},
        ),
        "lime": (LIMEExplainer(model, tokenizer), {"call_args": {"num_samples": job["samples"]}}),
        "shap": (SHAPExplainer(model, tokenizer), {"call_args": {"max_evals": job["samples"]}}),
    }
    k = job["k"]
    # ferret's only_pos=False path fails on numpy arrays (0.4.2); our scores are shifted to be
    # positive below instead, which keeps their order and so the top k and Kendall's tau.
    at_k = {"removal_args": {"based_on": "k", "thresholds": [k]}}

    def evaluate(explanation, target):
        return {
            name: float(
                evaluator.compute_evaluation(
                    explanation, target, **({} if name == "tau_loo" else at_k)
                ).score
            )
            for name, evaluator in evaluators.items()
        }

    answer = {"seconds": {}, "ours_by_ferret": []}
    for name in job["explainers"]:
        if name not in explainers:
            continue
        explainer, args = explainers[name]
        started = time.perf_counter()
        for text, target in zip(job["texts"], job["targets"], strict=True):
            explanation = explainer(text, target, **args)
            evaluate(explanation, target)
        answer["seconds"][name] = time.perf_counter() - started
    for text, target, pieces in zip(
        job["texts"], job["targets"], job["our_piece_scores"], strict=True
    ):
        tokens = tokenizer.convert_ids_to_tokens(tokenizer(text, truncation=True)["input_ids"])
        pieces = np.asarray(pieces) - min(pieces) + 1.0
        scores = np.array([0.0, *pieces, 0.0])
        if len(scores) != len(tokens):
            answer["ours_by_ferret"].append(None)
            continue
        answer["ours_by_ferret"].append(
            evaluate(Explanation(text, tokens, scores, "ours", target), target)
        )
    with open(answer_path, "w") as handle:
        json.dump(answer, handle)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
