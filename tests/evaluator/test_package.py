"""Problem packages on disk: ``python -m evaluator package`` and the ICPC importer on the same packages."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from curation.importers.icpc import convert_package
from evaluator.package import PackageError, judge_package, package_case

from . import test_django_support as support
from .conftest import FAST
from .program_fixtures import (
    C_SUM,
    C_SUM_WRONG,
    CPP_SUM,
    GUESS_INTERACTOR_PY,
    GUESS_NO_FLUSH,
    GUESS_OK,
    GUESS_SILENT,
    GUESS_WRONG,
    PAIR_ANY,
    PAIR_OTHER,
    PAIR_VALIDATOR_CPP,
    PAIR_WRONG,
    PY_SUM,
    VALIDATE_H,
    write_package,
)

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MICROCODER_COMPILE_CACHE", str(tmp_path / "compile-cache"))


def submission(tmp_path: Path, name: str, code: str) -> Path:
    path = tmp_path / name
    path.write_text(code)
    return path


@pytest.fixture
def sum_package(tmp_path: Path) -> Path:
    return write_package(tmp_path, "sum", meta={"name": "Sum", "limits": {"time_limit": 1, "memory": 256}},
                         samples=[("1 2\n", "3\n")], secret={"": [("40 2\n", "42\n")], "big": [("7 8\n", "15\n")]})


@pytest.fixture
def pair_package(tmp_path: Path) -> Path:
    return write_package(tmp_path, "pair", meta={"name": "Pair", "validation": "custom"},
                         samples=[("5\n", "2 3\n")], secret={"": [("10\n", "5 5\n")]},
                         validator={"validator.cpp": PAIR_VALIDATOR_CPP, "validate.h": VALIDATE_H})


@pytest.fixture
def guess_package(tmp_path: Path) -> Path:
    return write_package(tmp_path, "guess", meta={"name": "Guess", "type": "interactive",
                                                  "limits": {"time_limit": 0.5}},
                         samples=[("37\n", None)], secret={"": [("1000\n", None)]},
                         validator={"interactor.py": GUESS_INTERACTOR_PY}, validator_dir="output_validator")


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "evaluator", "package", *args], capture_output=True, text=True,
                          cwd=ROOT, env=env, timeout=300, check=False)


def test_it_reads_limits_and_tests_in_sample_then_secret_order(sum_package: Path) -> None:
    case = package_case(sum_package, PY_SUM)
    assert (case["time_limit_s"], case["memory_mb"], case["checker"]) == (1.0, 256, {"kind": "icpc"})
    assert [t["input"] for t in case["tests"]] == ["1 2\n", "40 2\n", "7 8\n"]


def test_it_judges_c_and_cpp_submissions_by_their_extension(sum_package: Path, tmp_path: Path) -> None:
    c = judge_package(sum_package, submission(tmp_path, "a.c", C_SUM), config=FAST)
    cpp = judge_package(sum_package, submission(tmp_path, "b.cpp", CPP_SUM), config=FAST)
    wrong = judge_package(sum_package, submission(tmp_path, "c.c", C_SUM_WRONG), config=FAST)
    assert [(v["verdict"], v["passed"]) for v in (c, cpp, wrong)] == [("AC", 3), ("AC", 3), ("WA", 0)]


def test_it_follows_symlinked_test_data(tmp_path: Path) -> None:
    shared = tmp_path / "shared-data"
    shared.mkdir()
    (shared / "x.in").write_text("2 2\n")
    (shared / "x.ans").write_text("4\n")
    package = write_package(tmp_path, "linked", samples=[("1 1\n", "2\n")], secret={"": [("3 3\n", "6\n")]})
    (package / "data" / "secret" / "group").symlink_to(shared, target_is_directory=True)
    (package / "data" / "secret" / "02.in").symlink_to(shared / "x.in")
    (package / "data" / "secret" / "02.ans").symlink_to(shared / "x.ans")
    case = package_case(package, PY_SUM)
    assert [t["input"] for t in case["tests"]] == ["1 1\n", "3 3\n", "2 2\n", "2 2\n"]


def test_it_applies_the_default_validators_flags(tmp_path: Path) -> None:
    package = write_package(tmp_path, "area", meta={"validator_flags": "float_tolerance 1e-3"},
                            samples=[("2\n", "12.566370\n")])
    close = submission(tmp_path, "close.py", "print(12.5667)\n")
    far = submission(tmp_path, "far.py", "print(12.6)\n")
    assert judge_package(package, close, config=FAST)["verdict"] == "AC"
    assert judge_package(package, far, config=FAST)["verdict"] == "WA"


def test_it_takes_flags_from_testdata_yaml_when_problem_yaml_has_none(tmp_path: Path) -> None:
    package = write_package(tmp_path, "word", samples=[("\n", "Hello\n")],
                            testdata={"output_validator_flags": "case_sensitive"})
    assert package_case(package, "")["checker"] == {"kind": "icpc", "case_sensitive": True}
    assert judge_package(package, submission(tmp_path, "a.py", "print('hello')\n"), config=FAST)["verdict"] == "WA"


def test_it_accepts_any_valid_answer_with_the_packages_validator(pair_package: Path, tmp_path: Path) -> None:
    verdicts = [judge_package(pair_package, submission(tmp_path, f"{i}.py", code), config=FAST)
                for i, code in enumerate((PAIR_ANY, PAIR_OTHER, PAIR_WRONG))]
    assert [v["verdict"] for v in verdicts] == ["AC", "AC", "WA"]
    assert verdicts[2]["tests"][0]["message"] == "the sum is wrong"


def test_it_judges_an_interactive_package(guess_package: Path, tmp_path: Path) -> None:
    verdicts = [judge_package(guess_package, submission(tmp_path, f"{i}.py", code), config=FAST)["verdict"]
                for i, code in enumerate((GUESS_OK, GUESS_WRONG, GUESS_NO_FLUSH, GUESS_SILENT))]
    assert verdicts == ["AC", "WA", "TLE", "WA"]


def test_it_refuses_a_custom_validation_package_without_validator_sources(tmp_path: Path) -> None:
    package = write_package(tmp_path, "novalidator", meta={"validation": "custom"}, samples=[("1\n", "1\n")])
    with pytest.raises(PackageError, match="no output_validator"):
        package_case(package, PY_SUM)


def test_the_cli_prints_one_json_verdict(pair_package: Path, tmp_path: Path) -> None:
    proc = run_cli(str(pair_package), str(submission(tmp_path, "sol.py", PAIR_OTHER)))
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.strip().splitlines()
    assert len(lines) == 1
    verdict = json.loads(lines[0])
    assert (verdict["id"], verdict["verdict"], verdict["checker"], verdict["total"]) == ("pair", "AC", "program", 2)


def test_the_cli_takes_an_explicit_language(sum_package: Path, tmp_path: Path) -> None:
    proc = run_cli(str(sum_package), str(submission(tmp_path, "sol.txt", C_SUM)), "--language", "c")
    assert json.loads(proc.stdout)["verdict"] == "AC"


def test_the_cli_reports_a_folder_that_is_not_a_package_as_a_usage_error(tmp_path: Path) -> None:
    proc = run_cli(str(tmp_path), str(submission(tmp_path, "sol.py", PY_SUM)))
    assert proc.returncode == 2 and "no problem.yaml" in proc.stderr


def test_the_importer_stores_a_custom_validator_as_a_checker_program(pair_package: Path) -> None:
    (pair_package / "problem_statement").mkdir()
    (pair_package / "problem_statement" / "problem.en.md").write_text("Print two numbers summing to n.")
    record = convert_package(pair_package)
    assert record.checker["kind"] == "program" and record.checker["language"] == "cpp"
    assert sorted(record.checker["sources"]) == ["validate.h", "validator.cpp"]


def test_the_importer_marks_interactive_packages_and_keeps_c_references(guess_package: Path) -> None:
    (guess_package / "problem_statement").mkdir()
    (guess_package / "problem_statement" / "problem.en.md").write_text("Guess the number.")
    accepted = guess_package / "submissions" / "accepted"
    accepted.mkdir(parents=True)
    (accepted / "guess.c").write_text("int main(void){return 0;}\n")
    record = convert_package(guess_package)
    assert (record.checker["interactive"], record.checker["passes"]) == (True, 1)
    assert [t.output for t in record.tests] == ["", ""]
    assert [s.language for s in record.solutions] == ["c"]


# the shared Django fixtures, bound here so pytest finds them in this module
_eager_and_in_memory = support._eager_and_in_memory
make_problem = support.make_problem


@pytest.mark.django_db
def test_a_stored_problem_with_a_validator_verifies_its_references(make_problem: Any, curator: Any) -> None:
    from curation.models import ReferenceSolution
    from evaluator.services import evaluation_run, references_verify

    checker = {"kind": "program", "protocol": "icpc", "language": "cpp",
               "sources": {"validator.cpp": PAIR_VALIDATOR_CPP, "validate.h": VALIDATE_H}}
    problem = make_problem("pairs", tests=[("5\n", "2 3\n"), ("10\n", "5 5\n")],
                           solutions=[PAIR_OTHER, PAIR_WRONG], checker=checker)
    job = evaluation_run(job_id=references_verify(problem_ids=[problem.pk], user=curator, enqueue=False).pk)
    verdicts = list(ReferenceSolution.objects.filter(problem=problem).order_by("order").values_list("verdict", flat=True))
    assert verdicts == ["AC", "WA"]
    assert job.results[0]["outcome"] == "passed"


def test_the_import_refuses_a_checker_program_without_source(pair_package: Path) -> None:
    from curation.importers.base import check_record

    (pair_package / "problem_statement").mkdir()
    (pair_package / "problem_statement" / "problem.en.md").write_text("Print two numbers summing to n.")
    record = convert_package(pair_package)
    assert check_record(record) is None
    record.checker = {"kind": "program", "language": "cpp"}
    assert check_record(record) == "checker program: 'source' (the checker program's text) is missing"


def test_it_refuses_a_problem_yaml_with_aliases(tmp_path: Path) -> None:
    (tmp_path / "problem.yaml").write_text("a: &a [1, 2]\nb: *a\n")
    with pytest.raises(PackageError, match=r"aliases are not allowed \(\*a at line 2\)"):
        package_case(tmp_path, "print(1)\n", language="python")
