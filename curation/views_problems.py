"""Problem pages: the searchable, sortable list and a problem's page (rendered statement, highlighted
code and tests, full tests downloadable). Everything is readable by viewers."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse, QueryDict
from django.shortcuts import render
from django.utils.http import content_disposition_header

from curation.forms_problems import ProblemSearchForm
from curation.models import Problem, TestCase
from curation.rendering import code_html, highlight_css, preview_test, statement_html
from curation.selectors import problem_detail, problem_list
from curation.selectors_difficulty import problem_difficulty_trace
from curation.selectors_search import problem_headlines, uses_full_text_search
from webapp.roles import VIEWER, role_required

PAGE_SIZE = 50
TESTS_PER_PAGE = 5
_PARTS = {"input": "in", "output": "out"}


@dataclass(frozen=True)
class Column:
    """A header of the problem table; ``url`` sorts by it (toggling the direction when it is the
    current sort), keeping every filter."""

    label: str
    url: str = ""
    direction: str = ""  # "ascending" / "descending" when the list is sorted by this column


_COLUMNS = (
    ("#", "id"),
    ("Title", "title"),
    ("Platform", "platform"),
    ("Mode", "io_mode"),
    ("Difficulty", "difficulty"),
    ("Contest date", "contest_date"),
    ("Tests", "tests"),
    ("Version", "version"),
    ("Stage", "stage"),
)


def _columns(query: QueryDict, sort: str) -> list[Column]:
    columns = []
    current = sort.lstrip("-")
    for label, key in _COLUMNS:
        params = query.copy()
        params.pop("page", None)
        direction = ""
        if current == key:
            direction = "descending" if sort.startswith("-") else "ascending"
        params["sort"] = key if direction == "descending" else (f"-{key}" if direction else key)
        columns.append(Column(label=label, url=f"?{params.urlencode()}", direction=direction))
    return columns


@role_required(VIEWER)
def problem_list_view(request: HttpRequest) -> HttpResponse:
    form = ProblemSearchForm(request.GET or None)
    # An invalid field is shown with its error and left out; the valid ones still filter.
    filters: dict[str, Any] = (
        form.cleaned_data if form.is_valid() else dict(getattr(form, "cleaned_data", {}))
    )
    # the form only accepts the selector's sort keys: problem_list raises for no other
    page = Paginator(problem_list(filters=filters), PAGE_SIZE).get_page(request.GET.get("page"))
    query = request.GET.copy()
    query.pop("page", None)
    search = str(filters.get("q") or "")
    headlines = problem_headlines(problem_ids=[p.pk for p in page], text=search) if search else {}
    rows = [(p, headlines.get(p.pk)) for p in page]
    return render(
        request,
        "curation/problem_list.html",
        {
            "form": form,
            "page": page,
            "rows": rows,
            "query": query.urlencode(),
            "columns": _columns(query, str(filters.get("sort") or "")),
            "search": search,
            "full_text": uses_full_text_search(),
        },
    )


@dataclass(frozen=True)
class TestView:
    """One test on the problem page: highlighted previews of its input and output."""

    __test__ = False  # not a pytest test class

    order: int
    public: bool
    input: Any
    output: Any


@role_required(VIEWER)
def problem_detail_view(request: HttpRequest, pk: int) -> HttpResponse:
    try:
        problem = problem_detail(problem_id=pk)
    except Problem.DoesNotExist:
        raise Http404("no such problem") from None
    tests = Paginator(
        TestCase.objects.filter(problem=problem).order_by("-public", "order"), TESTS_PER_PAGE
    ).get_page(request.GET.get("tests_page"))
    return render(
        request,
        "curation/problem_detail.html",
        {
            "problem": problem,
            "statement": statement_html(problem.statement),
            "starter_code": code_html(problem.starter_code, "python3") if problem.starter_code else "",
            "solutions": [(s, code_html(s.code, s.language)) for s in problem.solutions.all()],
            "tests": tests,
            "test_views": [
                TestView(
                    order=t.order,
                    public=t.public,
                    input=preview_test(t.input, io_mode=problem.io_mode),
                    output=preview_test(t.output, io_mode=problem.io_mode),
                )
                for t in tests
            ],
            "highlight_css": highlight_css(),
            "trace": problem_difficulty_trace(problem_id=problem.pk),
        },
    )


@role_required(VIEWER)
def problem_test_download_view(request: HttpRequest, pk: int, order: int, part: str) -> HttpResponse:
    """The full input or output of one test, as a plain-text attachment (``<slug>-<order>.in|out``)."""
    if part not in _PARTS:
        raise Http404("part must be input or output")
    test = (
        TestCase.objects.filter(problem_id=pk, order=order)
        .select_related("problem")
        .only("problem__slug", f"{part}_z")
        .first()
    )
    if test is None:
        raise Http404("no such test")
    text = test.input if part == "input" else test.output
    response = HttpResponse(text.encode(), content_type="text/plain; charset=utf-8")
    filename = f"{test.problem.slug}-{order}.{_PARTS[part]}"
    response["Content-Disposition"] = content_disposition_header(True, filename)
    return response
