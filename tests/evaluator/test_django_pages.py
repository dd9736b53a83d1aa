"""The evaluator's pages: job list, live job detail, the judge page, starting a verification, and the
role each one needs."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from evaluator.models import EvaluationJob
from evaluator.services import evaluation_run

from . import test_django_support as support
from .test_django_support import CORRECT_ADD, WRONG_ADD, verdict_of

pytestmark = pytest.mark.django_db

# the shared fixtures, bound here so pytest finds them in this module
_eager_and_in_memory = support._eager_and_in_memory
make_problem = support.make_problem
problem = support.problem
job = support.job




def _pages(job: EvaluationJob) -> list[str]:
    return [reverse("evaluator:job-list"), reverse("evaluator:job-detail", args=[job.pk]), reverse("evaluator:judge")]


def test_it_sends_anonymous_visitors_to_the_login_page(job: EvaluationJob) -> None:
    for url in _pages(job):
        r = Client().get(url)
        assert (r.status_code, r.url.split("?")[0]) == (302, reverse("login")), url


def test_it_forbids_every_page_to_an_outsider(client_as: Any, outsider: Any, job: EvaluationJob) -> None:
    for url in _pages(job):
        assert client_as(outsider).get(url).status_code == 403, url


def test_it_shows_jobs_to_a_viewer(client_as: Any, viewer: Any, job: EvaluationJob) -> None:
    r = client_as(viewer).get(reverse("evaluator:job-list"))
    assert r.status_code == 200
    assert reverse("evaluator:job-detail", args=[job.pk]).encode() in r.content
    assert reverse("evaluator:judge").encode() not in r.content  # a viewer cannot judge code


def test_it_forbids_the_judge_page_to_a_viewer(client_as: Any, viewer: Any) -> None:
    assert client_as(viewer).get(reverse("evaluator:judge")).status_code == 403


def test_it_streams_a_running_job_over_its_websocket_without_external_scripts(
    client_as: Any, viewer: Any, job: EvaluationJob
) -> None:
    html = client_as(viewer).get(reverse("evaluator:job-detail", args=[job.pk])).content.decode()
    assert f'data-ws-path="/ws/evaluations/{job.pk}/"' in html
    assert '<script src="/static/js/live.js"></script>' in html  # the shared socket client
    assert not re.search(r"<script[^>]+src=[\"']https?://", html)


def test_it_shows_the_per_test_verdict_of_a_finished_job(client_as: Any, viewer: Any, job: EvaluationJob) -> None:
    evaluation_run(job_id=job.pk)
    html = client_as(viewer).get(reverse("evaluator:job-detail", args=[job.pk])).content.decode()
    method = verdict_of(EvaluationJob.objects.get(pk=job.pk))["method"]
    assert "5 / 5</strong> tests passed" in html
    assert f"accepted by <code>{method}</code>" in html
    assert html.count('<span class="badge ok">AC</span>') >= 6  # the summary and five tests


def test_it_judges_pasted_code_on_the_judge_page(client_as: Any, trainer: Any, problem: Any) -> None:
    r = client_as(trainer).post(reverse("evaluator:judge"), {"problem": problem.pk, "code": WRONG_ADD})
    assert r.status_code == 200
    html = r.content.decode()
    assert '<span class="badge bad">WA</span>' in html
    assert "0 / 5</strong> tests passed" in html
    assert EvaluationJob.objects.get().status == "succeeded"


def test_it_preselects_the_problem_given_in_the_query(client_as: Any, curator: Any, problem: Any) -> None:
    html = client_as(curator).get(reverse("evaluator:judge"), {"problem": problem.pk}).content.decode()
    assert f'name="problem" min="1" list="problem-choices" value="{problem.pk}"' in html


def test_it_sends_a_big_submission_to_the_queue_and_its_live_page(
    client_as: Any, trainer: Any, problem: Any, settings: Any
) -> None:
    settings.EVALUATION_SYNC_MAX_TESTS = 2
    r = client_as(trainer).post(reverse("evaluator:judge"), {"problem": problem.pk, "code": CORRECT_ADD})
    job = EvaluationJob.objects.get()
    assert (r.status_code, r.url) == (302, reverse("evaluator:job-detail", args=[job.pk]))


def test_it_explains_an_unknown_problem_on_the_judge_page(client_as: Any, trainer: Any) -> None:
    r = client_as(trainer).post(reverse("evaluator:judge"), {"problem": 31337, "code": CORRECT_ADD})
    assert r.status_code == 200
    assert b"problem 31337 does not exist" in r.content


def test_it_starts_a_verification_from_the_job_list_for_a_curator(
    client_as: Any, curator: Any, problem: Any
) -> None:
    r = client_as(curator).post(reverse("evaluator:verify"), {"problems": f"{problem.pk}"})
    job = EvaluationJob.objects.get()
    assert (job.kind, r.url) == ("verify_references", reverse("evaluator:job-detail", args=[job.pk]))


def test_it_forbids_starting_a_verification_to_a_trainer(client_as: Any, trainer: Any, problem: Any) -> None:
    assert client_as(trainer).post(reverse("evaluator:verify"), {"problems": f"{problem.pk}"}).status_code == 403


def test_it_cancels_a_job_from_its_page_for_its_creator(client_as: Any, trainer: Any, job: EvaluationJob) -> None:
    r = client_as(trainer).post(reverse("evaluator:job-cancel", args=[job.pk]))
    assert r.status_code == 302
    assert EvaluationJob.objects.get(pk=job.pk).status == "cancelled"


def test_it_judges_cpp_chosen_on_the_judge_page_and_shows_the_language_on_the_job(
    client_as: Any, trainer: Any, problem: Any
) -> None:
    code = "#include <iostream>\nint main() { long a, b; std::cin >> a >> b; std::cout << a + b << '\\n'; }\n"
    client = client_as(trainer)
    assert '<option value="cpp">C++ (g++)</option>' in client.get(reverse("evaluator:judge")).content.decode()
    r = client.post(reverse("evaluator:judge"), {"problem": problem.pk, "code": code, "language": "cpp"})
    assert '<span class="badge ok">AC</span>' in r.content.decode()
    job = EvaluationJob.objects.get()
    assert job.language == "cpp"
    assert "Language: C++" in client.get(reverse("evaluator:job-detail", args=[job.pk])).content.decode()
