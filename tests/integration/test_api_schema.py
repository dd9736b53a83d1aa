"""The API against its own OpenAPI schema, on the real server (daphne): schemathesis generates requests
for every GET operation and for the validation endpoint ``POST /api/runs/check/`` (odd types, NUL
characters, boundary values ...) and checks that no answer is a server error and every answer (status,
content type, body) is the one the schema documents. Stored objects (a run and a job without creator,
a release, an import batch) are fetched by id and validated against the schema as well.

Run: ``REDIS_URL=redis://127.0.0.1:6379/5 DATABASE_URL=postgresql://postgres@127.0.0.1:5432/postgres
TEST_DATABASE_NAME=test_schema .venv/bin/pytest tests/integration/test_api_schema.py``.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.evaluator import test_django_support as support

from .conftest import Service

pytestmark = pytest.mark.django_db(transaction=True)

make_problem = support.make_problem

#: the checks every generated answer must pass
CHECKS = "not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance"
#: (phases, examples per operation): every GET operation fuzzed (positive and negative data: odd types,
#: NUL bytes ...), the one validation endpoint also covered systematically; each run stays < 60 s
GET_RUN = ("fuzzing", 12)
CHECK_RUN = ("coverage,fuzzing", 25)


@pytest.fixture
def admin_token(admin_user: Any) -> str:
    from rest_framework.authtoken.models import Token

    return str(Token.objects.create(user=admin_user).key)


@pytest.fixture
def stored(make_problem: Any, admin_user: Any) -> dict[str, int]:
    """One object of each kind whose detail the schema describes, some without a creator."""
    from curation.models import ImportBatch
    from curation.services import release_create
    from evaluator.models import EvaluationJob
    from training.models import TrainingRun

    problem = make_problem()
    release = release_create(name="schema", filter_spec={}, user=None)
    run = TrainingRun.objects.create(name="orphan", config={"max_steps": 1})
    job = EvaluationJob.objects.create(kind=EvaluationJob.Kind.VERIFY_REFERENCES)
    batch = ImportBatch.objects.order_by("-id").first()
    assert batch is not None
    return {"problem": problem.pk, "release": release.pk, "run": run.pk, "job": job.pk, "batch": batch.pk}


def _schemathesis(port: int, token: str, *filters: str, run: tuple[str, int], tmp_path: Path
                  ) -> subprocess.CompletedProcess[str]:
    st = Path(sys.executable).with_name("st")
    phases, examples = run
    argv = [
        str(st), "run", f"http://127.0.0.1:{port}/api/schema/", "-H", f"Authorization: Token {token}",
        *filters, "--checks", CHECKS, "--max-examples", str(examples), "--seed", "20261202", "--no-shrink",
        "--workers", "4", "--phases", phases, "--request-timeout", "20",
        "--suppress-health-check", "all", "--warnings", "off",
    ]
    return subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=170)


def test_it_answers_generated_get_requests_without_server_errors_and_as_documented(
    daphne_server: tuple[Service, int], admin_token: str, stored: dict[str, int], tmp_path: Path
) -> None:
    _, port = daphne_server
    # the schema document itself is no API operation (its ?format= picks the schema's own renderers)
    result = _schemathesis(port, admin_token, "--include-method", "GET", "--exclude-path", "/api/schema/",
                           run=GET_RUN, tmp_path=tmp_path)
    assert result.returncode == 0, result.stdout[-12000:] + result.stderr[-3000:]


def test_it_answers_generated_config_checks_without_server_errors_and_as_documented(
    daphne_server: tuple[Service, int], admin_token: str, tmp_path: Path
) -> None:
    _, port = daphne_server
    result = _schemathesis(port, admin_token, "--include-path", "/api/runs/check/", run=CHECK_RUN, tmp_path=tmp_path)
    assert result.returncode == 0, result.stdout[-12000:] + result.stderr[-3000:]


@pytest.mark.parametrize(
    "path,key",
    [("/api/problems/{id}/", "problem"), ("/api/releases/{id}/", "release"), ("/api/runs/{id}/", "run"),
     ("/api/evaluations/{id}/", "job"), ("/api/imports/{id}/", "batch")],
)
def test_it_returns_stored_objects_as_the_schema_describes_them(
    daphne_server: tuple[Service, int], admin_token: str, stored: dict[str, int], path: str, key: str
) -> None:
    import schemathesis

    _, port = daphne_server
    headers = {"Authorization": f"Token {admin_token}"}
    schema = schemathesis.openapi.from_url(f"http://127.0.0.1:{port}/api/schema/", headers=headers)
    case = schema[path]["GET"].Case(path_parameters={"id": stored[key]})
    response = case.call(base_url=f"http://127.0.0.1:{port}", headers=headers)
    assert response.status_code == 200, response.text
    case.validate_response(response)  # raises with the mismatch (e.g. a null the schema does not allow)
