"""Problem search and sorting for the problem list.

PostgreSQL: full-text search over the title (weight A) and the statement (weight B) with the
``english`` configuration and web-search syntax (``two sum``, ``"shortest path"``, ``graph -tree``,
``dp or greedy``), served by the GIN index of migration ``0006_problem_search``, ranked by
``ts_rank``. SQLite (the embedded default): every word or ``"quoted phrase"`` must occur in the title
or the statement (``icontains``), ``-word`` excludes; title matches rank first.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from django.contrib.postgres.search import (
    CombinedSearchVector,
    SearchHeadline,
    SearchQuery,
    SearchRank,
    SearchVector,
)
from django.db import connection
from django.db.models import Case, F, IntegerField, OrderBy, Q, QuerySet, Value, When
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from curation.models import Problem

SEARCH_CONFIG = "english"
#: longest search text accepted (a longer one is a paste accident, and costs the planner)
SEARCH_MAX_CHARS = 200


def search_vector() -> CombinedSearchVector:
    """The document searched; the same expression as the GIN index of migration 0006 (keep in step)."""
    return SearchVector("title", weight="A", config=SEARCH_CONFIG) + SearchVector(
        "statement", weight="B", config=SEARCH_CONFIG
    )


def uses_full_text_search() -> bool:
    return connection.vendor == "postgresql"


def _web_query(text: str) -> SearchQuery:
    return SearchQuery(text, search_type="websearch", config=SEARCH_CONFIG)


_TERM = re.compile(r'(-?)"([^"]+)"|(-?)(\S+)')


def _terms(text: str) -> list[tuple[bool, str]]:
    """``(excluded, term)`` pairs of a search text: words and quoted phrases, ``-`` excludes; the
    web-search operator ``or`` is dropped (the fallback ANDs every term)."""
    terms: list[tuple[bool, str]] = []
    for minus_phrase, phrase, minus_word, word in _TERM.findall(text):
        term = phrase or word.strip('"')
        if not term or (not phrase and term.lower() == "or"):
            continue
        terms.append((bool(minus_phrase or minus_word), term))
    return terms


def problem_search(qs: QuerySet[Problem], text: str) -> QuerySet[Problem]:
    """``qs`` narrowed to problems matching ``text``, with a ``rank`` alias (higher = better) for
    :func:`problem_order`'s ``relevance``."""
    text = text.strip()[:SEARCH_MAX_CHARS]
    if not text:
        return qs
    if uses_full_text_search():
        query = _web_query(text)
        vector = search_vector()
        return qs.alias(search=vector, rank=SearchRank(vector, query)).filter(search=query)
    included = [term for excluded, term in _terms(text) if not excluded]
    for excluded, term in _terms(text):
        match = Q(title__icontains=term) | Q(statement__icontains=term)
        qs = qs.exclude(match) if excluded else qs.filter(match)
    title_hits = [When(title__icontains=term, then=Value(1)) for term in included[:1]]
    return qs.alias(rank=Case(*title_hits, default=Value(0), output_field=IntegerField()))


# ------------------------------------------------------------------------------------------ sorting


@dataclass(frozen=True)
class SortKey:
    key: str
    label: str
    #: the column header a sort belongs to ("" = no column)
    column: str


#: sort keys of the list; "-key" sorts descending. Unknown (unrated) difficulties and undated
#: problems sort last in either direction; ties are broken by id.
SORTS: dict[str, SortKey] = {
    s.key: s
    for s in (
        SortKey("relevance", "relevance (when searching)", ""),
        SortKey("id", "#", "id"),
        SortKey("title", "title", "title"),
        SortKey("platform", "platform", "platform"),
        SortKey("io_mode", "mode", "io_mode"),
        SortKey("difficulty", "difficulty (easy first)", "difficulty"),
        SortKey("contest_date", "contest date (oldest first)", "contest_date"),
        SortKey("tests", "test count", "tests"),
        SortKey("version", "version", "version"),
        SortKey("stage", "stage", "stage"),
    )
}


def sort_choices() -> list[tuple[str, str]]:
    """Choices for a sort <select>: each key ascending and descending (relevance only descending)."""
    choices = [("", "default (relevance when searching, else #)")]
    for sort in SORTS.values():
        if sort.key == "relevance":
            choices.append(("relevance", "relevance"))
            continue
        choices.append((sort.key, f"{sort.label}, ascending"))
        choices.append((f"-{sort.key}", f"{sort.label}, descending"))
    return choices


def _difficulty_rank() -> Case:
    whens = [When(difficulty=bucket, then=Value(i)) for i, bucket in enumerate(("easy", "medium", "hard"))]
    return Case(*whens, default=Value(None), output_field=IntegerField())


def problem_order(qs: QuerySet[Problem], sort: str, *, searching: bool) -> QuerySet[Problem]:
    """``qs`` ordered by ``sort`` (a key of :data:`SORTS`, ``-`` prefix = descending; empty = relevance
    when ``searching``, else id). Raises ``ValueError`` naming the valid keys for an unknown one."""
    descending = sort.startswith("-")
    key = sort[1:] if descending else sort
    if not key:
        key, descending = ("relevance", True) if searching else ("id", False)
    if key not in SORTS:
        raise ValueError(f"unknown sort {sort!r}; valid: {', '.join(SORTS)} (prefix - for descending)")
    if key == "relevance":
        if not searching:
            return qs.order_by("id")
        return qs.order_by(F("rank").desc(), "id")
    fields = {
        "id": F("id"),
        "title": F("title"),
        "platform": F("platform__name"),
        "io_mode": F("io_mode"),
        "difficulty": _difficulty_rank(),
        "contest_date": F("contest_date"),
        "tests": F("test_count"),
        "version": F("version"),
        "stage": F("stage"),
    }
    expression = fields[key]
    ordering: OrderBy = expression.desc(nulls_last=True) if descending else expression.asc(nulls_last=True)
    return qs.order_by(ordering, "id") if key != "id" else qs.order_by(ordering)


# ---------------------------------------------------------------------------------------- headlines

_START, _STOP = "\x02", "\x03"  # never in a stored statement: replaced after escaping


def problem_headlines(*, problem_ids: list[int], text: str) -> dict[int, SafeString]:
    """For a page of search results: the statement fragments around the matches, the matched words in
    ``<mark>``, HTML-escaped (PostgreSQL's ``ts_headline``; empty on SQLite)."""
    text = text.strip()[:SEARCH_MAX_CHARS]
    if not text or not problem_ids or not uses_full_text_search():
        return {}
    headline = SearchHeadline(
        "statement",
        _web_query(text),
        config=SEARCH_CONFIG,
        start_sel=_START,
        stop_sel=_STOP,
        max_words=24,
        min_words=10,
        max_fragments=2,
        fragment_delimiter=" … ",
    )
    rows = (
        Problem.objects.filter(pk__in=problem_ids).annotate(headline=headline).values_list("pk", "headline")
    )
    out: dict[int, SafeString] = {}
    for pk, fragment in rows:
        if fragment and _START in fragment:
            html = str(escape(fragment)).replace(_START, "<mark>").replace(_STOP, "</mark>")
            out[pk] = mark_safe(html)  # escaped above; only our own <mark> tags are added
    return out
