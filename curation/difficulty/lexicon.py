"""The algorithm lexicon: concepts, how advanced each is, and how to spot them in tags and statements.

Levels follow how far into a competitive-programming curriculum a concept sits (1 = first week,
5 = specialist), which maps onto Bloom's "apply" (1-2), "analyze" (3) and "create/evaluate" (4-5)
for the knowledge the solver must bring. ``math`` marks concepts that count as mathematical content.
Tag spellings of LeetCode, Codeforces and CodeChef are all matched case-insensitively.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Concept:
    name: str
    level: int  # 1..5
    math: bool
    tag_pattern: str  # matched against each tag
    text_pattern: str = ""  # matched against the statement ("" = tags/code only)


CONCEPTS: tuple[Concept, ...] = (
    Concept(
        "implementation", 1, False, r"^(?:array|string|simulation|implementation|brute ?force|enumeration)$"
    ),
    Concept("hash_table", 1, False, r"hash table|counting|hashing$"),
    Concept("sorting", 1, False, r"^sort"),
    Concept("basic_math", 1, True, r"^math$"),
    Concept("matrix", 2, False, r"^matrix$", r"\b(?:grid|matrix)\b"),
    Concept("two_pointers", 2, False, r"two pointers", r"\btwo pointers?\b"),
    Concept("prefix_sum", 2, False, r"prefix sum", r"\bsubarray sums?\b"),
    Concept("sliding_window", 2, False, r"sliding window|monotonic queue"),
    Concept("stack", 2, False, r"^stack$|^queue$", r"\bparenthes[ie]s\b|\bbrackets?\b"),
    Concept("linked_list", 2, False, r"linked list", r"\blinked list\b"),
    Concept("greedy", 3, False, r"greedy|constructive"),
    Concept("binary_search", 3, False, r"binary search", r"\bbinary search\b"),
    Concept(
        "bit_manipulation",
        3,
        True,
        r"bit manipulation|bitwise|bitmasks?$",
        r"\bbitwise\b|\bxor\b|\bbinary representation\b",
    ),
    Concept("heap", 3, False, r"heap|priority queue"),
    Concept("bfs", 3, False, r"breadth-first|bfs"),
    Concept("dfs", 3, False, r"depth-first|dfs(?: and similar)?$|^recursion$|backtracking"),
    Concept(
        "tree",
        3,
        False,
        r"^(?:binary )?trees?$|binary search tree",
        r"\b(?:binary tree|rooted tree|tree with)\b",
    ),
    Concept("graph", 3, False, r"^graphs?$", r"\b(?:graph|edges?\b.*\bnodes?|vertices)\b"),
    Concept("monotonic_stack", 4, False, r"monotonic stack"),
    Concept("dynamic_programming", 4, False, r"dynamic programming|^dp$|memoization", r"\bnumber of ways\b"),
    Concept("memoization", 4, False, r"memoization"),
    Concept(
        "combinatorics",
        4,
        True,
        r"combinatorics|probabilit",
        r"\b(?:number of ways|expected value|probability|permutations?)\b",
    ),
    Concept(
        "number_theory",
        4,
        True,
        r"number theory|^primes?$|chinese remainder",
        r"\b(?:prime|gcd|lcm|divisors?|coprime|modular inverse)\b",
    ),
    Concept("union_find", 4, False, r"union find|dsu|disjoint set"),
    Concept("topological_sort", 4, False, r"topological sort"),
    Concept("shortest_path", 4, False, r"shortest path", r"\bshortest path\b"),
    Concept("trie", 4, False, r"^trie$"),
    Concept("ordered_set", 4, False, r"ordered set|ordered map|balanced"),
    Concept("bitmask", 4, False, r"^bitmask(?: dp)?$", ""),
    Concept("string_algorithms", 4, False, r"string matching|rolling hash|hash function|suffix|^strings$"),
    Concept("game_theory", 4, True, r"game theory|games", r"\bplay(?:s|ers?)? optimally\b"),
    Concept("geometry", 4, True, r"geometry", r"\b(?:polygon|convex|coordinates? plane|circle|angle)\b"),
    Concept("line_sweep", 4, False, r"line sweep|scanning line"),
    Concept("fenwick_tree", 5, False, r"binary indexed tree|fenwick"),
    Concept("segment_tree", 5, False, r"segment tree|data structures$"),
    Concept("divide_and_conquer", 4, False, r"divide and conquer"),
    Concept("matrix_exponentiation", 5, True, r"matrix exponentiation|matrices"),
    Concept(
        "flows",
        5,
        False,
        r"flows?$|matching|min[- ]cut",
        r"\b(?:max(?:imum)? flow|min(?:imum)? cut|bipartite matching)\b",
    ),
    Concept(
        "strongly_connected",
        5,
        False,
        r"strongly connected|biconnected|2-sat|bridges",
        r"\bstrongly connected\b",
    ),
    Concept("advanced_strings", 5, False, r"suffix array|suffix automaton|fft|string suffix structures"),
    Concept("fft", 5, True, r"^fft$|convolution|polynomial"),
)

_BY_NAME = {c.name: c for c in CONCEPTS}
_TAG_RX = tuple((c, re.compile(c.tag_pattern, re.I)) for c in CONCEPTS)
_TEXT_RX = tuple((c, re.compile(c.text_pattern, re.I)) for c in CONCEPTS if c.text_pattern)


def concept(name: str) -> Concept:
    return _BY_NAME[name]


def concepts_from_tags(tags: tuple[str, ...]) -> set[str]:
    found = set()
    for tag in tags:
        for c, rx in _TAG_RX:
            if rx.search(tag.strip()):
                found.add(c.name)
    return found


def concepts_from_text(statement: str) -> set[str]:
    return {c.name for c, rx in _TEXT_RX if rx.search(statement)}


def level_of(names: set[str]) -> int:
    return max((_BY_NAME[n].level for n in names if n in _BY_NAME), default=0)


def math_concepts(names: set[str]) -> set[str]:
    return {n for n in names if n in _BY_NAME and _BY_NAME[n].math}
