"""Browser test of the problem pages under the enforced content security policy: search the list, open
a problem, and see its math typeset by KaTeX (served from static/vendor/, fonts included) and its
reference solution and tests highlighted by Pygments."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.conf import settings

from curation.services import problem_import
from tests.curation.conftest import make_record, write_jsonl

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

STATEMENT = (
    "Count the paths in a maze of $n \\times m$ cells, where $1 \\le n, m \\le 10^5$ and "
    "\\(a_i * b_i\\) is the cost of cell $i$:\n\n$$\n\\sum_{i=1}^{n} \\frac{a_i}{2}\n$$\n\n"
    "A ticket costs $7 + $5 in total."
)


@pytest.fixture(autouse=True)
def _katex_installed() -> None:
    katex = Path(settings.BASE_DIR) / "node_modules" / "katex" / "dist" / "katex.min.js"
    if not katex.exists():
        pytest.fail(f"{katex} is missing: run scripts/dev.sh bootstrap (npm ci installs package.json)")


@pytest.fixture(autouse=True)
def _csp_enforced(settings: Any) -> None:
    from webapp import settings as project_settings

    settings.CONTENT_SECURITY_POLICY = project_settings._csp_policy


@pytest.fixture
def maze(db: object, tmp_path: Any) -> None:
    records = [
        make_record("maze", title="Counting maze paths", statement=STATEMENT),
        make_record("other", title="Something else", statement="Read two integers and print their sum."),
    ]
    problem_import(path=write_jsonl(tmp_path / "p.jsonl", records), format="microcoder")


def test_it_searches_opens_a_problem_and_typesets_its_math(
    page_as: Any, asgi_server: Any, viewer: Any, maze: None
) -> None:
    page = page_as(viewer)
    violations: list[str] = []
    page.on("console", lambda m: violations.append(m.text) if "Content Security Policy" in m.text else None)
    page.goto(f"{asgi_server.url}/curation/problems/")
    page.fill("input[name=q]", "maze")
    with page.expect_navigation():
        page.press("input[name=q]", "Enter")
    assert "Something else" not in page.inner_text("table")
    with page.expect_navigation():
        page.click("text=Counting maze paths")

    page.wait_for_selector("#statement .katex")
    formulas = page.eval_on_selector_all(
        "#statement .katex annotation", "nodes => nodes.map(n => n.textContent)"
    )
    assert formulas == [
        "n \\times m",
        "1 \\le n, m \\le 10^5",
        "a_i * b_i",
        "i",
        "\\sum_{i=1}^{n} \\frac{a_i}{2}",
    ]
    assert page.locator("#statement .katex-display").count() == 1  # the $$ block is display math
    assert "$7 + $5" in page.inner_text("#statement")  # money is not math
    fonts_loaded = page.evaluate(
        "async () => { await document.fonts.ready;"
        " return [...document.fonts].some(f => f.family.includes('KaTeX') && f.status === 'loaded'); }"
    )
    assert fonts_loaded  # served from static/vendor/ and allowed by font-src

    # Pygments' classes and its style sheet: builtins green, numbers grey (the "default" style)
    builtin = page.locator("#solutions .highlight .nb").first  # map, int, print
    assert page.evaluate("el => getComputedStyle(el).color", builtin.element_handle()) == "rgb(0, 128, 0)"
    number = page.locator("#tests .highlight .m").first
    assert page.evaluate("el => getComputedStyle(el).color", number.element_handle()) == "rgb(102, 102, 102)"
    assert violations == []
