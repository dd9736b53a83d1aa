"""Curation services (writes). Typed, keyword-only ``<entity>_<action>`` functions.

The public surface other apps use:

- ``problem_import(*, path, format, user=None, batch_size=500) -> ImportBatch``
- ``import_batch_create(*, uploaded_file, format="auto", user=None, run_pipeline=True) -> ImportBatch``,
  ``import_batch_run(*, batch_id) -> RunOutcome`` (the Celery task body) and
  ``import_batch_resume(*, batch_id) -> ImportBatch`` (run a failed batch again on its file)
- ``problems_normalize(*, problem_ids=None, threshold=None) -> NormalizeReport``
- ``problems_check_constraints(*, problem_ids=None, config=None) -> dict[stage, count]``
- ``problem_set_reference_verdict(*, problem_id, passed, verdict, reason="", solution_id=None) -> Problem``
- ``problem_judge_case(problem, code, *, max_tests=None) -> dict`` (an evaluator case)
- ``release_create(*, name, filter_spec, user=None, description="") -> DatasetRelease``
"""

from curation.services.checks import derive_stage, problem_set_reference_verdict, problems_check_constraints
from curation.services.imports import problem_import
from curation.services.judge import problem_judge_case
from curation.services.normalization import NormalizeReport, problems_normalize
from curation.services.releases import EmptyReleaseError, release_content_hash, release_create
from curation.services.uploads import UploadError, import_batch_create, import_batch_resume, import_batch_run

__all__ = [
    "EmptyReleaseError",
    "NormalizeReport",
    "UploadError",
    "derive_stage",
    "import_batch_create",
    "import_batch_resume",
    "import_batch_run",
    "problem_import",
    "problem_judge_case",
    "problem_set_reference_verdict",
    "problems_check_constraints",
    "problems_normalize",
    "release_content_hash",
    "release_create",
]
