"""REST API of the evaluator (mounted under ``/api/``).

- ``GET /api/evaluations/`` — jobs, newest first (any role); filters ``kind``, ``status``, ``problem``.
- ``POST /api/evaluations/`` — judge ``code`` against stored problem ``problem`` (trainer or curator):
  ``{"problem": id, "code": "...", "checker"?: {...}, "stop_on_first_failure"?: true}``. Returns the job:
  202 while it is queued, 200 once finished. With ``?wait=1`` a small submission (at most
  ``EVALUATION_SYNC_MAX_TESTS`` tests, default 200) is judged inside the request, so the finished job
  with its ``verdict`` comes back; in zero-config mode (eager Celery) every submission finishes in the
  request.
- ``GET /api/evaluations/<id>/`` — one job with its results (any role).
- ``POST /api/evaluations/<id>/cancel/`` — cancel a queued or running job (its creator or an admin).
- ``POST /api/evaluations/verify-references/`` — judge the reference solutions of ``{"problems": [ids]}``
  or of the problems a release-style ``{"filter": {...}, "limit"?: n}`` selects (curator); 202 + the job.
"""

from __future__ import annotations

from typing import Any

import django_filters
from django.http import Http404
from django.urls import path, reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiParameter,
    extend_schema,
    extend_schema_field,
    extend_schema_serializer,
)
from rest_framework import generics, serializers, status
from rest_framework.exceptions import ValidationError
from rest_framework.filters import OrderingFilter
from rest_framework.permissions import SAFE_METHODS, BasePermission
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from evaluator.models import EvaluationJob
from evaluator.selectors import (
    job_detail,
    job_list,
    job_problem_ids,
    problems_to_verify,
    submission_fits_request,
    user_can_submit,
)
from evaluator.services import (
    MAX_CODE_CHARS,
    EvaluationError,
    evaluation_cancel,
    evaluation_run_inline,
    evaluation_submit,
    references_verify,
)
from webapp.roles import VIEWER, IsCurator, has_role

# ------------------------------------------------------------------------------------------ permissions


class ReadViewerWriteTrainerOrCurator(BasePermission):
    """Read for any role; writes (submitting code, cancelling) for trainers and curators."""

    def has_permission(self, request: Any, view: Any) -> bool:
        if request.method in SAFE_METHODS:
            return has_role(request.user, VIEWER)
        return user_can_submit(request.user)


# ------------------------------------------------------------------------------------------ serializers


class VerdictTestSerializer(serializers.Serializer):
    """One test of a verdict (documentation of the stored shape; extra judge keys may appear)."""

    index = serializers.IntegerField(help_text="Position of the test, from 0.")
    status = serializers.CharField(help_text="AC, WA, TLE, MLE, RE, OLE, IE.")
    method = serializers.CharField(allow_null=True, required=False, help_text="Comparator that accepted.")
    time_s = serializers.FloatField(help_text="CPU seconds.")
    wall_s = serializers.FloatField(help_text="Wall-clock seconds.")
    message = serializers.CharField(required=False, help_text="Why the test failed.")
    output = serializers.CharField(required=False, help_text="The head of the program's output (failures).")
    stderr = serializers.CharField(required=False, help_text="The tail of stderr (failures).")


@extend_schema_serializer(component_name="JudgeVerdict")  # "Verdict" is curation's review verdict
class VerdictSerializer(serializers.Serializer):
    """The evaluator's verdict on one submission (DESIGN.md section 4), compacted."""

    problem = serializers.IntegerField()
    verdict = serializers.ChoiceField(choices=["AC", "WA", "TLE", "MLE", "RE", "CE", "IE"])
    passed = serializers.IntegerField()
    total = serializers.IntegerField()
    method = serializers.CharField(allow_null=True, help_text="The comparator that accepted (AC only).")
    elapsed_s = serializers.FloatField()
    sandbox = serializers.CharField(allow_null=True, help_text='"bwrap", or "rlimit" in the weaker fallback.')
    checker = serializers.CharField(help_text="The checker kind used.")
    message = serializers.CharField(required=False)
    tests = VerdictTestSerializer(many=True, help_text="The tests that ran.")


class EvaluationJobSerializer(serializers.ModelSerializer):
    created_by = serializers.CharField(source="created_by.username", read_only=True, allow_null=True, default=None)
    problem_title = serializers.CharField(source="problem.title", read_only=True, allow_null=True, default=None)
    url = serializers.SerializerMethodField()
    page_url = serializers.SerializerMethodField()
    websocket_path = serializers.SerializerMethodField()

    class Meta:
        model = EvaluationJob
        fields = [
            "id", "kind", "status", "created_by", "problem", "problem_title", "language", "progress_done",
            "progress_total",
            "error", "created_at", "started_at", "finished_at", "url", "page_url", "websocket_path",
        ]
        read_only_fields = fields

    def get_url(self, job: EvaluationJob) -> str:
        return reverse("api-evaluation-detail", args=[job.pk])

    def get_page_url(self, job: EvaluationJob) -> str:
        return reverse("evaluator:job-detail", args=[job.pk])

    def get_websocket_path(self, job: EvaluationJob) -> str:
        """Where ``job.progress`` events for this job are streamed."""
        return f"/ws/evaluations/{job.pk}/"


class EvaluationJobDetailSerializer(EvaluationJobSerializer):
    problems = serializers.SerializerMethodField()
    verdict = serializers.SerializerMethodField()

    class Meta(EvaluationJobSerializer.Meta):
        fields = EvaluationJobSerializer.Meta.fields + [
            "problems", "code", "checker", "stop_on_first_failure", "verdict", "results",
        ]
        read_only_fields = fields

    def get_problems(self, job: EvaluationJob) -> list[int]:
        return job_problem_ids(job=job)

    @extend_schema_field(VerdictSerializer(allow_null=True))
    def get_verdict(self, job: EvaluationJob) -> dict[str, Any] | None:
        return job.verdict


class SubmissionCreateSerializer(serializers.Serializer):
    problem = serializers.IntegerField(min_value=1, help_text="Id of the stored problem to judge against.")
    code = serializers.CharField(max_length=MAX_CODE_CHARS, trim_whitespace=False)
    language = serializers.CharField(
        required=False, default="auto", max_length=16,
        help_text="python, c, cpp (c++ accepted) or auto (detected from the source: #include / int main -> C "
                  "or C++, else Python). C and C++ are compiled once (gcc/g++), a compile error is CE.",
    )
    checker = serializers.JSONField(
        required=False, allow_null=True, default=None,
        help_text='Override the problem\'s checker: {"kind": "lenient"|"strict"|"icpc", ...flags}.',
    )
    stop_on_first_failure = serializers.BooleanField(
        required=False, default=True, help_text="False runs every test (the fraction of passed tests)."
    )


class VerifyReferencesSerializer(serializers.Serializer):
    problems = serializers.ListField(child=serializers.IntegerField(min_value=1), required=False, allow_empty=False)
    filter = serializers.JSONField(
        required=False, help_text="A release filter spec (platforms, stages, difficulties, tags, ...)."
    )
    limit = serializers.IntegerField(required=False, min_value=1, help_text="At most this many filtered problems.")

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if ("problems" in attrs) == ("filter" in attrs):
            raise ValidationError("give either problems (a list of ids) or filter (a release filter spec)")
        return attrs


# ------------------------------------------------------------------------------------------ views


class JobFilter(django_filters.FilterSet):
    kind = django_filters.ChoiceFilter(choices=EvaluationJob.Kind.choices)
    status = django_filters.ChoiceFilter(choices=EvaluationJob.Status.choices)
    problem = django_filters.NumberFilter(field_name="problem_id")

    class Meta:
        model = EvaluationJob
        fields = ["kind", "status", "problem"]


def _wants_wait(request: Request) -> bool:
    return request.query_params.get("wait", "").lower() in {"1", "true", "yes"}


class EvaluationListCreate(generics.ListCreateAPIView):
    """Evaluation jobs; POST judges code against a stored problem."""

    permission_classes = [ReadViewerWriteTrainerOrCurator]
    serializer_class = EvaluationJobSerializer
    filterset_class = JobFilter
    filter_backends = [django_filters.rest_framework.DjangoFilterBackend, OrderingFilter]
    ordering_fields = ["id", "created_at", "status", "kind"]
    ordering = ["-created_at", "-id"]

    def get_queryset(self) -> Any:
        return job_list()

    @extend_schema(
        request=SubmissionCreateSerializer,
        parameters=[
            OpenApiParameter(
                "wait", OpenApiTypes.BOOL,
                description="Judge inside the request when the problem has at most EVALUATION_SYNC_MAX_TESTS "
                "tests and return the finished job (200); otherwise the job is queued (202).",
            )
        ],
        responses={200: EvaluationJobDetailSerializer, 202: EvaluationJobDetailSerializer},
    )
    def post(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        data = SubmissionCreateSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        inline = _wants_wait(request) and submission_fits_request(problem_id=v["problem"])
        try:
            job = evaluation_submit(
                problem_id=v["problem"], code=v["code"], user=request.user, checker=v["checker"],
                language=v["language"],
                stop_on_first_failure=v["stop_on_first_failure"], enqueue=not inline,
            )
        except EvaluationError as exc:
            raise ValidationError({"detail": str(exc)}) from exc
        if inline:
            evaluation_run_inline(job_id=job.pk)
        job = job_detail(job_id=job.pk)  # eager Celery (zero config) has finished it already
        code = status.HTTP_200_OK if job.is_finished else status.HTTP_202_ACCEPTED
        return Response(EvaluationJobDetailSerializer(job).data, status=code)


class EvaluationDetail(generics.RetrieveAPIView):
    serializer_class = EvaluationJobDetailSerializer
    queryset = EvaluationJob.objects.none()

    def get_object(self) -> EvaluationJob:
        try:
            return job_detail(job_id=int(self.kwargs["pk"]))
        except EvaluationJob.DoesNotExist:
            raise Http404("no such evaluation job") from None


class EvaluationCancel(APIView):
    """Cancel a queued or running job (its creator or an admin); a finished job is returned as is."""

    permission_classes = [ReadViewerWriteTrainerOrCurator]

    @extend_schema(request=None, responses={200: EvaluationJobDetailSerializer})
    def post(self, request: Request, pk: int) -> Response:
        if not EvaluationJob.objects.filter(pk=pk).exists():
            raise Http404("no such evaluation job")
        job = evaluation_cancel(job_id=pk, user=request.user)
        return Response(EvaluationJobDetailSerializer(job_detail(job_id=job.pk)).data)


class VerifyReferences(APIView):
    """Judge the reference solutions of the given (or filtered) problems; curation's reference
    constraint follows each verdict (an infrastructure error leaves it pending)."""

    permission_classes = [IsCurator]

    @extend_schema(request=VerifyReferencesSerializer, responses={202: EvaluationJobDetailSerializer})
    def post(self, request: Request) -> Response:
        data = VerifyReferencesSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        if "filter" in v:
            try:
                ids = problems_to_verify(spec=v["filter"], **({"limit": v["limit"]} if "limit" in v else {}))
            except ValueError as exc:
                raise ValidationError({"filter": [str(exc)]}) from exc
        else:
            ids = v["problems"]
        try:
            job = references_verify(problem_ids=ids, user=request.user)
        except EvaluationError as exc:
            raise ValidationError({"detail": str(exc)}) from exc
        return Response(EvaluationJobDetailSerializer(job_detail(job_id=job.pk)).data, status=status.HTTP_202_ACCEPTED)


urlpatterns = [
    path("evaluations/", EvaluationListCreate.as_view(), name="api-evaluation-list"),
    path("evaluations/verify-references/", VerifyReferences.as_view(), name="api-evaluation-verify-references"),
    path("evaluations/<int:pk>/", EvaluationDetail.as_view(), name="api-evaluation-detail"),
    path("evaluations/<int:pk>/cancel/", EvaluationCancel.as_view(), name="api-evaluation-cancel"),
]
