"""Model evaluation, Django-free: pass@k of a model or checkpoint on a release (issue 8).

    from training.evaluate import EvalSettings, evaluate, make_source
    source = make_source("transformers", "runs/x/checkpoint-300/model", device="cpu")
    summary = evaluate(rows, source, EvalSettings(k=4, temperature=0.6))
    summary.summary["pass@1"], summary.summary["ci95"]["pass@1"]

Command line: ``python -m training.evaluate --model M --engine transformers|vllm|openai --problems
RELEASE.jsonl --k 4 --temperature 0.6 [--after YYYY-MM-DD] > RESULTS.jsonl`` (``training.evaluate.cli``).
Modules: ``sources`` (the ModelSource interface, ``make_source``, per-sample seeds), ``hf_source`` /
``vllm_source`` / ``openai_source``, ``runner`` (``evaluate``, generation overlapped with judging),
``passk`` (estimator, bootstrap, breakdowns), ``stats`` (McNemar, paired bootstrap),
``contamination`` (13-gram overlap), ``problems`` (release rows, cut-off), ``results``, ``settings``.
"""

from __future__ import annotations

from training.evaluate.contamination import contamination_report, problem_key, statement_ngrams
from training.evaluate.passk import bootstrap_ci, format_summary, pass_at_k, summarize
from training.evaluate.problems import load_rows, select_problems
from training.evaluate.results import EvalSummary, ProblemResult, SampleResult
from training.evaluate.runner import evaluate, problem_result
from training.evaluate.settings import EvalSettings
from training.evaluate.sources import (
    ENGINES,
    Generation,
    ModelSource,
    SampleRequest,
    make_source,
    sample_seed,
)
from training.evaluate.stats import mcnemar, paired_bootstrap

__all__ = [
    "ENGINES",
    "EvalSettings",
    "EvalSummary",
    "Generation",
    "ModelSource",
    "ProblemResult",
    "SampleRequest",
    "SampleResult",
    "bootstrap_ci",
    "contamination_report",
    "evaluate",
    "format_summary",
    "load_rows",
    "make_source",
    "mcnemar",
    "paired_bootstrap",
    "pass_at_k",
    "problem_key",
    "problem_result",
    "sample_seed",
    "select_problems",
    "statement_ngrams",
    "summarize",
]
