"""Denoising applied while importing: HTML to markdown-ish text, cheap mojibake repair, NUL removal
and line-ending normalization.

Statements are cleaned for reading (``clean_statement``); test data only gets the lossless fixes
(``clean_test_text``: NULs and CR/CRLF line endings), because a judge compares it byte for byte after
its own normalization and "fixing" an expected output could make a wrong answer right.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

# Tags that make us treat a statement as HTML. Requiring a known tag name keeps "a < b and c > d"
# or "1 <= n" from being mistaken for markup.
_HTML_TAG = re.compile(
    r"</?(p|div|br|pre|ul|ol|li|span|strong|b|em|i|code|sup|sub|h[1-6]|img|table|tr|td|th|font|blockquote"
    r"|section|hr|tt|var|u|s)(\s[^<>]*)?/?>",
    re.IGNORECASE,
)
_BLOCK_TAGS = {
    "p",
    "div",
    "ul",
    "ol",
    "table",
    "tr",
    "blockquote",
    "section",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "hr",
}
#: inline tags and the markdown mark that opens and closes them; AtCoder writes its math in <var>
#: (TeX, typeset by KaTeX on their site as on ours), so <var> becomes $...$
_INLINE_MARKS = {"strong": "**", "b": "**", "em": "*", "i": "*", "var": "$", "code": "`", "tt": "`"}

_MOJIBAKE_MARKERS = ("Ã", "â€", "Â", "Ð", "Ñ")


def strip_nuls(text: str) -> str:
    """NUL bytes break PostgreSQL text columns and never mean anything in a statement or a test."""
    return text.replace("\x00", "")


def normalize_newlines(text: str) -> str:
    """CRLF and lone CR -> LF (AtCoder statements and many Windows-made tests mix them)."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def fix_mojibake(text: str) -> str:
    """Undo the common UTF-8-read-as-cp1252/latin-1 damage ("â€™" -> "’") when that is cheap and clearly
    better; otherwise return the text unchanged. Never raises."""
    if not any(m in text for m in _MOJIBAKE_MARKERS):
        return text
    best, best_score = text, _mojibake_score(text)
    for codec in ("cp1252", "latin-1"):
        try:
            candidate = text.encode(codec).decode("utf-8")
        except (UnicodeEncodeError, UnicodeDecodeError):
            continue
        score = _mojibake_score(candidate)
        if score < best_score:
            best, best_score = candidate, score
    return best


def _mojibake_score(text: str) -> int:
    return sum(text.count(m) for m in _MOJIBAKE_MARKERS)


def looks_like_html(text: str) -> bool:
    return _HTML_TAG.search(text) is not None


class _HtmlToText(HTMLParser):
    """Turns statement HTML into markdown-ish text. ``<pre>`` content (the samples) is kept verbatim in
    a fenced block; block elements become paragraphs; list items become "- " lines; sup/sub keep their
    meaning as ``^``/``_``; images leave their alt text."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.pre_depth = 0
        self.pre_fresh = False  # just opened a <pre>: HTML drops one newline right after the tag

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "pre":
            self.pre_depth += 1
            if self.pre_depth == 1:
                self.parts.append("\n\n```\n")
                self.pre_fresh = True
        elif self.pre_depth:
            return
        elif tag == "br":
            self.parts.append("\n")
        elif tag in _BLOCK_TAGS:
            self.parts.append("\n\n")
            if tag.startswith("h") and tag[1:].isdigit():
                self.parts.append("#" * int(tag[1:]) + " ")
        elif tag == "li":
            self.parts.append("\n- ")
        elif tag in ("td", "th"):
            self.parts.append(" | ")
        elif tag == "sup":
            self.parts.append("^")
        elif tag == "sub":
            self.parts.append("_")
        elif tag in _INLINE_MARKS:
            self.parts.append(_INLINE_MARKS[tag])
        elif tag == "img":
            alt = dict(attrs).get("alt") or "image"
            self.parts.append(f"[{alt}]")

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)

    def handle_endtag(self, tag: str) -> None:
        if tag == "pre":
            if self.pre_depth == 1:
                if self.parts and not self.parts[-1].endswith("\n"):
                    self.parts.append("\n")
                self.parts.append("```\n\n")
            self.pre_depth = max(0, self.pre_depth - 1)
        elif self.pre_depth:
            return
        elif tag in _BLOCK_TAGS:
            self.parts.append("\n\n")
        elif tag in _INLINE_MARKS:
            self.parts.append(_INLINE_MARKS[tag])

    def handle_data(self, data: str) -> None:
        if self.pre_depth:
            if self.pre_fresh and data.startswith("\n"):
                data = data[1:]
            self.pre_fresh = False
            self.parts.append(data)
        else:
            # Outside <pre>, HTML source whitespace is layout, not content.
            self.parts.append(re.sub(r"\s+", " ", data))


def html_to_text(text: str) -> str:
    """Convert statement HTML to markdown-ish plain text (see ``_HtmlToText``)."""
    parser = _HtmlToText()
    parser.feed(text)
    parser.close()
    # convert_charrefs=True has already decoded entities; unescaping again would turn "&amp;lt;" into "<".
    return "".join(parser.parts)


_LATEX_ENV_DROP = re.compile(
    r"\\(begin|end)\{(itemize|enumerate|center|flushleft|flushright|figure|"
    r"problem|quote|minipage)\}(\{[^{}]*\})*"
)
_LATEX_STYLE = [
    (re.compile(r"\\textbf\{([^{}]*)\}"), r"**\1**"),
    (re.compile(r"\\(?:emph|textit)\{([^{}]*)\}"), r"*\1*"),
    (re.compile(r"\\texttt\{([^{}]*)\}"), r"`\1`"),
    (re.compile(r"\\url\{([^{}]*)\}"), r"\1"),
    (re.compile(r"\\href\{([^{}]*)\}\{([^{}]*)\}"), r"\2 (\1)"),
]


def latex_to_text(text: str) -> str:
    """A problem package's ``problem.*.tex`` -> markdown-ish text. Cheap and conservative: sections
    become ``##`` headings, items ``- ``, common styles their markdown form; math ``$...$`` is kept."""
    text = re.sub(r"(?<!\\)%.*", "", text)  # comments (an escaped \% stays)
    text = re.sub(r"\\problemname\{[^{}]*\}", "", text)
    text = re.sub(r"\\(?:sub)*section\*?\{([^{}]*)\}", r"\n\n## \1\n\n", text)
    text = re.sub(r"\\illustration\{[^{}]*\}\{[^{}]*\}\{([^{}]*)\}", r"[figure: \1]", text)
    text = re.sub(r"\\includegraphics(\[[^\]]*\])?\{[^{}]*\}", "", text)
    text = _LATEX_ENV_DROP.sub("", text)
    text = re.sub(r"\\item\s*", "\n- ", text)
    for pattern, repl in _LATEX_STYLE:
        text = pattern.sub(repl, text)
    text = text.replace("\\\\", "\n").replace("~", " ").replace("``", '"').replace("''", '"')
    text = text.replace("\\%", "%").replace("\\&", "&").replace("\\_", "_").replace("\\#", "#")
    return text


def _tidy(text: str) -> str:
    lines = [line.rstrip() for line in text.split("\n")]
    out = "\n".join(lines)
    out = re.sub(r"\n{3,}", "\n\n", out)
    return out.strip()


def clean_statement(text: str) -> str:
    """The statement as we store it: NULs stripped, mojibake repaired, LF line endings, HTML converted,
    non-breaking spaces made plain, trailing spaces and runs of blank lines removed."""
    text = normalize_newlines(fix_mojibake(strip_nuls(text)))
    if looks_like_html(text):
        text = html_to_text(text)
    text = text.replace("\xa0", " ").replace("\u200b", "")
    return _tidy(text)


def clean_test_text(text: str) -> str:
    """Lossless fixes only: NULs removed, CRLF/CR -> LF."""
    return normalize_newlines(strip_nuls(text))


def clean_code(text: str) -> str:
    """Source code: NULs removed, LF line endings (indentation is meaningful and left alone)."""
    return normalize_newlines(strip_nuls(text))
