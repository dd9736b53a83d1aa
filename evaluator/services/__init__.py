"""Evaluation jobs (writes): submit, verify references, run, cancel, fail.

Modules: ``jobs`` (create, enqueue, cancel, fail), ``running`` (``evaluation_run``, the task body) and
``verdicts`` (pure helpers: what a job stores of a verdict, what curation is told).

Contracts:

- ``evaluation_submit`` and ``references_verify`` create a ``queued`` job and, unless told not to,
  enqueue ``evaluator.tasks.run_evaluation`` once the surrounding transaction commits.
- ``evaluation_run`` is the task body. It moves a job ``queued``/``running`` -> ``running`` ->
  ``succeeded`` (or ``failed``), judging in chunks with the evaluator core (``judge_batch``) and
  committing progress (and, for verify jobs, each reference verdict) after every chunk, then
  publishing ``job.progress``. It is idempotent: a finished job is returned untouched, and a job left
  ``running`` by a crashed or retried worker starts over from scratch. Infrastructure failures raise
  ``EvaluationInfrastructureError`` (or a database error) so the task can retry; a problem with the
  job itself (bad data) marks it ``failed`` with the reason and returns.
- A reference solution judged ``IE`` (the judge could not run it) is never reported to curation as
  rejected: its constraint stays pending and the job's result says why.
- ``evaluation_cancel`` stops a job between chunks; verdicts already recorded stay recorded.
"""

from evaluator.services.jobs import (
    CHECKER_KINDS,
    MAX_CODE_CHARS,
    MAX_VERIFY_PROBLEMS,
    EvaluationError,
    EvaluationInfrastructureError,
    evaluation_cancel,
    evaluation_enqueue,
    evaluation_fail,
    evaluation_submit,
    references_verify,
    validate_checker,
)
from evaluator.services.running import evaluation_run, evaluation_run_inline
from evaluator.services.verdicts import compact_verdict, problem_outcome, verdict_reason

__all__ = [
    "CHECKER_KINDS",
    "MAX_CODE_CHARS",
    "MAX_VERIFY_PROBLEMS",
    "EvaluationError",
    "EvaluationInfrastructureError",
    "compact_verdict",
    "evaluation_cancel",
    "evaluation_enqueue",
    "evaluation_fail",
    "evaluation_run",
    "evaluation_run_inline",
    "evaluation_submit",
    "problem_outcome",
    "references_verify",
    "validate_checker",
    "verdict_reason",
]
