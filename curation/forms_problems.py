"""The problem list's search, filter and sort form (validation only; ``curation.selectors`` reads)."""

from __future__ import annotations

from django import forms

from curation.forms import ProblemFilterForm
from curation.selectors_search import SEARCH_MAX_CHARS, sort_choices


class ProblemSearchForm(ProblemFilterForm):
    """:class:`ProblemFilterForm` with full-text search and a sort order; everything lives in the URL."""

    q = forms.CharField(
        required=False,
        label="Search",
        max_length=SEARCH_MAX_CHARS,
        help_text='Title and statement: words, "a phrase", -excluded, or.',
        widget=forms.TextInput(attrs={"type": "search", "placeholder": "shortest path -tree"}),
    )
    sort = forms.ChoiceField(
        required=False,
        label="Sort by",
        choices=sort_choices,
        widget=forms.Select(attrs={"data-autosubmit": ""}),
    )
