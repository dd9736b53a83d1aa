"""Serializers of the difficulty and review API (``curation.api_difficulty``)."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from curation.difficulty import DIMENSIONS
from curation.models import (
    REASON_CODES,
    CalibratedDifficulty,
    Calibration,
    CalibrationMethod,
    PassRateSet,
    ReviewItem,
    ReviewQueue,
    ScoringJob,
    ScoringResult,
    Verdict,
)


class ScoringSerializer(serializers.ModelSerializer):
    created_by = serializers.CharField(source="created_by.username", default=None, read_only=True, allow_null=True)

    class Meta:
        model = ScoringJob
        fields = ["id", "backend", "model", "prompt_version", "weights", "samples_per_problem", "release",
                  "filter_spec", "status", "reason", "progress_done", "progress_total", "error_count",
                  "prompt_tokens", "completion_tokens", "attempts", "created_by", "created_at", "started_at", "finished_at"]


class ScoringResultSerializer(serializers.ModelSerializer):
    class Meta:
        model = ScoringResult
        fields = ["problem", "score", "dimensions", "error"]


class ScoringCreateSerializer(serializers.Serializer):
    backend = serializers.ChoiceField(choices=["heuristic", "openai"])
    model = serializers.CharField(required=False, allow_blank=True, default="", max_length=200)
    samples = serializers.IntegerField(required=False, default=3, min_value=1, max_value=10)
    weights = serializers.DictField(child=serializers.FloatField(min_value=0), required=False, allow_null=True)
    release = serializers.IntegerField(required=False, allow_null=True, min_value=1)
    problem_ids = serializers.ListField(child=serializers.IntegerField(min_value=1), required=False, max_length=200000)
    filter_spec = serializers.JSONField(required=False)

    def validate_weights(self, value: dict[str, float] | None) -> dict[str, float] | None:
        unknown = sorted(set(value or {}) - set(DIMENSIONS))
        if unknown:
            raise serializers.ValidationError(f"unknown dimension(s) {unknown}; known: {list(DIMENSIONS)}")
        return value

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        given = [k for k in ("release", "problem_ids", "filter_spec") if attrs.get(k) not in (None, [], {})]
        if len(given) > 1:
            raise serializers.ValidationError({given[1]: "give one of release, problem_ids or filter_spec"})
        return attrs


class PassRateSetSerializer(serializers.ModelSerializer):
    rates = serializers.IntegerField(source="rates.count", read_only=True)

    class Meta:
        model = PassRateSet
        fields = ["id", "name", "target_model", "source", "evaluation_id", "filename", "row_count", "rates",
                  "unmatched_count", "unmatched", "created_at"]


class PassRateUploadSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=200)
    target_model = serializers.CharField(required=False, allow_blank=True, max_length=300, default="")
    file = serializers.FileField(required=False, help_text="JSONL rows {platform, external_id, passed, attempts}.")
    evaluation_id = serializers.IntegerField(required=False, min_value=1)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if bool(attrs.get("file")) == bool(attrs.get("evaluation_id")):
            raise serializers.ValidationError({"file": "give either a JSONL file or an evaluation_id"})
        if attrs.get("file") and not attrs.get("target_model", "").strip():
            raise serializers.ValidationError({"target_model": "name the model whose pass rates these are"})
        return attrs


class CalibrationSerializer(serializers.ModelSerializer):
    class Meta:
        model = Calibration
        fields = ["id", "name", "version", "scoring", "pass_rate_set", "method", "fit", "cv_mae", "cv_brier",
                  "n_points", "easy_below", "hard_from", "counts_by_bucket", "applied_at", "created_at"]


class CalibrationCreateSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=200)
    scoring = serializers.IntegerField(min_value=1)
    pass_rate_set = serializers.IntegerField(min_value=1)
    method = serializers.ChoiceField(choices=CalibrationMethod.values, default=CalibrationMethod.ISOTONIC)
    easy_below = serializers.FloatField(min_value=0, max_value=1, default=0.35)
    hard_from = serializers.FloatField(min_value=0, max_value=1, default=0.65)


class CalibratedDifficultySerializer(serializers.ModelSerializer):
    class Meta:
        model = CalibratedDifficulty
        fields = ["problem", "score", "predicted_pass_rate", "measured_passed", "measured_attempts",
                  "difficulty", "bucket"]


class ReviewQueueSerializer(serializers.ModelSerializer):
    class Meta:
        model = ReviewQueue
        fields = ["id", "name", "release", "filter_spec", "sample_size", "double_review_share", "seed", "strata",
                  "created_at"]


class ReviewQueueCreateSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=200)
    release = serializers.IntegerField(required=False, allow_null=True, min_value=1)
    filter_spec = serializers.JSONField(required=False)
    sample_size = serializers.IntegerField(min_value=1, max_value=5000)
    double_review_share = serializers.FloatField(min_value=0, max_value=1, default=0.2)
    seed = serializers.IntegerField(default=0)


class ReviewItemSerializer(serializers.ModelSerializer):
    title = serializers.CharField(source="problem.title", read_only=True)

    class Meta:
        model = ReviewItem
        fields = ["id", "queue", "problem", "title", "position", "platform", "bucket", "required_reviews"]


class VerdictSerializer(serializers.Serializer):
    verdict = serializers.ChoiceField(choices=Verdict.values)
    reason_codes = serializers.ListField(child=serializers.ChoiceField(choices=list(REASON_CODES)), required=False,
                                         default=list)
    note = serializers.CharField(required=False, allow_blank=True, default="", max_length=5000)
