"""Statements, code and tests as HTML (curation.rendering): markdown, math left intact for KaTeX, the
sanitizer, entities, the CodeContests / LeetCode / AtCoder layouts, Pygments, test truncation."""

from __future__ import annotations

import re

import pytest

from curation.importers.text import clean_statement
from curation.rendering import (
    TEST_PREVIEW_MAX_CHARS,
    code_html,
    preview_test,
    render_statement,
    statement_html,
)


def _math(html: str) -> list[str]:
    """The TeX of every formula the renderer marked for KaTeX, unescaped."""
    found = re.findall(r'<(?:span|div) class="math math-(?:inline|display)">(.*?)</(?:span|div)>', html, re.S)
    return [f.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&") for f in found]


def test_it_renders_markdown_emphasis_lists_and_tables() -> None:
    html = render_statement(
        "# Task\n\nFind **the sum**.\n\n- one\n- two\n\n| n | answer |\n|--:|:--|\n| 1 | 2 |"
    )
    assert "<h1>Task</h1>" in html and "<strong>the sum</strong>" in html
    assert "<ul>\n<li>one</li>" in html
    assert '<td style="text-align:right">1</td>' in html


def test_it_keeps_line_breaks_of_plain_text_statements() -> None:
    html = render_statement("After the commands the matrix is:\n1 2 3 4\n1 3 3 4")
    assert "is:<br>\n1 2 3 4<br>\n1 3 3 4" in html  # a plain-text layout stays on its lines


def test_it_leaves_dollar_math_intact_for_katex() -> None:
    html = render_statement(
        r"Let $a_i * b_i$ be a product and $\{x \mid x < 10^9\}$ a set, $n \le 2\cdot 10^5$."
    )
    assert _math(html) == [r"\(a_i * b_i\)", r"\(\{x \mid x < 10^9\}\)", r"\(n \le 2\cdot 10^5\)"]
    assert "<em>" not in html  # the * and _ inside math are not markdown emphasis


def test_it_recognises_display_math_and_bracket_delimiters() -> None:
    html = render_statement(
        "Sum:\n\n$$\n\\sum_{i=1}^{n} a_i\n$$\n\ninline $$x^2$$ and \\(y_1\\) here.\n\n\\[\nz = 1\n\\]"
    )
    assert _math(html) == [r"\[\sum_{i=1}^{n} a_i\]", r"\[x^2\]", r"\(y_1\)", r"\[z = 1\]"]
    assert '<div class="math math-display">' in html  # a block formula is a block


def test_it_reads_codeforces_triple_dollars_as_inline_math() -> None:
    assert _math(render_statement("Given $$$n$$$ and $$$m$$$ ($$$1 \\le n$$$).")) == [
        r"\(n\)",
        r"\(m\)",
        r"\(1 \le n\)",
    ]


def test_it_leaves_money_alone() -> None:
    html = render_statement("A coffee costs $7 + $5 = $12, and a tea $3.")
    assert _math(html) == [] and "$7 + $5 = $12" in html


def test_it_turns_atcoder_var_tags_into_math() -> None:
    """AtCoder writes math in <var> (typeset by KaTeX on their site); the importer keeps it math."""
    stored = clean_statement(
        "<p>Given <var>N</var> integers.</p><ul><li><var>1 \\leq N \\leq 100</var></li></ul>"
    )
    assert _math(render_statement(stored)) == [r"\(N\)", r"\(1 \leq N \leq 100\)"]


@pytest.mark.parametrize(
    "source, forbidden",
    [
        ("<script>alert(1)</script>hello", "<script"),
        ('<img src=x onerror="alert(1)">', "onerror"),
        ('<b onclick="steal()">bold</b>', "onclick"),
        ('<a href="javascript:alert(1)">x</a>', "javascript:"),
        ('<a href="JaVaScRiPt:alert(1)">x</a>', "javascript"),
        ("[click](javascript:alert(1))", 'href="javascript'),
        ('<iframe src="https://evil.example"></iframe>', "<iframe"),
        ('<div style="position:fixed;top:0">overlay</div>', "position"),
        ('<span class="topbar">mimic</span>', "topbar"),
        ("<style>body{display:none}</style>", "display:none"),
        ('<form action="https://evil.example"><input name="password"></form>', "<input"),
    ],
)
def test_the_sanitizer_strips_what_could_run_or_restyle_the_page(source: str, forbidden: str) -> None:
    assert forbidden.lower() not in render_statement(source).lower()


def test_it_keeps_safe_links_and_turns_images_into_links() -> None:
    html = render_statement("[docs](https://example.org/a) ![the grid](https://example.org/g.png)")
    assert '<a href="https://example.org/a" rel="noopener noreferrer nofollow">docs</a>' in html
    assert (
        "<img" not in html and '<a href="https://example.org/g.png"' in html and "[image: the grid]" in html
    )


def test_it_decodes_entities_once_and_keeps_them_literal_in_code() -> None:
    html = render_statement("1 &le; n &lt; 10 &amp;&amp; x &#8805; 0, &amp;lt; stays; `&lt;` in code")
    assert "1 ≤ n &lt; 10 &amp;&amp; x ≥ 0" in html  # decoded (and escaped again for HTML)
    assert "&amp;lt; stays" in html  # decoded exactly once: shows "&lt;"
    assert "<code>&amp;lt;</code>" in html  # a code span shows what was written


def test_it_renders_a_leetcode_statement_with_its_examples_and_starter_fence() -> None:
    statement = (
        clean_statement(
            "<p>Given an array <code>nums</code>, return <em>the answer</em>.</p>"
            '<p><strong class="example">Example 1:</strong></p><pre><strong>Input:</strong> nums = [2,7]\n'
            "<strong>Output:</strong> [0,1]</pre><ul><li><code>2 &lt;= nums.length &lt;= 10<sup>4</sup></code></li></ul>"
        )
        + "\n\n```python\nclass Solution:\n    def twoSum(self, nums):\n        pass\n```"
    )
    html = render_statement(statement)
    assert "<code>nums</code>" in html and "<em>the answer</em>" in html
    assert "nums = [2,7]\nOutput: [0,1]" in html  # the <pre> example kept verbatim
    assert "2 &lt;= nums.length &lt;= 10^4" in html
    assert '<pre class="highlight"><code><span class="k">class</span>' in html  # Pygments on the fence


def test_it_renders_a_codecontests_statement_readably() -> None:
    statement = (
        "Chef has a matrix of n rows. Each element aij equals j. (1 ≤ i ≤ n, 1 ≤ j ≤ m).\n"
        "In the last game you lied to me at least *** times.\n\n"
        "Input\nThe first line contains n and m.\n\nExample\nInput:\n4 4\n2 2\n\nOutput:\n3\n3"
    )
    html = render_statement(statement)
    assert "at least *** times" in html and "<hr" not in html
    assert "<h4>Example</h4>\n<h4>Input</h4>\n<pre><code>4 4\n2 2\n</code></pre>" in html


@pytest.mark.parametrize(
    "text",
    [
        "contains exactly one '*' character.\nThe '*' in p matches anything",
        'Input: s = "madlogic", p = "*adlogi*"',
        'text = "%A%*%B%*%C%"',
        "print n*m*k modulo p",
    ],
)
def test_a_star_used_as_a_character_is_not_emphasis(text: str) -> None:
    html = render_statement(text)
    assert "<em>" not in html and html.count("*") == text.count("*")


def test_written_emphasis_still_works() -> None:
    assert render_statement("an *important* note (*really*) and **bold**").strip() == (
        "<p>an <em>important</em> note (<em>really</em>) and <strong>bold</strong></p>"
    )


def test_sample_lines_starting_with_a_comparison_stay_text() -> None:
    html = render_statement("Input:\n< 100 No\n> 100 No\n= 3 Yes")
    assert "<blockquote>" not in html and "&lt; 100 No<br>\n&gt; 100 No<br>\n= 3 Yes" in html


def test_section_titles_become_headings_and_samples_code_blocks() -> None:
    html = render_statement(
        "Find the sum.\n\nInput\nThe first line contains n.\n\nOutput\nPrint one number.\n\n"
        "Example\nInput:\n2\n1  2\n\nOutput:\n3\n\nNote\nThe input has two numbers."
    )
    assert "<h4>Input</h4>\n<p>The first line contains n.</p>" in html  # the format section is prose
    assert "<h4>Example</h4>\n<h4>Input</h4>\n<pre><code>2\n1  2\n</code></pre>" in html  # spacing kept
    assert "<h4>Output</h4>\n<pre><code>3\n</code></pre>" in html
    assert "<h4>Note</h4>\n<p>The input has two numbers.</p>" in html


def test_an_atcoder_sample_is_its_first_block_and_the_explanation_stays_prose() -> None:
    html = render_statement(
        "Sample Input 1\n\n5\nTTAAT\n\nSample Output 1\n\nT\n\nTakahashi won three games."
    )
    assert "<h4>Sample Input 1</h4>\n<pre><code>5\nTTAAT\n</code></pre>" in html
    assert "<h4>Sample Output 1</h4>\n<pre><code>T\n</code></pre>\n<p>Takahashi won three games.</p>" in html


def test_leetcode_examples_get_headings_but_their_lines_stay_text() -> None:
    html = render_statement("Example 1:\n\nInput: nums = [2,7]\nOutput: [0,1]\n\n```\nInput\n```")
    assert "<h4>Example 1</h4>\n<p>Input: nums = [2,7]<br>\nOutput: [0,1]</p>" in html
    assert "<pre><code>Input\n</code></pre>" in html  # nothing changes inside fenced code


def test_statement_html_is_cached_by_content_and_safe_to_print() -> None:
    first = statement_html("**bold** $x$")
    assert str(first) == str(statement_html("**bold** $x$")) and hasattr(first, "__html__")
    assert statement_html("") == ""


def test_code_is_highlighted_for_its_language_with_line_numbers() -> None:
    python = str(code_html("def f(x):\n    return x < 1\n", "python3"))
    assert '<span class="k">def</span>' in python and '<td class="linenos">' in python
    assert "&lt;" in python  # escaped by Pygments
    cpp = str(code_html("#include <cstdio>\nint main() { return 0; }\n", "cpp"))
    assert '<span class="kt">int</span>' in cpp
    unknown = str(code_html("<b>x</b>", "brainfudge"))
    assert "&lt;b&gt;" in unknown and "<b>" not in unknown


def test_a_small_test_is_shown_whole_with_its_numbers_marked() -> None:
    preview = preview_test("3\n1 -2 3.5\nabc\n", io_mode="stdin")
    assert not preview.truncated and (preview.shown_lines, preview.total_lines, preview.total_bytes) == (
        3,
        3,
        15,
    )
    assert '<span class="m">-2</span> <span class="m">3.5</span>' in str(preview.html)
    assert "abc" in str(preview.html)


def test_a_call_mode_test_is_highlighted_as_python_literals() -> None:
    preview = preview_test('[2, 7, 11]\n"abc"\n', io_mode="call")
    assert '<span class="mi">7</span>' in str(preview.html) and '<span class="s2">' in str(preview.html)


def test_a_long_test_is_cut_at_a_line_boundary() -> None:
    text = "".join(f"{i} {i * i}\n" for i in range(1000))
    preview = preview_test(text, io_mode="stdin", max_lines=10)
    assert preview.truncated and (preview.shown_lines, preview.total_lines) == (10, 1000)
    assert '<span class="m">9</span> <span class="m">81</span>' in str(preview.html)
    assert '<span class="m">10</span> <span class="m">100</span>' not in str(preview.html)


def test_a_test_that_is_one_huge_line_is_cut_by_characters() -> None:
    text = " ".join(["123456789"] * 10_000) + "\n"
    preview = preview_test(text, io_mode="stdin")
    assert preview.truncated and preview.shown_lines == 1 and preview.total_bytes == len(text)
    assert str(preview.html).count("123456789") <= TEST_PREVIEW_MAX_CHARS // 10 + 1
