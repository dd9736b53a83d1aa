"""Problem statements, source code and test data as safe HTML for the problem pages.

Maintained libraries do the work; this module only configures them:

- Statements: markdown-it-py (CommonMark + tables + strikethrough, raw HTML allowed because imported
  statements carry some) with the math plugins of mdit-py-plugins, then the nh3 (ammonia) sanitizer
  on the whole output: no script, style, event-handler attribute, ``javascript:`` URL or foreign class
  survives. Single newlines are line breaks (``breaks``): CodeContests and AtCoder statements are
  plain text whose examples are laid out line by line. In such text a line that is only a section
  title ("Input", "Sample Output 2", "Example 1:") becomes a heading and a sample's lines a code block
  (``_plain_text_layout``); a star between letters, digits, quotes or punctuation is a character.
- Math is recognised in ``$...$``, ``$$...$$``, ``\\(...\\)`` and ``\\[...\\]`` (and Codeforces'
  ``$$$...$$$``) before markdown could mangle it (``*``, ``_``, ``\\{`` are markdown syntax), and is
  emitted as escaped TeX inside ``<span class="math math-inline">\\(...\\)</span>`` (or ``math-display``
  with ``\\[...\\]``) for KaTeX's auto-render to typeset in the browser (``static/js/math.js``). A dollar
  is math only in pandoc's sense (no space inside the delimiters, no digit right after the closing
  one), so "$7 + $5" stays money.
- HTML entities follow CommonMark: ``&lt;``, ``&le;``, ``&#8804;`` in text are decoded exactly once
  (``&amp;lt;`` shows as ``&lt;``); inside code spans and blocks they stay literal, as written.
- Code (reference solutions, fenced blocks in statements) and tests are highlighted by Pygments.
  Tests past :data:`TEST_PREVIEW_MAX_LINES` lines or :data:`TEST_PREVIEW_MAX_CHARS` characters are
  cut at a line boundary; the page links to the full download.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import nh3
from django.core.cache import cache
from django.utils.safestring import SafeString, mark_safe
from markdown_it import MarkdownIt
from markdown_it.common.utils import escapeHtml
from markdown_it.rules_inline import StateInline
from markdown_it.token import Token
from mdit_py_plugins.dollarmath import dollarmath_plugin
from mdit_py_plugins.texmath import texmath_plugin
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexer import Lexer, RegexLexer
from pygments.lexers import Python3Lexer, TextLexer, get_lexer_by_name
from pygments.token import STANDARD_TYPES, Number, Punctuation, Text
from pygments.util import ClassNotFound

#: bump when the statement HTML changes shape, so cached renderings are not reused
RENDER_VERSION = 2
#: statements longer than this are shown as escaped text in a <pre> (a pathological import, not a statement)
STATEMENT_MAX_CHARS = 200_000
#: a test preview shows at most this many lines / characters; the rest is a download away
TEST_PREVIEW_MAX_LINES = 40
TEST_PREVIEW_MAX_CHARS = 3_000
#: seconds a rendered statement stays in the cache (keyed by content, so never stale)
STATEMENT_CACHE_S = 24 * 3600

#: what the problem pages call a solution's language -> Pygments lexer name
_LANGUAGE_ALIASES = {
    "python3": "python3",
    "python": "python3",
    "py": "python3",
    "pypy": "python3",
    "pypy3": "python3",
    "cpp": "cpp",
    "c++": "cpp",
    "cxx": "cpp",
    "c++17": "cpp",
    "c++20": "cpp",
    "gnu c++": "cpp",
    "c": "c",
    "java": "java",
    "javascript": "javascript",
    "js": "javascript",
    "go": "go",
    "rust": "rust",
    "kotlin": "kotlin",
    "csharp": "csharp",
    "c#": "csharp",
    "ruby": "ruby",
    "haskell": "haskell",
}

_PYGMENTS_CLASSES = frozenset(c for c in STANDARD_TYPES.values() if c)
_MATH_CLASSES = frozenset({"math", "math-inline", "math-display"})
#: ammonia's defaults less images (see ``_image``) and image maps
_TAGS = frozenset(nh3.ALLOWED_TAGS) - {"img", "map", "area"}


@lru_cache(maxsize=1)
def _cleaner() -> nh3.Cleaner:
    attributes = {tag: set(attrs) for tag, attrs in nh3.ALLOWED_ATTRIBUTES.items() if tag in _TAGS}
    attributes.setdefault("a", set()).update({"href", "title"})
    attributes["abbr"] = {"title"}
    for cell in ("td", "th"):
        attributes.setdefault(cell, set()).add("style")  # markdown table alignment; only text-align survives
    return nh3.Cleaner(
        tags=set(_TAGS),
        clean_content_tags={"script", "style"},
        attributes=attributes,
        allowed_classes={
            "span": set(_PYGMENTS_CLASSES | _MATH_CLASSES),
            "div": {"math", "math-display", "highlight"},
            "pre": {"highlight"},
        },
        filter_style_properties={"text-align"},
        url_schemes={"http", "https", "mailto"},
        link_rel="noopener noreferrer nofollow",
        strip_comments=True,
    )


def sanitize_html(html: str) -> str:
    """``html`` with only the allowed tags, attributes, classes and URL schemes left (nh3)."""
    return str(_cleaner().clean(html))


# ------------------------------------------------------------------------------------------ markdown


def _math_inline(self: Any, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
    return f'<span class="math math-inline">\\({escapeHtml(tokens[idx].content.strip())}\\)</span>'


def _math_inline_display(self: Any, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
    # $$...$$ inside a paragraph: display style, but a <span> (a <div> would break the <p> apart)
    return f'<span class="math math-display">\\[{escapeHtml(tokens[idx].content.strip())}\\]</span>'


def _math_block(self: Any, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
    return f'<div class="math math-display">\\[{escapeHtml(tokens[idx].content.strip())}\\]</div>\n'


def _image(self: Any, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
    """Images become links: the page's CSP loads no foreign image, and a statement's picture is
    rarely needed to curate it."""
    token = tokens[idx]
    alt = self.renderInlineAsText(token.children or [], options, env) or "image"
    src = escapeHtml(str(token.attrGet("src") or ""))
    return f'<a href="{src}">[image: {escapeHtml(alt)}]</a>'


def _highlight_fence(code: str, lang: str, attrs: str) -> str:
    lexer = _lexer_for(lang) if lang else None
    if lexer is None:
        return ""  # markdown-it's own escaped <pre><code>
    # markdown-it keeps a highlighter's output as is when it starts with "<pre"
    spans = highlight(code, lexer, HtmlFormatter(nowrap=True))
    return f'<pre class="highlight"><code>{spans}</code></pre>'


def _literal_star(state: StateInline, silent: bool) -> bool:
    """Plain-text statements use ``*`` (and ``_``) as characters: ``n*m*k``, "exactly one '*'
    character", ``p = "*adlogi*"``, ``"***-***-XXXX"``, ``"%A%*%B%"``. Such a run of stars is text, not
    an emphasis delimiter: one between two letters or digits, one touching a quote with no space on
    either side, or one between two punctuation marks. Emphasis as people and our HTML importer write
    it (``*word*``, ``**word**`` after a space or an opening bracket) is unaffected."""
    pos = state.pos
    char = state.src[pos]
    if char not in "*_" or pos == 0 or state.src[pos - 1] == char:
        return False
    end = pos
    while end < state.posMax and state.src[end] == char:
        end += 1
    if end >= state.posMax:
        return False
    before, after = state.src[pos - 1], state.src[end]
    if before.isspace() or after.isspace():
        return False
    intraword = before.isalnum() and after.isalnum()
    quoted = before in "'\"" or after in "'\""
    punctuated = not before.isalnum() and not after.isalnum()
    if not (intraword or quoted or punctuated):
        return False
    if not silent:
        state.pending += state.src[pos:end]
    state.pos = end
    return True


@lru_cache(maxsize=1)
def _markdown() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": True, "breaks": True, "highlight": _highlight_fence})
    md.enable(["table", "strikethrough"])
    # Plain-text statements start sample lines with ">" ("> 100 No") and underline with "---": no
    # blockquotes or setext headings (our HTML importer never writes them).
    md.disable(["blockquote", "lheading"])
    md.inline.ruler.before("emphasis", "literal_star", _literal_star)
    dollarmath_plugin(md, allow_labels=False, allow_space=False, allow_digits=False, double_inline=True)
    texmath_plugin(md, delimiters="brackets")  # \( ... \) inline and \[ ... \] on their own lines
    md.add_render_rule("math_inline", _math_inline)
    md.add_render_rule("math_inline_double", _math_inline_display)
    for block in ("math_block", "math_block_label", "math_block_eqno"):
        md.add_render_rule(block, _math_block)
    md.add_render_rule("image", _image)
    return md


#: Codeforces writes inline math as $$$x$$$; dollarmath would read it as display math plus a stray $
_CODEFORCES_MATH = re.compile(r"\$\$\$([^$\n]+?)\$\$\$")


#: a line that is only a section title in a plain-text statement (CodeContests, AtCoder, LeetCode)
_SECTION = re.compile(
    r"(Input|Output|Constraints|Examples?|Example \d+|Sample Input(?: \d+)?|Sample Output(?: \d+)?|Notes?"
    r"|Explanation|Input Format|Output Format|Interaction|Scoring|Subtasks?|Hints?|Follow[- ]up)\s*:?",
    re.IGNORECASE,
)
_FENCE_LINE = re.compile(r"^\s*(```|~~~)")


def _plain_text_layout(text: str) -> str:
    """Give plain-text statements the structure their sites show: a line that is only a section title
    ("Input", "Sample Output 2", "Example 1:", "Note") becomes a heading, and the first block of lines
    after a sample title ("Sample Input 1", or "Input"/"Output" under "Example(s)") becomes a code
    block, so sample data keeps its spacing in a monospace font. Fenced code is left alone."""
    out: list[str] = []
    lines = text.split("\n")
    in_fence = in_examples = False
    i = 0
    while i < len(lines):
        line = lines[i]
        if _FENCE_LINE.match(line):
            in_fence = not in_fence
        match = None if in_fence else _SECTION.fullmatch(line.strip())
        if match is None:
            out.append(line)
            i += 1
            continue
        title = line.strip().rstrip(":").strip()
        lowered = title.lower()
        if lowered.startswith("example"):
            in_examples = True
        elif not (lowered.startswith("sample") or lowered in ("input", "output")):
            in_examples = False
        out.extend(["", f"#### {title}", ""])
        i += 1
        if not (lowered.startswith("sample") or (in_examples and lowered in ("input", "output"))):
            continue
        while i < len(lines) and not lines[i].strip():
            i += 1
        block: list[str] = []
        while i < len(lines) and lines[i].strip() and not _SECTION.fullmatch(lines[i].strip()):
            block.append(lines[i])
            i += 1
        if block:
            longest = max((len(run) for run in re.findall(r"`+", "\n".join(block))), default=0)
            fence = "`" * max(3, longest + 1)
            out.extend([fence, *block, fence, ""])
    return "\n".join(out)


def statement_html(text: str) -> SafeString:
    """A statement (markdown, markdown-ish text or HTML) as sanitized HTML; cached by content."""
    if not text:
        return mark_safe("")
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
    key = f"statement-html:{RENDER_VERSION}:{digest}"
    html = cache.get(key)
    if html is None:
        html = render_statement(text)
        cache.set(key, html, STATEMENT_CACHE_S)
    return mark_safe(html)  # sanitized by nh3 in render_statement


def render_statement(text: str) -> str:
    """Uncached :func:`statement_html` (tests and benchmarks call it directly)."""
    if len(text) > STATEMENT_MAX_CHARS:
        return f"<pre>{escapeHtml(text)}</pre>"
    source = _plain_text_layout(_CODEFORCES_MATH.sub(r"$\1$", text))
    return sanitize_html(_markdown().render(source))


# ------------------------------------------------------------------------------------ code and tests


class TestDataLexer(RegexLexer):
    """Numbers stand out from the rest of a stdin test (grids, words, separators)."""

    __test__ = False  # not a pytest test class
    name = "Test data"
    aliases = ["microcoder-test-data"]
    tokens = {
        "root": [
            (r"\s+", Text),
            (r"[-+]?(\d+\.\d*|\.\d+|\d+)([eE][-+]?\d+)?(?=\s|$)", Number),
            (r"[\[\](){},;:]", Punctuation),
            (r"[^\s\[\](){},;:]+", Text),
        ],
    }


def _lexer_for(language: str) -> Lexer | None:
    name = _LANGUAGE_ALIASES.get(language.strip().lower(), language.strip().lower())
    try:
        return get_lexer_by_name(name, stripnl=False, ensurenl=False)
    except ClassNotFound:
        return None


def code_html(code: str, language: str) -> SafeString:
    """Source code highlighted for ``language`` (plain text when Pygments does not know it), with line
    numbers. Pygments escapes everything it emits."""
    lexer = _lexer_for(language) or TextLexer()
    formatter = HtmlFormatter(linenos="table", wrapcode=True)
    return mark_safe(highlight(code, lexer, formatter))  # Pygments escapes what it emits


@dataclass(frozen=True)
class TestPreview:
    """The start of a test's input or output, highlighted, and how much of it that is."""

    __test__ = False  # not a pytest test class

    html: SafeString
    truncated: bool
    shown_lines: int
    total_lines: int
    total_bytes: int


def preview_test(
    text: str,
    *,
    io_mode: str,
    max_lines: int = TEST_PREVIEW_MAX_LINES,
    max_chars: int = TEST_PREVIEW_MAX_CHARS,
) -> TestPreview:
    """The first ``max_lines`` lines (at most ``max_chars`` characters, a longer first line is cut) of
    a test, highlighted: call-mode arguments as Python literals, stdin data with its numbers marked."""
    lines = text.splitlines(keepends=True)
    shown: list[str] = []
    size = 0
    for line in lines[:max_lines]:
        if size + len(line) > max_chars:
            if not shown:
                shown.append(line[:max_chars])
            break
        shown.append(line)
        size += len(line)
    head = "".join(shown)
    truncated = len(head) < len(text)
    lexer: Lexer = (
        Python3Lexer(stripnl=False, ensurenl=False)
        if io_mode == "call"
        else TestDataLexer(stripnl=False, ensurenl=False)
    )
    html = highlight(head, lexer, HtmlFormatter(wrapcode=True))
    return TestPreview(
        html=mark_safe(html),  # Pygments escapes what it emits
        truncated=truncated,
        shown_lines=len(shown),
        total_lines=len(lines),
        total_bytes=len(text.encode("utf-8", "surrogatepass")),
    )


@lru_cache(maxsize=1)
def highlight_css() -> str:
    """The Pygments style sheet for ``.highlight`` blocks (the problem page inlines it)."""
    return str(HtmlFormatter(style="default").get_style_defs(".highlight"))
