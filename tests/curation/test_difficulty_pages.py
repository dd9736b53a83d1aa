"""The difficulty and review pages, driven as a curator would: forms, redirects, role refusals."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest
from django.contrib.auth.models import Group

from curation.models import Calibration, PassRateSet, Problem, ReviewQueue, ScoringJob
from curation.services import release_create
from curation.services.review import review_queue_create, review_verdict_submit

from .conftest import make_record
from .difficulty_support import catalogue, scored

pytestmark = pytest.mark.django_db


def _rates_file(problems: list[Problem]) -> io.BytesIO:
    rows = [{"platform": "leetcode", "external_id": p.external_id, "passed": 1 if int(p.external_id[1:]) % 2 else 7,
             "attempts": 8} for p in problems]
    upload = io.BytesIO("\n".join(json.dumps(r) for r in rows).encode())
    upload.name = "rates.jsonl"
    return upload


def test_it_scores_a_release_from_the_scorings_page(import_records: Any, client_as: Any, curator: Any,
                                                    django_capture_on_commit_callbacks: Any) -> None:
    catalogue(import_records, n=3)
    release = release_create(name="r", filter_spec={})
    form = {"release": release.pk, "backend": "heuristic", "model": "", "samples": 2, "w_algorithmic_knowledge": 1,
            "w_reasoning_depth": 1, "w_implementation_complexity": 1, "w_mathematical_content": 1,
            "w_edge_cases_constraints": 0}
    with django_capture_on_commit_callbacks(execute=True):
        response = client_as(curator).post("/curation/scorings/", form)
    job = ScoringJob.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/curation/scorings/{job.pk}/"
    job.refresh_from_db()
    assert job.status == "succeeded" and job.weights["edge_cases_constraints"] == 0 and job.samples_per_problem == 2
    html = client_as(curator).get(response["Location"]).content.decode()
    assert "Results (hardest first)" in html and html.count("/curation/problems/") >= 3


def test_it_uploads_pass_rates_fits_and_applies_a_calibration_from_the_pages(
    import_records: Any, client_as: Any, curator: Any, viewer: Any
) -> None:
    problems = catalogue(import_records, n=8)
    job = scored(curator)
    client = client_as(curator)
    response = client.post("/curation/calibrations/", {"form": "passrates", "name": "qwen", "target_model": "Qwen3",
                                                      "file": _rates_file(problems)})
    assert response.status_code == 302 and PassRateSet.objects.get().rates.count() == 8
    response = client.post("/curation/calibrations/", {
        "form": "calibration", "name": "cal", "scoring": job.pk, "pass_rate_set": PassRateSet.objects.get().pk,
        "method": "logistic", "easy_below": 0.35, "hard_from": 0.65})
    calibration = Calibration.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/curation/calibrations/{calibration.pk}/"
    assert client_as(viewer).post(f"/curation/calibrations/{calibration.pk}/apply/").status_code == 403
    client.post(f"/curation/calibrations/{calibration.pk}/apply/")
    assert set(Problem.objects.values_list("difficulty_source", flat=True)) == {"calibrated"}
    assert "cal v1" in client_as(viewer).get("/curation/calibrations/").content.decode()


def test_it_shows_the_reason_when_a_calibration_cannot_be_fitted(import_records: Any, client_as: Any,
                                                                 curator: Any) -> None:
    problems = catalogue(import_records, n=2)
    job = scored(curator)
    client = client_as(curator)
    client.post("/curation/calibrations/", {"form": "passrates", "name": "few", "target_model": "m",
                                           "file": _rates_file(problems)})
    response = client.post("/curation/calibrations/", {
        "form": "calibration", "name": "cal", "scoring": job.pk, "pass_rate_set": PassRateSet.objects.get().pk,
        "method": "isotonic", "easy_below": 0.35, "hard_from": 0.65})
    assert response.status_code == 200 and "needs at least 5" in response.content.decode()
    assert not Calibration.objects.exists()


def test_it_creates_a_queue_and_settles_a_disagreement_from_the_pages(
    import_records: Any, client_as: Any, curator: Any, admin_user: Any, django_user_model: Any
) -> None:
    catalogue(import_records, n=4)
    release = release_create(name="r", filter_spec={})
    response = client_as(curator).post("/curation/review/", {"name": "spot", "release": release.pk, "sample_size": 2,
                                                            "double_review_share": 1.0, "seed": 1})
    queue = ReviewQueue.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/curation/review/{queue.pk}/"
    other = django_user_model.objects.create_user(username="cleo", password="x")
    other.groups.add(Group.objects.get(name="curator"))
    item = queue.items.order_by("position").first()
    review_verdict_submit(item_id=item.pk, user=curator, verdict="accept")
    review_verdict_submit(item_id=item.pk, user=other, verdict="needs_fix", reason_codes=["weak_tests"], note="2 tests")
    page = client_as(admin_user).get("/curation/review/adjudication/").content.decode()
    assert "weak_tests" in page and "2 tests" in page
    client_as(admin_user).post("/curation/review/adjudication/", {"item": item.pk, "verdict": "needs_fix"})
    assert "No disagreements waiting." in client_as(admin_user).get("/curation/review/adjudication/").content.decode()
    detail = client_as(curator).get(f"/curation/review/{queue.pk}/").content.decode()
    assert "needs_fix" in detail and "Strata" in detail


def test_it_refuses_a_viewer_every_form_of_the_review_pages(import_records: Any, client_as: Any,
                                                            viewer: Any) -> None:
    catalogue(import_records, n=2)
    release = release_create(name="r", filter_spec={})
    queue = review_queue_create(name="q", release_id=release.pk, sample_size=1)
    client = client_as(viewer)
    assert client.post("/curation/review/", {"name": "x"}).status_code == 403
    assert client.post("/curation/review/adjudication/", {"item": 1, "verdict": "accept"}).status_code == 403
    assert client.post("/curation/calibrations/", {"form": "passrates"}).status_code == 403
    assert client.get(f"/curation/review/{queue.pk}/").status_code == 200


def test_it_links_the_new_pages_from_the_nav(client_as: Any, viewer: Any) -> None:
    html = client_as(viewer).get("/curation/problems/").content.decode()
    assert 'href="/curation/scorings/"' in html and 'href="/curation/review/"' in html


def test_the_review_page_shows_the_statement_rendered_and_sanitized(import_records: Any, client_as: Any,
                                                                   curator: Any) -> None:
    statement = ("Given $n$ numbers, print their **sum**.\n\n<script>alert(1)</script>\n\n"
                 "Constraints: $1 \\le n \\le 10^5$.")
    import_records([make_record("sum", statement=statement)])
    release = release_create(name="r", filter_spec={})
    queue = review_queue_create(name="q", release_id=release.pk, sample_size=1, double_review_share=0.0)
    html = client_as(curator).get(f"/curation/review/{queue.pk}/review/").content.decode()
    statement_html = html[html.index('id="statement"'):html.index("</section>", html.index('id="statement"'))]
    assert "<strong>sum</strong>" in statement_html
    assert 'class="math' in statement_html and "katex.min.js" in html
    assert "<script>" not in statement_html  # the sanitizer dropped it (at most escaped text remains)
    assert "<script>alert" not in html
