"""End to end: the tiny local model evaluated on the toy release through the real task, the real
transformers source and the real judge (no fakes)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.training.test_django_real_run import tiny_model  # noqa: F401 - the module-scoped model fixture
from training.models import EvalStatus, ModelEvaluation, ModelEvaluationProblem, ModelEvaluationSample
from training.services.evaluations import model_evaluation_create, model_evaluation_start

from .evaluation_support import make_release, toy_records

pytestmark = pytest.mark.django_db


def test_the_tiny_model_is_evaluated_on_the_toy_release_end_to_end(
    tiny_model: Path, tmp_path: Path, trainer: Any, django_capture_on_commit_callbacks: Any  # noqa: F811
) -> None:
    release = make_release(tmp_path, toy_records())
    evaluation = model_evaluation_create(
        user=trainer, engine="transformers", model=str(tiny_model), release_id=release.pk, k=2, max_tokens=12,
        temperature=1.0, top_p=1.0,
    )
    with django_capture_on_commit_callbacks(execute=True):  # the eager task runs on commit
        model_evaluation_start(evaluation_id=evaluation.pk)
    evaluation = ModelEvaluation.objects.get(pk=evaluation.pk)
    assert evaluation.status == EvalStatus.SUCCEEDED, evaluation.reason
    assert (evaluation.problems_done, evaluation.samples_done, evaluation.attempts) == (4, 8, 1)
    rows = list(ModelEvaluationProblem.objects.filter(evaluation=evaluation))
    assert all(r.attempts + r.infra_errors == 2 and len(r.verdicts) == 2 for r in rows)
    verdicts = set(ModelEvaluationSample.objects.filter(evaluation=evaluation).values_list("verdict", flat=True))
    assert verdicts <= {"AC", "WA", "RE", "CE", "TLE", "MLE", "NA", "IE"}
    assert 0.0 <= evaluation.summary["pass@1"] <= 1.0 and evaluation.summary["k"] == 2
    assert evaluation.reason == "evaluated 4 problems, 8 samples (k=2)"
