"""Curation models: problems with their tests, versions and pipeline findings, imports and releases.

Storage rules that keep list pages fast on 20,000+ problems:

- A problem's tests live in ``TestCase`` rows whose input/output are zlib-compressed (``input_z``,
  ``output_z``); list queries never join them. ``Problem.test_count`` is denormalized for lists.
- Every content version of a problem is kept in ``ProblemVersion`` as one zlib-compressed JSON blob of
  ``ProblemRecord.to_export_dict()`` (statement, tests, solutions): the history, the frozen content a
  release pins, and what the exporter streams without touching the ``TestCase`` rows.
- List queries use ``Problem.objects.list_fields()`` (``.only()`` of the columns a list shows).

Business logic lives in ``curation.services``; models only describe data and decode blobs.

Modules: ``blobs`` (compressed columns), ``problems``, ``findings`` (constraints, duplicates),
``imports``, ``releases``, ``difficulty`` (scorings, pass rates,
calibrations), ``review`` (spot-check queues). Import models from ``curation.models``.
"""

from curation.models.blobs import (
    COMPRESS_MIN_BYTES,
    ZLIB_LEVEL,
    compress_json,
    compress_text,
    decompress_json,
    decompress_text,
)
from curation.models.difficulty import (
    TERMINAL_STATUSES,
    CalibratedDifficulty,
    Calibration,
    CalibrationMethod,
    JobStatus,
    PassRate,
    PassRateSet,
    PassRateSource,
    ScoringJob,
    ScoringResult,
    ScoringSample,
)
from curation.models.findings import (
    ConstraintKind,
    ConstraintResult,
    ConstraintStatus,
    DuplicateKind,
    DuplicateLink,
)
from curation.models.imports import ImportBatch, ImportStatus
from curation.models.problems import (
    Difficulty,
    IOMode,
    Problem,
    ProblemQuerySet,
    ProblemVersion,
    ReferenceSolution,
    SourcePlatform,
    Stage,
    TestCase,
)
from curation.models.releases import DatasetRelease, ReleaseItem
from curation.models.review import (
    REASON_CODES,
    Adjudication,
    ReviewAssignment,
    ReviewItem,
    ReviewQueue,
    ReviewVerdict,
    Verdict,
)

__all__ = [
    "COMPRESS_MIN_BYTES", "ZLIB_LEVEL", "compress_json", "compress_text", "decompress_json", "decompress_text",
    "ConstraintKind", "ConstraintResult", "ConstraintStatus", "DuplicateKind", "DuplicateLink",
    "ImportBatch", "ImportStatus", "Difficulty", "IOMode", "Problem", "ProblemQuerySet", "ProblemVersion",
    "ReferenceSolution", "SourcePlatform", "Stage", "TestCase", "DatasetRelease", "ReleaseItem",
    "TERMINAL_STATUSES", "CalibratedDifficulty", "Calibration", "CalibrationMethod", "JobStatus", "PassRate",
    "PassRateSet", "PassRateSource", "ScoringJob", "ScoringResult", "ScoringSample",
    "REASON_CODES", "Adjudication", "ReviewAssignment", "ReviewItem", "ReviewQueue", "ReviewVerdict", "Verdict",
]
