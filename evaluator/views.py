"""Pages of the evaluator: the job list, a job's live detail page, the judge page, starting a
reference verification. Business logic lives in ``evaluator.services``; these only validate input,
call one service and render."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from evaluator.models import EvaluationJob
from evaluator.selectors import (
    job_detail,
    job_list,
    job_problem_ids,
    problem_choices,
    submission_fits_request,
    sync_max_tests,
    user_can_cancel,
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
from webapp.roles import CURATOR, VIEWER, has_role, role_required

#: language choices of the judge page: "auto" detects C / C++ from the source, else Python
LANGUAGE_CHOICES = [("auto", "auto-detect"), ("python", "Python"), ("c", "C (gcc)"), ("cpp", "C++ (g++)")]
#: checker choices of the judge page: "" keeps the problem's own checker
CHECKER_CHOICES = (
    ("", "the problem's checker"),
    ("lenient", "lenient (MicroCoder fallback chain)"),
    ("strict", "strict (LiveCodeBench-style)"),
)


def submitter_required(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Page decorator: anonymous users go to the login page; users who cannot judge code get 403."""

    @wraps(view)
    def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if not user_can_submit(request.user):
            raise PermissionDenied("the trainer or curator role is required")
        return view(request, *args, **kwargs)

    return login_required(wrapped)


class JudgeForm(forms.Form):
    problem = forms.IntegerField(min_value=1, help_text="Id of the stored problem.")
    code = forms.CharField(widget=forms.Textarea(attrs={"rows": 18, "spellcheck": "false"}), max_length=MAX_CODE_CHARS,
                           strip=False)
    language = forms.ChoiceField(choices=LANGUAGE_CHOICES, required=False, initial="auto")
    checker = forms.ChoiceField(choices=CHECKER_CHOICES, required=False)
    run_all_tests = forms.BooleanField(required=False, help_text="Run every test instead of stopping at the first failure.")

    def checker_override(self) -> dict[str, Any] | None:
        kind = self.cleaned_data.get("checker") or ""
        return {"kind": kind} if kind else None


class VerifyForm(forms.Form):
    problems = forms.CharField(help_text="Problem ids separated by spaces or commas.")

    def clean_problems(self) -> list[int]:
        raw = self.cleaned_data["problems"].replace(",", " ").split()
        try:
            ids = sorted({int(x) for x in raw})
        except ValueError:
            raise forms.ValidationError("problem ids must be whole numbers") from None
        if not ids:
            raise forms.ValidationError("give at least one problem id")
        return ids


@role_required(VIEWER)
def job_list_page(request: HttpRequest) -> HttpResponse:
    filters = {"kind": request.GET.get("kind", ""), "status": request.GET.get("status", "")}
    page = Paginator(job_list(filters=filters), 50).get_page(request.GET.get("page"))
    return render(request, "evaluator/job_list.html", {
        "page": page,
        "filters": filters,
        "kinds": EvaluationJob.Kind.choices,
        "statuses": EvaluationJob.Status.choices,
        "can_submit": user_can_submit(request.user),
        "can_verify": has_role(request.user, CURATOR),
        "verify_form": VerifyForm(),
    })


@role_required(VIEWER)
def job_detail_page(request: HttpRequest, job_id: int) -> HttpResponse:
    try:
        job = job_detail(job_id=job_id)
    except EvaluationJob.DoesNotExist:
        raise Http404("no such evaluation job") from None
    can_cancel = not job.is_finished and user_can_cancel(job=job, user=request.user)
    return render(request, "evaluator/job_detail.html", {
        "job": job,
        "problem_ids": job_problem_ids(job=job),
        "can_cancel": can_cancel,
        "ws_path": f"/ws/evaluations/{job.pk}/",
    })


@require_POST
@submitter_required
def job_cancel_page(request: HttpRequest, job_id: int) -> HttpResponse:
    if not EvaluationJob.objects.filter(pk=job_id).exists():
        raise Http404("no such evaluation job")
    evaluation_cancel(job_id=job_id, user=request.user)
    messages.success(request, f"Job #{job_id} cancelled.")
    return redirect("evaluator:job-detail", job_id=job_id)


@require_http_methods(["GET", "POST"])
@submitter_required
def judge_page(request: HttpRequest) -> HttpResponse:
    """GET: the form (``?problem=<id>`` preselects). POST: a small submission is judged right away and
    shown here; a big one is queued and the browser goes to the job's live page."""
    job: EvaluationJob | None = None
    if request.method == "POST":
        form = JudgeForm(request.POST)
        if form.is_valid():
            problem_id = form.cleaned_data["problem"]
            inline = submission_fits_request(problem_id=problem_id)
            try:
                job = evaluation_submit(
                    problem_id=problem_id, code=form.cleaned_data["code"], user=request.user,
                    checker=form.checker_override(), stop_on_first_failure=not form.cleaned_data["run_all_tests"],
                    language=form.cleaned_data.get("language") or "auto",
                    enqueue=not inline,
                )
            except EvaluationError as exc:
                form.add_error(None, str(exc))
            else:
                if not inline:
                    messages.info(request, f"Job #{job.pk} queued: the problem has more than {sync_max_tests()} tests.")
                    return redirect("evaluator:job-detail", job_id=job.pk)
                evaluation_run_inline(job_id=job.pk)
                job = job_detail(job_id=job.pk)
    else:
        form = JudgeForm(initial={"problem": request.GET.get("problem") or None})
    return render(request, "evaluator/judge.html", {"form": form, "job": job, "problems": problem_choices()})


@require_POST
@role_required(CURATOR)
def verify_page(request: HttpRequest) -> HttpResponse:
    form = VerifyForm(request.POST)
    if not form.is_valid():
        for error in form.errors.get("problems", []):
            messages.error(request, error)
        return redirect("evaluator:job-list")
    try:
        job = references_verify(problem_ids=form.cleaned_data["problems"], user=request.user)
    except EvaluationError as exc:
        messages.error(request, str(exc))
        return redirect("evaluator:job-list")
    return redirect("evaluator:job-detail", job_id=job.pk)
