"""C and C++ solutions: compiled once per source (cached by hash), run in the same sandbox as Python."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from evaluator import languages
from evaluator.runner import judge_batch, judge_case

from . import test_django_support as support
from .conftest import FAST
from .program_fixtures import (
    C_BROKEN,
    C_CRASH,
    C_LOOP,
    C_SUM,
    C_SUM_WRONG,
    CPP_BROKEN,
    CPP_SUM,
    CPP_SUM_WRONG,
    SUM_TESTS,
)


@pytest.fixture(autouse=True)
def private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MICROCODER_COMPILE_CACHE", str(tmp_path / "compile-cache"))
    languages.clear_cache()


def case(code: str, language: str, **extra: object) -> dict[str, object]:
    return {"id": language, "language": language, "code": code, "tests": SUM_TESTS, **extra}


def test_it_accepts_a_correct_c_solution() -> None:
    verdict = judge_case(case(C_SUM, "c"), config=FAST)
    assert (verdict["verdict"], verdict["passed"]) == ("AC", 2)


def test_it_accepts_a_correct_cpp_solution() -> None:
    verdict = judge_case(case(CPP_SUM, "c++"), config=FAST)
    assert (verdict["verdict"], verdict["passed"]) == ("AC", 2)


def test_it_gives_wa_to_wrong_c_and_cpp_answers() -> None:
    verdicts = judge_batch([case(C_SUM_WRONG, "c"), case(CPP_SUM_WRONG, "cpp")], config=FAST)
    assert [v["verdict"] for v in verdicts] == ["WA", "WA"]


def test_it_gives_ce_with_the_compilers_message() -> None:
    c, cpp = judge_batch([case(C_BROKEN, "c"), case(CPP_BROKEN, "cpp")], config=FAST)
    assert c["verdict"] == "CE" and "error" in c["message"] and "main.c" in c["message"]
    assert cpp["verdict"] == "CE" and "undeclared_call" in cpp["message"]


def test_it_gives_tle_to_a_c_program_that_never_ends() -> None:
    verdict = judge_case(case(C_LOOP, "c", time_limit_s=0.5), config=FAST)
    assert verdict["verdict"] == "TLE"


def test_it_gives_re_to_a_c_program_that_aborts() -> None:
    verdict = judge_case(case(C_CRASH, "c"), config=FAST)
    assert verdict["verdict"] == "RE"
    assert "SIGABRT" in verdict["tests"][0]["message"]


def test_it_gives_tle_and_re_to_cpp_programs_that_loop_or_throw() -> None:
    loop = "int main(){volatile unsigned long x=0;for(;;)x++;}\n"
    throw = "#include <stdexcept>\nint main(){throw std::runtime_error(\"boom\");}\n"
    tle, re = judge_batch([case(loop, "cpp", time_limit_s=0.5), case(throw, "cpp")], config=FAST)
    assert (tle["verdict"], re["verdict"]) == ("TLE", "RE")
    assert "boom" in re["tests"][0]["stderr"]


def test_it_compiles_a_source_once_and_counts_the_cache_hit() -> None:
    judge_batch([case(C_SUM, "c", id="first"), case(C_SUM, "c", id="second")], config=FAST)
    judge_case(case(C_SUM, "c"), config=FAST)
    assert languages.cache_stats() == {"compiles": 1, "hits": 2}


def test_it_reuses_the_disk_cache_in_a_fresh_process_state() -> None:
    judge_case(case(C_SUM, "c"), config=FAST)
    languages.clear_cache()  # a new process: only the cache directory remains
    assert judge_case(case(C_SUM, "c"), config=FAST)["verdict"] == "AC"
    assert languages.cache_stats() == {"compiles": 0, "hits": 1}


def test_it_ignores_a_cache_directory_others_can_write(tmp_path: Path) -> None:
    shared = tmp_path / "compile-cache"
    shared.mkdir(mode=0o777)
    shared.chmod(0o777)  # e.g. planted in a shared /tmp by another user
    key = languages.source_key("c", {"main.c": C_SUM})
    (shared / f"{key}.ce").write_text("planted")
    verdict = judge_case(case(C_SUM, "c"), config=FAST)
    assert verdict["verdict"] == "AC"
    assert languages.cache_stats() == {"compiles": 1, "hits": 0}


def test_it_caches_compile_errors_too() -> None:
    judge_case(case(C_BROKEN, "c"), config=FAST)
    assert judge_case(case(C_BROKEN, "c"), config=FAST)["verdict"] == "CE"
    assert languages.cache_stats() == {"compiles": 1, "hits": 1}


def test_it_refuses_an_unknown_language_as_an_invalid_case() -> None:
    verdict = judge_case(case(C_SUM, "java"), config=FAST)
    assert verdict["verdict"] == "IE" and "language 'java'" in verdict["message"]


def test_it_refuses_call_mode_for_compiled_languages() -> None:
    verdict = judge_case(case(C_SUM, "c", mode="call", fn_name="f"), config=FAST)
    assert verdict["verdict"] == "IE" and "stdin mode only" in verdict["message"]


def test_it_keeps_a_c_solution_within_its_memory_limit() -> None:
    hog = "#include <stdlib.h>\n#include <string.h>\nint main(void){char*p=malloc(600u<<20);" \
          "if(!p)return 3;memset(p,1,600u<<20);return 0;}\n"
    verdict = judge_case(case(hog, "c", memory_mb=256), config=FAST)
    assert verdict["verdict"] in ("RE", "MLE")


def test_a_c_program_starts_with_its_address_space_capped_at_the_memory_limit_soft_and_hard() -> None:
    show = "#include <stdio.h>\n#include <sys/resource.h>\nint main(void){struct rlimit r;getrlimit(RLIMIT_AS,&r);" \
           "printf(\"%llu %llu\\n\",(unsigned long long)r.rlim_cur,(unsigned long long)r.rlim_max);return 0;}\n"
    expected = f"{128 << 20} {128 << 20}\n"
    verdict = judge_case(dict(case(show, "c", memory_mb=128), tests=[{"input": "", "output": expected}]), config=FAST)
    assert verdict["verdict"] == "AC", verdict


def test_it_tells_the_language_of_a_file_by_its_extension() -> None:
    assert [languages.language_of_file(n) for n in ("a.c", "b.cpp", "c.cc", "d.py")] == ["c", "cpp", "cpp", "python"]


# the shared Django fixtures, bound here so pytest finds them in this module
_eager_and_in_memory = support._eager_and_in_memory
make_problem = support.make_problem


@pytest.mark.django_db
def test_it_verifies_a_stored_cpp_reference_solution_as_cpp(make_problem: Any, curator: Any) -> None:
    from curation.models import ReferenceSolution
    from evaluator.services import evaluation_run, references_verify

    problem = make_problem("cppadd", solutions=[CPP_SUM, CPP_SUM_WRONG], language="cpp")
    job = evaluation_run(job_id=references_verify(problem_ids=[problem.pk], user=curator, enqueue=False).pk)
    verdicts = list(ReferenceSolution.objects.filter(problem=problem).order_by("order").values_list("verdict", flat=True))
    assert verdicts == ["AC", "WA"]
    assert job.results[0]["outcome"] == "passed"
