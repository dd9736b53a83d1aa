"""The problem list's search (PostgreSQL full-text with ranking, the icontains fallback), its sorting,
filters and sort kept in the URL through pagination, and the problem page's truncated tests with the
role-checked download of the full test."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import parse_qs, urlparse

import pytest
from django.db import connection
from django.urls import reverse

from curation import selectors_search, views_problems
from curation.models import Problem
from curation.records import TestRecord
from curation.selectors import problem_list

from .conftest import make_record

pytestmark = pytest.mark.django_db

postgres_only = pytest.mark.skipif(
    connection.vendor != "postgresql", reason="full-text search needs PostgreSQL (DATABASE_URL)"
)

GRID = "Walk on a grid of cells from the top-left corner to the bottom-right corner avoiding walls."
MONEY = "A shop sells apples and pears; compute the change owed to every customer after each purchase."


@pytest.fixture
def library(import_records: Any) -> dict[str, Problem]:
    import_records(
        [
            make_record(
                "title",
                title="Shortest path in a maze",
                statement=GRID,
                tests=2,
                difficulty="Hard",
                contest_date="2024-03-01",
            ),
            make_record(
                "body",
                title="Robot walk",
                statement=f"{GRID} Print the shortest path length.",
                tests=9,
                difficulty="Easy",
                contest_date=None,
            ),
            make_record(
                "shop",
                title="Fruit shop",
                statement=MONEY,
                tests=4,
                difficulty="Medium",
                contest_date="2023-01-01",
            ),
            make_record(
                "trees",
                title="Shortest path in a tree",
                statement=f"{GRID} The graph is a tree.",
                tests=1,
                difficulty="",
                contest_date="2025-01-01",
            ),
        ]
    )
    return {p.external_id: p for p in Problem.objects.all()}


def _ids(filters: dict[str, Any]) -> list[str]:
    return [p.external_id for p in problem_list(filters=filters)]


# ------------------------------------------------------------------------------------------- search


@postgres_only
def test_it_finds_words_of_the_statement_and_ranks_title_matches_first(library: Any) -> None:
    assert _ids({"q": "shortest path"})[:2] == ["title", "trees"]  # title (weight A) before statement (B)
    assert set(_ids({"q": "shortest path"})) == {"title", "trees", "body"}
    assert _ids({"q": "purchases"}) == ["shop"]  # stemmed: "purchase" in the statement


@postgres_only
def test_it_understands_web_search_syntax(library: Any) -> None:
    assert set(_ids({"q": "shortest path -tree"})) == {"title", "body"}
    assert _ids({"q": '"path length"'}) == ["body"]
    assert set(_ids({"q": "apples or maze"})) == {"shop", "title"}
    assert _ids({"q": "the"}) == []  # only a stop word: nothing, and no error


@postgres_only
def test_the_search_uses_the_gin_index(library: Any) -> None:
    qs = problem_list(filters={"q": "shortest path"})
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        plan = qs.explain()
    assert "curation_problem_fts" in plan, plan


@postgres_only
def test_it_shows_where_the_statement_matched(library: Any, viewer: Any, client_as: Any) -> None:
    html = client_as(viewer).get(reverse("curation:problem-list"), {"q": "purchase"}).content.decode()
    assert "after each <mark>purchase</mark>" in html


def test_without_postgres_it_falls_back_to_icontains(library: Any, monkeypatch: Any) -> None:
    monkeypatch.setattr(selectors_search, "uses_full_text_search", lambda: False)
    assert _ids({"q": "shortest"}) == ["title", "trees", "body"]  # title matches first
    assert _ids({"q": "shortest -tree"}) == ["title", "body"]
    assert _ids({"q": '"path length"'}) == ["body"]
    assert _ids({"q": "walls apples"}) == []  # every word must occur


def test_search_combines_with_the_filters(library: Any) -> None:
    assert _ids({"q": "grid", "difficulty": "easy"}) == ["body"]


# ------------------------------------------------------------------------------------------- sorting


def test_it_sorts_by_difficulty_with_unknown_last_both_ways(library: Any) -> None:
    assert _ids({"sort": "difficulty"}) == ["body", "shop", "title", "trees"]
    assert _ids({"sort": "-difficulty"}) == ["title", "shop", "body", "trees"]


def test_it_sorts_by_contest_date_with_undated_last_and_by_test_count(library: Any) -> None:
    assert _ids({"sort": "-contest_date"}) == ["trees", "title", "shop", "body"]
    assert _ids({"sort": "contest_date"}) == ["shop", "title", "trees", "body"]
    assert _ids({"sort": "-tests"}) == ["body", "shop", "title", "trees"]


def test_an_unknown_sort_is_explained_and_the_list_still_shows(
    library: Any, viewer: Any, client_as: Any
) -> None:
    response = client_as(viewer).get(
        reverse("curation:problem-list"), {"sort": "salary", "difficulty": "easy"}
    )
    html = response.content.decode()
    assert response.status_code == 200 and 'class="error"' in html
    assert "Robot walk" in html and "Fruit shop" not in html  # the valid filter still applies


def _header_links(html: str) -> dict[str, str]:
    return {
        label.strip(): href.replace("&amp;", "&")
        for href, label in re.findall(r'<a class="sort[^"]*" href="([^"]+)"[^>]*>([^<▲▼]+)', html)
    }


def test_column_headers_sort_keep_the_filters_and_toggle_the_direction(
    library: Any, viewer: Any, client_as: Any
) -> None:
    client = client_as(viewer)
    url = reverse("curation:problem-list")
    html = client.get(url, {"difficulty": "hard", "tag": "array", "page": "1"}).content.decode()
    tests_link = _header_links(html)["Tests"]
    assert parse_qs(urlparse(tests_link).query) == {
        "difficulty": ["hard"],
        "tag": ["array"],
        "sort": ["tests"],
    }
    html = client.get(url + tests_link).content.decode()
    assert 'aria-sort="ascending"' in html
    assert parse_qs(urlparse(_header_links(html)["Tests"]).query)["sort"] == ["-tests"]


def test_every_column_sorts_both_ways(library: Any, viewer: Any, client_as: Any) -> None:
    client = client_as(viewer)
    url = reverse("curation:problem-list")
    links = _header_links(client.get(url).content.decode())
    assert set(links) == {
        "#",
        "Title",
        "Platform",
        "Mode",
        "Difficulty",
        "Contest date",
        "Tests",
        "Version",
        "Stage",
    }
    for label, link in links.items():
        ascending = client.get(url + link).content.decode()
        assert 'aria-sort="ascending"' in ascending and 'class="error"' not in ascending, label
        descending = client.get(url + _header_links(ascending)[label]).content.decode()
        assert 'aria-sort="descending"' in descending, label


def test_pagination_keeps_the_search_filters_and_sort(
    import_records: Any, viewer: Any, client_as: Any, monkeypatch: Any
) -> None:
    monkeypatch.setattr(views_problems, "PAGE_SIZE", 2)
    import_records(
        [
            make_record(f"g{i}", title=f"Grid walk {i}", statement=GRID, tests=i + 1, solutions=0)
            for i in range(5)
        ]
    )
    query = {"q": "grid", "platform": "leetcode", "sort": "-tests"}
    client = client_as(viewer)
    html = client.get(reverse("curation:problem-list"), query).content.decode()
    assert html.index("Grid walk 4") < html.index("Grid walk 3") and "Grid walk 2" not in html
    next_link = re.search(r'<a href="(\?[^"]*page=2)">next', html)
    assert next_link is not None
    params = parse_qs(next_link.group(1)[1:].replace("&amp;", "&"))
    assert params == {"q": ["grid"], "platform": ["leetcode"], "sort": ["-tests"], "page": ["2"]}
    page2 = client.get(
        reverse("curation:problem-list") + next_link.group(1).replace("&amp;", "&")
    ).content.decode()
    assert "Grid walk 2" in page2 and "Grid walk 1" in page2 and "Grid walk 4" not in page2
    assert 'value="grid"' in page2  # the search box still holds the search


# ------------------------------------------------------------------------------- tests and downloads


@pytest.fixture
def big_test_problem(import_records: Any) -> Problem:
    record = make_record("big", tests=2)
    big_input = "".join(f"{i} {i + 1}\n" for i in range(5000))
    record.tests[1] = TestRecord(big_input, "ok\n", public=False)
    import_records([record])
    return Problem.objects.get(external_id="big")


def test_the_page_truncates_a_large_test_and_links_to_its_download(
    big_test_problem: Problem, viewer: Any, client_as: Any
) -> None:
    html = (
        client_as(viewer).get(reverse("curation:problem-detail", args=[big_test_problem.pk])).content.decode()
    )
    download = reverse("curation:problem-test-download", args=[big_test_problem.pk, 1, "input"])
    assert "Showing the first 40 of 5,000 lines" in html.replace("5000", "5,000")
    assert f'<a href="{download}" download>Download the full input' in html
    assert '<span class="m">4999</span>' not in html  # the end of the big input is not on the page


@pytest.mark.parametrize(
    "persona, status", [("viewer", 200), ("trainer", 200), ("curator", 200), ("outsider", 403)]
)
def test_the_full_test_downloads_for_every_role_but_not_an_outsider(
    big_test_problem: Problem, client_as: Any, request: Any, persona: str, status: int
) -> None:
    url = reverse("curation:problem-test-download", args=[big_test_problem.pk, 1, "input"])
    response = client_as(request.getfixturevalue(persona)).get(url)
    assert response.status_code == status
    if status == 200:
        assert response["Content-Type"] == "text/plain; charset=utf-8"
        assert response["Content-Disposition"] == f'attachment; filename="{big_test_problem.slug}-1.in"'
        assert response.content.decode() == "".join(f"{i} {i + 1}\n" for i in range(5000))


def test_an_anonymous_download_goes_to_the_login_page(big_test_problem: Problem, client: Any) -> None:
    url = reverse("curation:problem-test-download", args=[big_test_problem.pk, 0, "output"])
    response = client.get(url)
    assert response.status_code == 302 and response["Location"].startswith(reverse("login"))


def test_a_missing_test_or_part_is_not_found(big_test_problem: Problem, viewer: Any, client_as: Any) -> None:
    client = client_as(viewer)
    assert (
        client.get(
            reverse("curation:problem-test-download", args=[big_test_problem.pk, 7, "input"])
        ).status_code
        == 404
    )
    assert (
        client.get(
            reverse("curation:problem-test-download", args=[big_test_problem.pk, 0, "secret"])
        ).status_code
        == 404
    )
    output = client.get(reverse("curation:problem-test-download", args=[big_test_problem.pk, 0, "output"]))
    assert output.content == b"1\n"


@postgres_only
def test_the_api_searches_too_best_match_first_unless_ordered(library: Any, viewer: Any, client_as: Any) -> None:
    client = client_as(viewer)

    def api_ids(params: dict[str, str]) -> list[str]:
        response = client.get("/api/problems/", params)
        assert response.status_code == 200, response.content
        return [row["external_id"] for row in response.json()["results"]]

    assert api_ids({"q": "shortest path"})[:2] == ["title", "trees"]
    assert set(api_ids({"q": "shortest path -tree"})) == {"title", "body"}
    ordered = api_ids({"q": "shortest path", "ordering": "-id"})
    assert ordered == sorted(ordered, key=lambda e: -Problem.objects.get(external_id=e).pk)
    assert api_ids({"q": "shortest path", "difficulty": "easy"}) == ["body"]
