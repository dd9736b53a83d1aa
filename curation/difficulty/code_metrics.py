"""Reference-solution complexity for the offline scorer: McCabe and Halstead (radon) plus AST facts.

Python code goes through radon (cyclomatic complexity, Halstead volume/difficulty, logical lines) and
the ``ast`` module (loop nesting depth, recursion, data structures and algorithm idioms used). Code
that does not parse as Python (C++, Java ...) gets text-only estimates: non-blank lines, brace/loop
nesting and the same idiom lexicon on identifiers, so a problem shipped with a C++ solution still
scores on its size.
"""

from __future__ import annotations

import ast
import math
import re
from dataclasses import dataclass, field

from radon.complexity import cc_visit
from radon.metrics import h_visit
from radon.raw import analyze

#: idioms recognised in code (identifier or call patterns) -> concept names of ``lexicon.CONCEPTS``
_CODE_IDIOMS: tuple[tuple[str, str], ...] = (
    (r"\bheap(?:q|push|pop|ify|pushpop)\b|priority_queue|PriorityQueue", "heap"),
    (r"\bdeque\b|\bpopleft\b|\bqueue<", "bfs"),
    (r"\bbisect(?:_left|_right)?\b|lower_bound|upper_bound", "binary_search"),
    (r"@(?:functools\.)?(?:lru_)?cache\b|\bmemo\b", "memoization"),
    (r"\b(?:dp|f|g)\s*=\s*\[\s*\[", "dynamic_programming"),
    (r"\bdp\s*\[", "dynamic_programming"),
    (r"\bSortedList\b|\bSortedDict\b|\bset<|\bmultiset\b|\bTreeMap\b", "ordered_set"),
    (r"\bclass\s+(?:BinaryIndexedTree|BIT|Fenwick)\w*|x\s*&\s*-\s*x|\blowbit\b", "fenwick_tree"),
    (r"\bclass\s+Seg\w*|\bSegmentTree\b|\bpushdown\b|\bpushup\b", "segment_tree"),
    (
        r"\bclass\s+(?:UnionFind|DSU|UF)\b|\bp\[x\]\s*=\s*find\(|\bparent\[x\]\s*=\s*find\(|\bdef find\(",
        "union_find",
    ),
    (r"\bclass\s+Trie\w*|\bchildren\s*=\s*\[None\]\s*\*\s*26", "trie"),
    (r"\bgcd\b|\blcm\b|\bisprime\b|\bsieve\b|\bprimes?\b", "number_theory"),
    (r"\bcomb\b|\bfactorial\b|\bfac\b|\binv\b|pow\([^)]*,\s*mod\s*-\s*2|\bnCr\b", "combinatorics"),
    (r"1\s*<<\s*\w+|\bmask\b|\bbit_count\b|\bpopcount\b", "bitmask"),
    (r"\bdijkstra\b|\bdist\s*\[.*heappush|\bheappush\(\s*\w+\s*,\s*\(\s*\w*d", "shortest_path"),
    (r"\bindeg\b|\bin_degree\b|\btopo\w*\b", "topological_sort"),
    (r"\bstk\b|\bstack\b", "stack"),
    (r"\bmonotonic\b|while\s+stk\s+and\s+stk\[-1\]", "monotonic_stack"),
    (r"\baccumulate\b|\bprefix\b|\bpre\s*\[|\bs\[i\s*\+\s*1\]\s*=\s*s\[i\]", "prefix_sum"),
    (r"\bdfs\b|\bdef\s+dfs\b", "dfs"),
    (
        r"\bbase\b.*\bmod\b|\brolling\b|\bkmp\b|\bz_function\b|\bmanacher\b|\bnext\s*=\s*\[0\]",
        "string_algorithms",
    ),
    (r"\bcross\b|\batan2\b|\bhypot\b|\bconvex\b", "geometry"),
    (r"\bmatmul\b|\bmatrix_pow\b|\bmat_pow\b", "matrix_exponentiation"),
)
_IDIOMS = tuple((re.compile(p), name) for p, name in _CODE_IDIOMS)
_LOOP_WORDS = re.compile(r"\b(?:for|while)\b")


@dataclass(frozen=True)
class CodeFeatures:
    """Complexity of one reference solution (the median one when several are given)."""

    parsed: bool  # True when radon/ast could read it as Python
    lines: int  # non-blank, non-comment lines
    lloc: int  # logical lines (radon); = lines for unparsed code
    cyclomatic: int  # total McCabe complexity over all blocks
    max_cyclomatic: int  # the most complex single block
    halstead_volume: float
    halstead_difficulty: float
    loop_depth: int  # deepest nesting of for/while (comprehensions count)
    nesting: int  # deepest nesting of compound statements
    functions: int
    classes: int
    recursion: bool
    idioms: tuple[str, ...] = field(default_factory=tuple)


EMPTY = CodeFeatures(False, 0, 0, 0, 0, 0.0, 0.0, 0, 0, 0, 0, False, ())


def code_features(solutions: tuple[str, ...]) -> CodeFeatures:
    """Features of the median-sized solution (by non-blank lines): a single outlier - a golfed
    one-liner or a template-heavy submission - does not decide. ``EMPTY`` when there is none."""
    if not solutions:
        return EMPTY
    ranked = sorted(solutions, key=lambda c: (_count_lines(c), c))
    return _one(ranked[(len(ranked) - 1) // 2])


def _count_lines(code: str) -> int:
    return sum(1 for line in code.splitlines() if line.strip() and not line.strip().startswith(("#", "//")))


def _one(code: str) -> CodeFeatures:
    idioms = tuple(sorted({name for rx, name in _IDIOMS if rx.search(code)}))
    try:
        tree = ast.parse(code)
        raw = analyze(code)
        blocks = cc_visit(code)
        halstead = h_visit(code).total
    except (SyntaxError, ValueError, TypeError, RecursionError):
        return _text_only(code, idioms)
    walker = _Walker()
    walker.visit(tree)
    complexities = [b.complexity for b in blocks] or [1]
    return CodeFeatures(
        parsed=True,
        lines=_count_lines(code),
        lloc=int(raw.lloc),
        cyclomatic=int(sum(complexities)),
        max_cyclomatic=int(max(complexities)),
        halstead_volume=float(halstead.volume or 0.0),
        halstead_difficulty=float(halstead.difficulty or 0.0),
        loop_depth=walker.max_loop_depth,
        nesting=walker.max_nesting,
        functions=walker.functions,
        classes=walker.classes,
        recursion=walker.recursion,
        idioms=idioms,
    )


def _text_only(code: str, idioms: tuple[str, ...]) -> CodeFeatures:
    depth = max_depth = 0
    for ch in code:
        if ch == "{":
            depth += 1
            max_depth = max(max_depth, depth)
        elif ch == "}":
            depth = max(0, depth - 1)
    lines = _count_lines(code)
    loops = len(_LOOP_WORDS.findall(code))
    return CodeFeatures(
        parsed=False,
        lines=lines,
        lloc=lines,
        cyclomatic=1 + loops + len(re.findall(r"\bif\b|\?|&&|\|\|", code)),
        max_cyclomatic=1 + loops,
        halstead_volume=lines * 25.0,  # rough: ~25 bits per line of typical contest code
        halstead_difficulty=0.0,
        loop_depth=min(loops, max(0, max_depth - 1)),
        nesting=max(0, max_depth - 1),
        functions=len(re.findall(r"^\s*[\w:<>,\s*&]+\s+\w+\s*\([^;]*\)\s*\{", code, re.M)),
        classes=len(re.findall(r"\b(?:class|struct)\s+\w+", code)),
        recursion=False,
        idioms=idioms,
    )


class _Walker(ast.NodeVisitor):
    """Loop and statement nesting, function/class counts, and self-recursion."""

    _COMPOUND = (ast.For, ast.AsyncFor, ast.While, ast.If, ast.With, ast.Try, ast.FunctionDef, ast.ClassDef)

    def __init__(self) -> None:
        self.loop_depth = self.max_loop_depth = 0
        self.nesting = self.max_nesting = 0
        self.functions = self.classes = 0
        self.recursion = False
        self._names: list[str] = []

    def generic_visit(self, node: ast.AST) -> None:
        is_loop = isinstance(node, (ast.For, ast.AsyncFor, ast.While, ast.comprehension))
        is_compound = isinstance(node, self._COMPOUND)
        self.loop_depth += is_loop
        self.nesting += is_compound
        self.max_loop_depth = max(self.max_loop_depth, self.loop_depth)
        self.max_nesting = max(self.max_nesting, self.nesting)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            self.functions += 1
            self._names.append(node.name)
            super().generic_visit(node)
            self._names.pop()
        else:
            if isinstance(node, ast.ClassDef) and node.name != "Solution":  # LeetCode's wrapper
                self.classes += 1
            if isinstance(node, ast.Call) and self._names:
                callee = node.func
                name = callee.id if isinstance(callee, ast.Name) else getattr(callee, "attr", "")
                if name and name in self._names:
                    self.recursion = True
            super().generic_visit(node)
        self.loop_depth -= is_loop
        self.nesting -= is_compound


def size_log(value: float) -> float:
    """``log2(1 + value)``: sizes matter by ratio, not by difference."""
    return math.log2(1.0 + max(0.0, value))
