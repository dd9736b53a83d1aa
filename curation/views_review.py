"""Spot-check pages: review queues, the keyboard-driven review page, the adjudication queue.
Viewers read; curators create queues, review and adjudicate."""

from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from curation.forms_difficulty import ReviewQueueForm, VerdictForm
from curation.models import REASON_CODES, ReviewItem, ReviewQueue, ReviewVerdict, Verdict
from curation.rendering import statement_html
from curation.selectors import problem_sample_tests
from curation.selectors_review import (
    disputed_items,
    item_final_verdict,
    queue_items,
    queue_stats,
    review_queue_list,
)
from curation.services.review import (
    review_adjudicate,
    review_next_item,
    review_queue_create,
    review_verdict_submit,
)
from webapp.roles import CURATOR, VIEWER, has_role, role_required


@role_required(VIEWER)
def queue_list_view(request: HttpRequest) -> HttpResponse:
    form = ReviewQueueForm(request.POST or None)
    if request.method == "POST":
        if not has_role(request.user, CURATOR):
            raise PermissionDenied("the curator role is required")
        if form.is_valid():
            try:
                queue = review_queue_create(
                    name=form.cleaned_data["name"], release_id=form.cleaned_data["release"],
                    sample_size=form.cleaned_data["sample_size"],
                    double_review_share=form.cleaned_data["double_review_share"], seed=form.cleaned_data["seed"],
                    user=request.user)
            except ValueError as exc:
                form.add_error(None, str(exc))
            else:
                messages.success(request, f"Queue {queue} created with {queue.sample_size} problems.")
                return redirect("difficulty:queue-detail", pk=queue.pk)
    queues = list(review_queue_list()[:100])
    rows = [(q, queue_stats(queue=q)) for q in queues]
    return render(request, "curation/review/queue_list.html", {"rows": rows, "form": form})


@role_required(VIEWER)
def queue_detail_view(request: HttpRequest, pk: int) -> HttpResponse:
    queue = get_object_or_404(review_queue_list(), pk=pk)
    items = queue_items(queue=queue)
    rows = [(item, item_final_verdict(item)) for item in items]
    return render(request, "curation/review/queue_detail.html",
                  {"queue": queue, "stats": queue_stats(queue=queue), "rows": rows})


@role_required(CURATOR)
def review_view(request: HttpRequest, pk: int) -> HttpResponse:
    """The keyboard page: ``?pos=N`` shows item N, otherwise the next item this curator owes."""
    queue = get_object_or_404(ReviewQueue, pk=pk)
    pos = request.GET.get("pos")
    if pos is not None:
        try:
            item = ReviewItem.objects.select_related("problem", "problem__platform").get(queue=queue, position=int(pos))
        except (ValueError, ReviewItem.DoesNotExist):
            raise Http404("no such item in this queue") from None
    else:
        next_item = review_next_item(queue_id=queue.pk, user=request.user)
        if next_item is None:
            messages.info(request, "Nothing left for you to review in this queue.")
            return redirect("difficulty:queue-detail", pk=queue.pk)
        item = next_item
    mine = ReviewVerdict.objects.filter(item=item, reviewer=request.user).first()
    stats = queue_stats(queue=queue)
    mine_done = ReviewVerdict.objects.filter(item__queue=queue, reviewer=request.user).count()
    return render(request, "curation/review/review.html", {
        "queue": queue, "item": item, "problem": item.problem, "mine": mine, "stats": stats,
        "statement": statement_html(item.problem.statement),
        "mine_done": mine_done, "total": queue.sample_size,
        "form": VerdictForm(initial={"reason_codes": mine.reason_codes if mine else [], "note": mine.note if mine else ""}),
        "samples": problem_sample_tests(problem=item.problem, limit=2),
        "reason_codes": REASON_CODES, "verdicts": Verdict.choices,
        "prev_pos": item.position - 1 if item.position > 1 else None,
        "next_pos": item.position + 1 if item.position < queue.sample_size else None,
    })


@require_POST
@role_required(CURATOR)
def verdict_view(request: HttpRequest, item_id: int) -> HttpResponse:
    item = get_object_or_404(ReviewItem, pk=item_id)
    form = VerdictForm(request.POST)
    if not form.is_valid():
        messages.error(request, "; ".join(f"{k}: {' '.join(v)}" for k, v in form.errors.items()))
        return redirect(f"{reverse('difficulty:review', args=[item.queue_id])}?pos={item.position}")
    try:
        review_verdict_submit(item_id=item.pk, user=request.user, verdict=form.cleaned_data["verdict"],
                              reason_codes=form.cleaned_data["reason_codes"], note=form.cleaned_data["note"])
    except ValueError as exc:
        messages.error(request, str(exc))
        return redirect(f"{reverse('difficulty:review', args=[item.queue_id])}?pos={item.position}")
    messages.success(request, f"#{item.position}: {form.cleaned_data['verdict']}")
    return redirect("difficulty:review", pk=item.queue_id)


@role_required(VIEWER)
def adjudication_view(request: HttpRequest) -> HttpResponse:
    if request.method == "POST":
        if not has_role(request.user, CURATOR):
            raise PermissionDenied("the curator role is required")
        try:
            review_adjudicate(item_id=int(request.POST.get("item", "0")), user=request.user,
                              verdict=request.POST.get("verdict", ""), note=request.POST.get("note", ""))
        except ValueError as exc:
            messages.error(request, str(exc))
        else:
            messages.success(request, "Adjudicated.")
        return redirect("difficulty:adjudication")
    return render(request, "curation/review/adjudication.html",
                  {"items": disputed_items(), "verdicts": Verdict.choices})
