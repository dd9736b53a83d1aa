"""An endpoint evaluation end to end: the real task (eager) on the ``evaluate`` queue, the real ``openai``
client against a local OpenAI-compatible server, the real judge; the key comes from the environment."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.support.openai_server import FakeOpenAIServer, Reply
from training.models import EvalStatus, ModelEvaluation, ModelEvaluationProblem
from training.services.evaluations import model_evaluation_create, model_evaluation_start
from training.tiny import TOY_TASKS, toy_completion

from .evaluation_support import make_release, toy_records

pytestmark = pytest.mark.django_db


def _answers_only_double(body: dict[str, Any], call_number: int) -> Reply:
    prompt = body["messages"][-1]["content"]
    for ext, what, program in TOY_TASKS:
        if f"print {what}." in prompt:
            return Reply(content=toy_completion(program if ext == "double" else "print(0)"))
    return Reply(content="no idea")


def test_an_endpoint_is_evaluated_with_the_key_from_the_worker_environment(
    tmp_path: Path, curator: Any, monkeypatch: pytest.MonkeyPatch, django_capture_on_commit_callbacks: Any
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-the-worker")
    release = make_release(tmp_path, toy_records())
    with FakeOpenAIServer(_answers_only_double) as server:
        evaluation = model_evaluation_create(
            user=curator, engine="openai", model="served-model", base_url=server.base_url, release_id=release.pk,
            k=2, temperature=0.7, max_tokens=64,
        )
        with django_capture_on_commit_callbacks(execute=True):  # the eager task runs on commit
            model_evaluation_start(evaluation_id=evaluation.pk)
    evaluation = ModelEvaluation.objects.get(pk=evaluation.pk)
    assert evaluation.status == EvalStatus.SUCCEEDED, evaluation.reason
    assert evaluation.queue == "evaluate" and evaluation.summary["pass@1"] == 0.25
    solved = ModelEvaluationProblem.objects.get(evaluation=evaluation, passed__gt=0)
    assert (solved.external_id, solved.passed, solved.attempts) == ("double", 2, 2)
    assert len(server.requests) == 8 and {b["model"] for b in server.requests} == {"served-model"}
    assert {b["temperature"] for b in server.requests} == {0.7}
    assert {h["authorization"] for h in server.headers} == {"Bearer sk-from-the-worker"}
