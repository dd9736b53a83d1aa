"""Denoising: HTML, mojibake, NULs, line endings, LaTeX."""

from __future__ import annotations

from curation.importers.text import (
    clean_statement,
    clean_test_text,
    fix_mojibake,
    html_to_text,
    latex_to_text,
    looks_like_html,
)


def test_html_statements_keep_pre_samples_verbatim_in_a_fenced_block() -> None:
    text = html_to_text("<p>Sum   the\nnumbers.</p><pre>\n1  2\n3\n</pre><p>Done.</p>")
    assert text == "\n\nSum the numbers.\n\n\n\n```\n1  2\n3\n```\n\n\n\nDone.\n\n"


def test_html_entities_sup_and_lists_become_readable_text() -> None:
    out = clean_statement("<p>1 &le; n &le; 10<sup>5</sup></p><ul><li>first</li><li>second</li></ul>")
    assert out == "1 ≤ n ≤ 10^5\n\n- first\n- second"


def test_comparisons_in_plain_text_are_not_mistaken_for_html() -> None:
    assert not looks_like_html("print 1 if a < b and c > d, for 1 <= n <= 5")
    assert looks_like_html("<p>x</p>")


def test_mojibake_from_utf8_read_as_cp1252_is_repaired() -> None:
    assert fix_mojibake("Itâ€™s a cafÃ©") == "It’s a café"


def test_text_that_merely_contains_a_marker_letter_is_left_alone() -> None:
    assert fix_mojibake("Ãngel scored 10") == "Ãngel scored 10"


def test_statements_lose_nuls_crlf_nbsp_and_extra_blank_lines() -> None:
    assert clean_statement("a\x00b\r\n\r\n\r\n\r\nc\xa0d  \r") == "ab\n\nc d"


def test_test_data_only_gets_lossless_fixes() -> None:
    assert clean_test_text("1 2  \r\n3\x00\r") == "1 2  \n3\n"


def test_latex_statements_become_markdown_ish_text() -> None:
    tex = (
        "\\problemname{Sum}\n% secret note\nAdd \\emph{two} numbers, 50\\% faster.\n"
        "\\section*{Input}\n\\begin{itemize}\n\\item $a$ and $b$\n\\end{itemize}\n"
    )
    out = clean_statement(latex_to_text(tex))
    assert out == "Add *two* numbers, 50% faster.\n\n## Input\n\n- $a$ and $b$"
