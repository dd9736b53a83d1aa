"""Forms of the curation pages (validation only; the work happens in services)."""

from __future__ import annotations

from typing import Any

from django import forms

from curation.importers import FORMATS
from curation.models import Difficulty, IOMode, SourcePlatform, Stage
from curation.selectors import ReleaseFilter
from curation.services.uploads import AUTO

_BUCKET_CHOICES = [(value, label) for value, label in Difficulty.choices if value] + [("unknown", "unknown")]


def _format_choices() -> list[tuple[str, str]]:
    return [(AUTO, "detect automatically")] + [(name, f"{name} — {imp.description}") for name, imp in FORMATS.items()]


class ImportForm(forms.Form):
    file = forms.FileField(help_text="A data file (JSONL/JSON/Parquet, .gz ok) or a .zip of problem packages.")
    format = forms.ChoiceField(choices=_format_choices, initial=AUTO)
    run_pipeline = forms.BooleanField(
        required=False, initial=True, label="Normalize and check constraints afterwards"
    )


class ProblemFilterForm(forms.Form):
    """The problem list's filters (all optional)."""

    q = forms.CharField(required=False, label="Title")
    platform = forms.ChoiceField(required=False)
    difficulty = forms.ChoiceField(required=False, choices=[("", "any")] + _BUCKET_CHOICES)
    stage = forms.ChoiceField(required=False, choices=[("", "any")] + list(Stage.choices))
    io_mode = forms.ChoiceField(required=False, choices=[("", "any")] + list(IOMode.choices))
    tag = forms.CharField(required=False)
    contest_date_from = forms.DateField(required=False, widget=forms.DateInput(attrs={"type": "date"}))
    contest_date_to = forms.DateField(required=False, widget=forms.DateInput(attrs={"type": "date"}))

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        names = SourcePlatform.objects.values_list("name", flat=True)
        self.fields["platform"].choices = [("", "any")] + [(n, n) for n in names]


class ReleaseCreateForm(forms.Form):
    name = forms.CharField(max_length=200)
    description = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2}))
    platforms = forms.MultipleChoiceField(required=False, widget=forms.CheckboxSelectMultiple)
    difficulties = forms.MultipleChoiceField(
        required=False, choices=_BUCKET_CHOICES, widget=forms.CheckboxSelectMultiple
    )
    stages = forms.MultipleChoiceField(
        required=False, choices=Stage.choices, widget=forms.CheckboxSelectMultiple,
        initial=[Stage.CONSTRAINTS_PASSED],
    )
    io_modes = forms.MultipleChoiceField(required=False, choices=IOMode.choices, widget=forms.CheckboxSelectMultiple)
    tags = forms.CharField(required=False, help_text="Comma-separated; a problem needs at least one of them.")
    target_hard_share = forms.FloatField(
        required=False, min_value=0.01, max_value=1.0,
        help_text="Optional, e.g. 0.5: drop the easiest problems until hard ones are at least this share "
                  "(the release lists what it dropped and why).",
    )
    contest_date_from = forms.DateField(
        required=False, widget=forms.DateInput(attrs={"type": "date"}), help_text="Contamination cut-off (inclusive)."
    )
    contest_date_to = forms.DateField(required=False, widget=forms.DateInput(attrs={"type": "date"}))
    include_undated = forms.BooleanField(required=False, help_text="Keep problems without a contest date.")
    exclude_duplicates = forms.BooleanField(required=False, initial=True)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["platforms"].choices = [(n, n) for n in SourcePlatform.objects.values_list("name", flat=True)]

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        if self.errors:
            return data
        try:
            data["filter"] = ReleaseFilter.from_dict(self.filter_spec(data))
        except ValueError as exc:
            raise forms.ValidationError(str(exc)) from exc
        return data

    @staticmethod
    def filter_spec(data: dict[str, Any]) -> dict[str, Any]:
        return {
            "platforms": data.get("platforms") or [],
            "difficulties": data.get("difficulties") or [],
            "stages": data.get("stages") or [],
            "io_modes": data.get("io_modes") or [],
            "tags": [t.strip() for t in (data.get("tags") or "").split(",") if t.strip()],
            "contest_date_from": data.get("contest_date_from"),
            "contest_date_to": data.get("contest_date_to"),
            "include_undated": bool(data.get("include_undated")),
            "exclude_duplicates": bool(data.get("exclude_duplicates")),
        }
