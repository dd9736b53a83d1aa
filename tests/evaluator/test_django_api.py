"""The evaluations REST API: judging submitted code against stored problems, verify jobs, and who may
do what (personas)."""

from __future__ import annotations

from typing import Any

import pytest
from rest_framework.test import APIClient

from evaluator.models import EvaluationJob

from . import test_django_support as support
from .test_django_support import CORRECT_ADD, WRONG_ADD

pytestmark = pytest.mark.django_db

# the shared fixtures, bound here so pytest finds them in this module
_eager_and_in_memory = support._eager_and_in_memory
make_problem = support.make_problem
problem = support.problem
job = support.job

LIST = "/api/evaluations/"
VERIFY = "/api/evaluations/verify-references/"




def test_it_judges_a_small_submission_inside_the_request_when_asked_to_wait(
    api_as: Any, trainer: Any, problem: Any
) -> None:
    r = api_as(trainer).post(f"{LIST}?wait=1", {"problem": problem.pk, "code": CORRECT_ADD}, format="json")
    assert r.status_code == 200, r.content
    body = r.json()
    assert (body["status"], body["verdict"]["verdict"], body["verdict"]["passed"]) == ("succeeded", "AC", 5)
    assert body["verdict"]["method"]
    assert body["websocket_path"] == f"/ws/evaluations/{body['id']}/"


def test_it_reports_a_wrong_answer_as_the_verdict(api_as: Any, curator: Any, problem: Any) -> None:
    r = api_as(curator).post(f"{LIST}?wait=1", {"problem": problem.pk, "code": WRONG_ADD}, format="json")
    assert (r.status_code, r.json()["verdict"]["verdict"]) == (200, "WA")


def test_it_queues_a_submission_without_wait(api_as: Any, trainer: Any, problem: Any) -> None:
    r = api_as(trainer).post(LIST, {"problem": problem.pk, "code": CORRECT_ADD}, format="json")
    assert r.status_code == 202, r.content
    assert r.json()["status"] == "queued"  # the test's transaction never commits, so nothing ran
    assert EvaluationJob.objects.get(pk=r.json()["id"]).created_by == trainer


def test_it_queues_a_submission_too_big_to_judge_inside_the_request(
    api_as: Any, trainer: Any, problem: Any, settings: Any
) -> None:
    settings.EVALUATION_SYNC_MAX_TESTS = 2
    r = api_as(trainer).post(f"{LIST}?wait=1", {"problem": problem.pk, "code": CORRECT_ADD}, format="json")
    assert (r.status_code, r.json()["status"], r.json()["verdict"]) == (202, "queued", None)


def test_it_rejects_an_unknown_problem_with_a_reason(api_as: Any, trainer: Any) -> None:
    r = api_as(trainer).post(LIST, {"problem": 999999, "code": CORRECT_ADD}, format="json")
    assert r.status_code == 400
    assert "does not exist" in r.json()["detail"]


def test_it_rejects_an_unknown_checker(api_as: Any, trainer: Any, problem: Any) -> None:
    r = api_as(trainer).post(
        LIST, {"problem": problem.pk, "code": CORRECT_ADD, "checker": {"kind": "vibes"}}, format="json"
    )
    assert r.status_code == 400


def test_it_lists_jobs_to_a_viewer_without_their_code(api_as: Any, viewer: Any, job: EvaluationJob) -> None:
    r = api_as(viewer).get(LIST)
    assert r.status_code == 200
    (row,) = r.json()["results"]
    assert (row["id"], row["kind"], row["created_by"]) == (job.pk, "submission", "theo-trainer")
    assert "code" not in row


def test_it_filters_jobs_by_status(api_as: Any, viewer: Any, job: EvaluationJob) -> None:
    assert api_as(viewer).get(LIST, {"status": "succeeded"}).json()["count"] == 0
    assert api_as(viewer).get(LIST, {"status": "queued"}).json()["count"] == 1


def test_it_shows_a_job_with_its_code_and_results(api_as: Any, viewer: Any, job: EvaluationJob) -> None:
    body = api_as(viewer).get(f"{LIST}{job.pk}/").json()
    assert (body["code"], body["results"], body["problems"]) == (CORRECT_ADD, [], [job.problem_id])


def test_it_answers_404_for_an_unknown_job(api_as: Any, viewer: Any) -> None:
    assert api_as(viewer).get(f"{LIST}424242/").status_code == 404


def test_it_lets_the_creator_cancel_a_queued_job(api_as: Any, trainer: Any, job: EvaluationJob) -> None:
    r = api_as(trainer).post(f"{LIST}{job.pk}/cancel/")
    assert (r.status_code, r.json()["status"]) == (200, "cancelled")


def test_it_forbids_cancelling_someone_elses_job(
    api_as: Any, django_user_model: Any, job: EvaluationJob
) -> None:
    from django.contrib.auth.models import Group

    other = django_user_model.objects.create_user(username="tina-trainer", password="x" * 12)
    other.groups.add(Group.objects.get_or_create(name="trainer")[0])
    assert api_as(other).post(f"{LIST}{job.pk}/cancel/").status_code == 403
    assert EvaluationJob.objects.get(pk=job.pk).status == "queued"


def test_it_starts_a_reference_verification_for_a_curator(api_as: Any, curator: Any, problem: Any) -> None:
    r = api_as(curator).post(VERIFY, {"problems": [problem.pk]}, format="json")
    assert r.status_code == 202, r.content
    body = r.json()
    assert (body["kind"], body["problems"], body["progress_total"]) == ("verify_references", [problem.pk], 1)


def test_it_selects_problems_to_verify_with_a_release_filter(
    api_as: Any, curator: Any, make_problem: Any
) -> None:
    pending, other = make_problem("p1"), make_problem("p2")
    from evaluator.services import evaluation_run, references_verify

    evaluation_run(job_id=references_verify(problem_ids=[other.pk], user=curator, enqueue=False).pk)
    r = api_as(curator).post(VERIFY, {"filter": {"stages": ["constraints_pending"]}}, format="json")
    assert (r.status_code, r.json()["problems"]) == (202, [pending.pk])


def test_it_rejects_a_verification_with_both_ids_and_a_filter(api_as: Any, curator: Any, problem: Any) -> None:
    r = api_as(curator).post(VERIFY, {"problems": [problem.pk], "filter": {}}, format="json")
    assert r.status_code == 400


def test_it_rejects_a_bad_verification_filter_with_the_reason(api_as: Any, curator: Any) -> None:
    r = api_as(curator).post(VERIFY, {"filter": {"stages": ["nonsense"]}}, format="json")
    assert r.status_code == 400
    assert "stages" in str(r.json()["filter"])


@pytest.mark.parametrize("persona", ["viewer", "outsider"])
def test_it_forbids_submitting_code_without_the_trainer_or_curator_role(
    api_as: Any, request: pytest.FixtureRequest, persona: str, problem: Any
) -> None:
    user = request.getfixturevalue(persona)
    r = api_as(user).post(f"{LIST}?wait=1", {"problem": problem.pk, "code": CORRECT_ADD}, format="json")
    assert r.status_code == 403
    assert not EvaluationJob.objects.exists()


@pytest.mark.parametrize("persona", ["trainer", "viewer", "outsider"])
def test_it_forbids_verifying_references_without_the_curator_role(
    api_as: Any, request: pytest.FixtureRequest, persona: str, problem: Any
) -> None:
    r = api_as(request.getfixturevalue(persona)).post(VERIFY, {"problems": [problem.pk]}, format="json")
    assert r.status_code == 403


def test_it_forbids_an_outsider_to_read_jobs(api_as: Any, outsider: Any, job: EvaluationJob) -> None:
    assert api_as(outsider).get(LIST).status_code == 403
    assert api_as(outsider).get(f"{LIST}{job.pk}/").status_code == 403


@pytest.mark.parametrize("method,url", [("get", LIST), ("post", LIST), ("post", VERIFY)])
def test_it_refuses_anonymous_requests(method: str, url: str, db: Any) -> None:
    r = getattr(APIClient(), method)(url, {}, format="json") if method == "post" else APIClient().get(url)
    assert r.status_code in (401, 403)


def test_it_documents_the_endpoints_in_the_openapi_schema(api_as: Any, viewer: Any) -> None:
    r = api_as(viewer).get("/api/schema/", {"format": "json"})
    assert r.status_code == 200
    paths = r.json()["paths"]
    assert {"/api/evaluations/", "/api/evaluations/{id}/", "/api/evaluations/verify-references/"} <= set(paths)
    assert "wait" in {p["name"] for p in paths["/api/evaluations/"]["post"].get("parameters", [])}


CPP_ADD = "#include <iostream>\nint main() { long a, b; std::cin >> a >> b; std::cout << a + b << '\\n'; }\n"
C_ADD = "#include <stdio.h>\nint main(void) { long a, b; scanf(\"%ld %ld\", &a, &b); printf(\"%ld\\n\", a + b); }\n"


@pytest.mark.parametrize(("language", "code", "stored"), [
    ("cpp", CPP_ADD, "cpp"), ("c++", CPP_ADD, "cpp"), ("auto", CPP_ADD, "cpp"), ("auto", C_ADD, "c"),
    ("auto", CORRECT_ADD, "python"),
])
def test_it_judges_a_submission_in_the_language_given_or_detected(
    api_as: Any, trainer: Any, problem: Any, language: str, code: str, stored: str
) -> None:
    r = api_as(trainer).post(f"{LIST}?wait=1", {"problem": problem.pk, "code": code, "language": language},
                             format="json")
    assert r.status_code == 200, r.content
    assert (r.json()["language"], r.json()["verdict"]["verdict"]) == (stored, "AC")


def test_a_cpp_submission_that_does_not_compile_is_a_compile_error(api_as: Any, trainer: Any, problem: Any) -> None:
    r = api_as(trainer).post(f"{LIST}?wait=1", {"problem": problem.pk, "code": "int main( {", "language": "cpp"},
                             format="json")
    assert (r.status_code, r.json()["verdict"]["verdict"]) == (200, "CE")
    assert "error" in r.json()["verdict"]["message"]


def test_it_rejects_an_unknown_language(api_as: Any, trainer: Any, problem: Any) -> None:
    r = api_as(trainer).post(LIST, {"problem": problem.pk, "code": CORRECT_ADD, "language": "rust"}, format="json")
    assert r.status_code == 400
    assert "python, c, cpp" in str(r.json())


def test_it_rejects_c_for_a_problem_that_calls_a_python_function(
    api_as: Any, trainer: Any, make_problem: Any
) -> None:
    call = make_problem("call1", io_mode="call", fn_name="add", tests=[("1\n2", "3")],
                        solutions=["def add(a, b):\n    return a + b\n"])
    r = api_as(trainer).post(LIST, {"problem": call.pk, "code": CPP_ADD, "language": "cpp"}, format="json")
    assert r.status_code == 400
    assert "submit Python" in str(r.json())
