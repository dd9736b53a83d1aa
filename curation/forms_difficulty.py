"""Forms of the difficulty and review pages (validation only; services do the work)."""

from __future__ import annotations

from typing import Any

from django import forms

from curation.difficulty import DEFAULT_WEIGHTS, DIMENSION_LABELS, DIMENSIONS
from curation.models import REASON_CODES, CalibrationMethod, DatasetRelease, PassRateSet, ScoringJob, Verdict


def _releases() -> list[tuple[str, str]]:
    return [("", "—")] + [(str(r.pk), str(r)) for r in DatasetRelease.objects.only("id", "name", "version")[:200]]


class ScoringForm(forms.Form):
    release = forms.TypedChoiceField(coerce=int, help_text="Score every problem of this release.")
    backend = forms.ChoiceField(choices=[("heuristic", "heuristic (offline)"), ("openai", "openai (endpoint from the environment)")])
    model = forms.CharField(required=False, max_length=200, help_text="openai: the model name; empty = DIFFICULTY_MODEL.")
    samples = forms.IntegerField(min_value=1, max_value=10, initial=3)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["release"].choices = _releases()[1:]
        for name in DIMENSIONS:
            self.fields[f"w_{name}"] = forms.FloatField(
                min_value=0, initial=DEFAULT_WEIGHTS[name], label=f"weight: {DIMENSION_LABELS[name]}"
            )

    def weights(self) -> dict[str, float]:
        return {name: self.cleaned_data[f"w_{name}"] for name in DIMENSIONS}


class PassRateUploadForm(forms.Form):
    name = forms.CharField(max_length=200)
    target_model = forms.CharField(max_length=300, required=False)
    file = forms.FileField(required=False, help_text="JSONL: {platform, external_id, passed, attempts} per line.")
    evaluation_id = forms.IntegerField(required=False, min_value=1, help_text="Or: a model evaluation's id.")

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        if bool(data.get("file")) == bool(data.get("evaluation_id")):
            raise forms.ValidationError("Give either a JSONL file or an evaluation id.")
        if data.get("file") and not (data.get("target_model") or "").strip():
            self.add_error("target_model", "Name the model whose pass rates these are.")
        return data


class CalibrationForm(forms.Form):
    name = forms.CharField(max_length=200)
    scoring = forms.TypedChoiceField(coerce=int)
    pass_rate_set = forms.TypedChoiceField(coerce=int)
    method = forms.ChoiceField(choices=CalibrationMethod.choices)
    easy_below = forms.FloatField(min_value=0, max_value=1, initial=0.35, help_text="Difficulty (1 - pass rate) below this is easy.")
    hard_from = forms.FloatField(min_value=0, max_value=1, initial=0.65, help_text="Difficulty from this on is hard.")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["scoring"].choices = [
            (str(s.pk), f"#{s.pk} {s.backend} {s.prompt_version}")
            for s in ScoringJob.objects.filter(status="succeeded").only("id", "backend", "prompt_version")[:200]
        ]
        self.fields["pass_rate_set"].choices = [(str(p.pk), str(p)) for p in PassRateSet.objects.all()[:200]]


class ReviewQueueForm(forms.Form):
    name = forms.CharField(max_length=200)
    release = forms.TypedChoiceField(coerce=int)
    sample_size = forms.IntegerField(min_value=1, max_value=5000, initial=50)
    double_review_share = forms.FloatField(min_value=0, max_value=1, initial=0.2,
                                           help_text="Share of items two curators review (agreement, kappa).")
    seed = forms.IntegerField(initial=0)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["release"].choices = _releases()[1:]


class VerdictForm(forms.Form):
    verdict = forms.ChoiceField(choices=Verdict.choices)
    reason_codes = forms.MultipleChoiceField(required=False, choices=list(REASON_CODES.items()),
                                             widget=forms.CheckboxSelectMultiple)
    note = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2}), max_length=5000)
