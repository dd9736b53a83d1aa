"""Browser test of the spot-check page: a curator reviews three problems with the keyboard only."""

from __future__ import annotations

from typing import Any

import pytest

from curation.models import ReviewVerdict
from curation.services import problem_import, release_create
from curation.services.review import review_queue_create
from tests.curation.conftest import make_record, write_jsonl

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def queue(db: object, tmp_path: Any) -> Any:
    path = write_jsonl(tmp_path / "p.jsonl", [make_record(f"p{i}", title=f"Problem number {i}") for i in range(3)])
    problem_import(path=path, format="microcoder")
    release = release_create(name="spot", filter_spec={})
    return review_queue_create(name="spot-check", release_id=release.pk, sample_size=3, double_review_share=0.0)


def test_it_reviews_three_problems_with_the_keyboard(page_as: Any, asgi_server: Any, curator: Any, queue: Any) -> None:
    page = page_as(curator)
    page.goto(f"{asgi_server.url}/curation/review/{queue.pk}/review/")
    seen = []
    for key in ("a", "r", "f"):
        page.wait_for_selector("#problem")
        seen.append(int(page.get_attribute("#problem", "data-problem-id")))
        if key == "r":  # reason codes ride along with the keypress
            page.check("input[value='wrong_tests']")
        with page.expect_navigation():
            page.keyboard.press(key)
    page.wait_for_selector("text=Nothing left for you to review")
    verdicts = {v.item.problem_id: (v.verdict, v.reason_codes) for v in ReviewVerdict.objects.select_related("item")}
    assert verdicts == {seen[0]: ("accept", []), seen[1]: ("reject", ["wrong_tests"]), seen[2]: ("needs_fix", [])}
    assert "100 %" in page.inner_text(".review-stats")  # the queue page shows the progress


def test_it_moves_between_items_with_j_and_k(page_as: Any, asgi_server: Any, curator: Any, queue: Any) -> None:
    page = page_as(curator)
    page.goto(f"{asgi_server.url}/curation/review/{queue.pk}/review/?pos=1")
    with page.expect_navigation():
        page.keyboard.press("j")
    assert page.url.endswith("?pos=2")
    with page.expect_navigation():
        page.keyboard.press("ArrowLeft")
    assert page.url.endswith("?pos=1")
    assert "#1 of 3" in page.inner_text("h1")
