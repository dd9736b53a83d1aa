"""Function-call mode: LeetCode ``class Solution`` methods, plain functions and assert tests.

Contract of a call-mode case (``"mode": "call"``):

- ``fn_name`` names the entry point: ``"Solution().twoSum"`` (LeetCodeDataset's ``entry_point``),
  ``"Solution.twoSum"``, ``"twoSum"`` (a method of ``Solution`` when the class has it, else a top-level
  function) or ``"Cls().meth"`` for another class. A fresh instance is made for every test.
- A test's ``input`` holds the arguments: one argument per line, each JSON or a Python literal
  (LiveCodeBench's format: ``"[2,7,11,15]\\n9"``), or LeetCodeDataset's ``name = value, ...`` form
  (``"nums = [2,7,11,15], target = 9"``). Named arguments are passed by name when the names match the
  function's parameters and by position otherwise (a model may rename parameters). ``null``, ``true`` and
  ``false`` are accepted in Python literals too.
- Parameters annotated ``ListNode`` / ``TreeNode`` (also ``Optional[...]``, ``List[Optional[ListNode]]``,
  string annotations) receive structures built from their list (trees in LeetCode level order with
  ``null``). Returned nodes are serialized back to that list form (anywhere inside the result).
- The solution runs after the LeetCode prelude (``from typing import *``, ``collections``, ``heapq``,
  ``math``, ``bisect``, ``itertools``, ``functools``, ``ListNode``, ``TreeNode``, ``inf``, ``SortedList`` /
  ``SortedDict`` / ``SortedSet`` when sortedcontainers is installed (LeetCode has them), the helpers
  ``list_node`` / ``tree_node`` / ``is_same_list`` / ``is_same_tree`` ...) as LeetCodeDataset assumes. One
  deliberate difference: the builtin three-argument ``pow`` stays the builtin (the dataset's prelude lets
  ``from math import *`` shadow it, which real LeetCode does not).
- **Assert tests** (HumanEval / MBPP style): a test ``{"input": "", "output": "", "assert": CODE}``. CODE
  runs in the solution's namespace after the solution; the test passes when it finishes without an
  exception (``AssertionError`` = wrong answer, anything else = runtime error). HumanEval:
  ``CODE = test + "\\ncheck(" + entry_point + ")"``; MBPP: one ``assert`` line per test. ``fn_name`` may be
  omitted when every test is an assert test. Assert code necessarily runs inside the sandbox next to the
  solution, so unlike the other modes a hostile solution can tamper with it; use it for curated
  benchmarks, not as the only reward for adversarial training.

The result of a call travels from the sandbox as tagged JSON (:func:`encode_result`) so that tuples,
sets, dicts with non-string keys, big integers and inf/nan survive; the judge decodes it with
:func:`decode_result` and compares in its own process, so a solution never sees expected values.

This module is also loaded inside the sandbox as a top-level module; it imports only the standard library.
"""

from __future__ import annotations

import ast
import json
import math
import numbers
import re
import typing
from collections.abc import Callable
from typing import Any

#: The LeetCode prelude, written for this project. Names follow LeetCodeDataset's prompt so its
#: ``test`` functions (which call ``tree_node`` / ``is_same_list`` ...) run unchanged.
PRELUDE = '''
import random
import functools
import collections
import string
import math
import datetime
import bisect
import heapq
import itertools
import operator
import re
import sys

from typing import *
from functools import *
from collections import *
from itertools import *
from heapq import *
from bisect import *
from string import *
from operator import *
from math import *

import builtins as _builtins
pow = _builtins.pow  # math.pow / operator.pow must not hide pow(base, exp, mod)
del _builtins

inf = float("inf")

try:  # LeetCode's Python has these without an import
    from sortedcontainers import SortedDict, SortedList, SortedSet
except ImportError:
    pass


class ListNode:
    def __init__(self, val=0, next=None):
        self.val = val
        self.next = next

    def __repr__(self):
        return f"ListNode({self.val})"


class TreeNode:
    def __init__(self, val=0, left=None, right=None):
        self.val = val
        self.left = left
        self.right = right

    def __repr__(self):
        return f"TreeNode({self.val})"


def list_node(values):
    """A linked list holding ``values`` in order (None for an empty list)."""
    head = None
    for value in reversed(list(values or ())):
        head = ListNode(value, head)
    return head


def tree_node(values):
    """A binary tree from LeetCode level order, ``None`` marking a missing child."""
    values = list(values or ())
    if not values or values[0] is None:
        return None
    root = TreeNode(values[0])
    frontier = collections.deque([root])
    pos = 1
    while frontier and pos < len(values):
        node = frontier.popleft()
        for side in ("left", "right"):
            if pos < len(values) and values[pos] is not None:
                child = TreeNode(values[pos])
                setattr(node, side, child)
                frontier.append(child)
            pos += 1
    return root


def is_same_list(a, b):
    while a is not None and b is not None:
        if a.val != b.val:
            return False
        a, b = a.next, b.next
    return a is None and b is None


def is_same_tree(a, b):
    pending = [(a, b)]
    while pending:
        x, y = pending.pop()
        if x is None or y is None:
            if x is not y:
                return False
            continue
        if x.val != y.val:
            return False
        pending.append((x.left, y.left))
        pending.append((x.right, y.right))
    return True
'''

#: a returned linked list or tree longer than this is treated as cyclic / runaway
MAX_NODES = 10_000_000
#: integers of at least this many bits (about 3,900 digits) are sent as text, see BigInt
_BIG_BITS = 13_000

_NAMED_START = re.compile(r"\s*([A-Za-z_]\w*)\s*=(?!=)\s*")
_NAMED_SPLIT = re.compile(r",\s*([A-Za-z_]\w*)\s*=(?!=)\s*")
_LITERAL_NAMES: dict[str, Any] = {
    "null": None, "None": None, "true": True, "True": True, "false": False, "False": False,
    "inf": math.inf, "Infinity": math.inf, "nan": math.nan, "NaN": math.nan,
}


def build_prelude_namespace() -> dict[str, Any]:
    """A fresh module namespace with the LeetCode prelude executed in it."""
    import builtins

    ns: dict[str, Any] = {"__name__": "solution", "__builtins__": builtins}
    exec(compile(PRELUDE, "<prelude>", "exec"), ns)  # noqa: S102 - our own constant source
    return ns


# ----------------------------------------------------------------------------------------- literals
def _literal(node: ast.AST) -> Any:
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        if node.id in _LITERAL_NAMES:
            return _LITERAL_NAMES[node.id]
        raise ValueError(f"unknown name {node.id!r} in a literal")
    if isinstance(node, ast.List):
        return [_literal(e) for e in node.elts]
    if isinstance(node, ast.Tuple):
        return tuple(_literal(e) for e in node.elts)
    if isinstance(node, ast.Set):
        return {_literal(e) for e in node.elts}
    if isinstance(node, ast.Dict):
        if any(k is None for k in node.keys):
            raise ValueError("dict unpacking is not a literal")
        return {_literal(k): _literal(v) for k, v in zip(node.keys, node.values)}  # type: ignore[arg-type]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        value = _literal(node.operand)
        if isinstance(value, bool) or not isinstance(value, (int, float, complex)):
            raise ValueError("sign applied to a non-number")
        return -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.keywords:
        # set() and float('inf') appear in str() of real values
        if node.func.id == "set" and not node.args:
            return set()
        if node.func.id == "float" and len(node.args) == 1:
            arg = _literal(node.args[0])
            if isinstance(arg, str) and arg.strip().lower() in ("inf", "-inf", "+inf", "nan", "infinity",
                                                                 "-infinity"):
                return float(arg)
    raise ValueError(f"not a literal: {type(node).__name__}")


def parse_literal(text: str) -> Any:
    """One value written as JSON or as a Python literal (``null`` / ``true`` / ``false`` allowed).
    Raises ValueError when the text is neither."""
    try:
        return json.loads(text)
    except ValueError:
        pass
    except RecursionError as exc:
        raise ValueError("value nested too deeply") from exc
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except (SyntaxError, MemoryError, RecursionError) as exc:
        raise ValueError(f"not JSON or a Python literal: {text[:80]!r}") from exc
    try:
        return _literal(tree.body)
    except RecursionError as exc:
        raise ValueError("literal nested too deeply") from exc


def parse_call_input(text: str) -> tuple[list[Any], dict[str, Any] | None]:
    """Arguments of one call: ``(positional, None)`` for the one-per-line form, ``([], named)`` (in the
    written order) for LeetCodeDataset's ``name = value, ...`` form. Raises ValueError."""
    stripped = text.strip()
    if not stripped:
        return [], None
    start = _NAMED_START.match(stripped)
    if start:
        named = _parse_named(stripped, start)
        if named is not None:
            return [], named
    return [parse_literal(line) for line in stripped.splitlines() if line.strip()], None


def _parse_named(text: str, start: re.Match[str]) -> dict[str, Any] | None:
    # fast path: cut at ", name =" and parse each value on its own (json is C-fast on large arrays)
    names = [start.group(1)]
    pieces: list[str] = []
    pos = start.end()
    for m in _NAMED_SPLIT.finditer(text, pos):
        pieces.append(text[pos:m.start()])
        names.append(m.group(1))
        pos = m.end()
    pieces.append(text[pos:])
    try:
        values = [parse_literal(p.strip().rstrip(",")) for p in pieces]
        if len(set(names)) == len(names):
            return dict(zip(names, values))
    except ValueError:
        pass
    # slow path: a string value contained ", x = " or lines were not comma separated
    for candidate in (text, ", ".join(line for line in text.splitlines() if line.strip())):
        try:
            call = ast.parse(f"f({candidate})", mode="eval").body
        except (SyntaxError, MemoryError, RecursionError):
            continue
        if isinstance(call, ast.Call) and not call.args and all(k.arg for k in call.keywords):
            return {str(k.arg): _literal(k.value) for k in call.keywords}
    return None


# ------------------------------------------------------------------------------------ entry points
def resolve_entry_point(ns: dict[str, Any], fn_name: str) -> Callable[..., Any]:
    """The callable named by ``fn_name`` in the executed solution namespace (a new instance for a
    method). Raises LookupError with a readable message when it does not exist."""
    name = fn_name.strip()
    m = re.fullmatch(r"([A-Za-z_]\w*)(\(\))?\.([A-Za-z_]\w*)", name)
    if m:
        cls_name, meth = m.group(1), m.group(3)
    else:
        cls_name, meth = "Solution", name
        if not re.fullmatch(r"[A-Za-z_]\w*", name):
            raise LookupError(f"cannot read entry point {fn_name!r}")
    cls = ns.get(cls_name)
    if isinstance(cls, type) and hasattr(cls, meth):
        return getattr(cls(), meth)  # type: ignore[no-any-return]
    if not m and callable(ns.get(meth)):
        return ns[meth]  # type: ignore[no-any-return]
    raise LookupError(f"entry point {fn_name!r} not found in the solution")


def _node_kind(annotation: Any, ns: dict[str, Any], depth: int = 0) -> Any:
    """'list' / 'tree' / ('seq', kind) / None: what a parameter annotated so expects."""
    if annotation is None or annotation is type(None) or depth > 8:
        return None
    if isinstance(annotation, str):
        try:
            evaluated = eval(annotation, dict(ns))  # noqa: S307 - runs inside the sandbox only
        except Exception:  # noqa: BLE001 - an unreadable annotation simply means "no conversion"
            text = annotation.replace(" ", "")
            kind = "list" if "ListNode" in text else "tree" if "TreeNode" in text else None
            if kind and re.match(r"(typing\.)?(List|list|Sequence)\[", text):
                return ("seq", kind)
            return kind
        return _node_kind(evaluated, ns, depth + 1)  # a quoted annotation may be quoted twice
    if isinstance(annotation, type):
        if annotation is ns.get("ListNode") or annotation.__name__ == "ListNode":
            return "list"
        if annotation is ns.get("TreeNode") or annotation.__name__ == "TreeNode":
            return "tree"
        return None
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin in (list, tuple) and args:
        inner = _node_kind(args[0], ns, depth + 1)
        return ("seq", inner) if inner else None
    if args:  # Optional[...] / Union[...]
        for arg in args:
            kind = _node_kind(arg, ns, depth + 1)
            if kind:
                return kind
    return None


def _build_linked(values: list[Any], cls: Any) -> Any:
    head = None
    for value in reversed(values):
        node = cls(value)
        node.next = head
        head = node
    return head


def _build_tree(values: list[Any], cls: Any) -> Any:
    if not values or values[0] is None:
        return None
    root = cls(values[0])
    frontier = [root]
    pos, i = 1, 0
    while i < len(frontier) and pos < len(values):
        node = frontier[i]
        i += 1
        for side in ("left", "right"):
            if pos < len(values) and values[pos] is not None:
                child = cls(values[pos])
                setattr(node, side, child)
                frontier.append(child)
            elif pos < len(values):
                setattr(node, side, None)
            pos += 1
    return root


def _convert(kind: Any, value: Any, ns: dict[str, Any]) -> Any:
    if kind == "list" and isinstance(value, list):
        return _build_linked(value, ns["ListNode"])
    if kind == "tree" and isinstance(value, list):
        return _build_tree(value, ns["TreeNode"])
    if isinstance(kind, tuple) and isinstance(value, list):
        return [_convert(kind[1], v, ns) for v in value]
    return value


def bind_arguments(fn: Callable[..., Any], positional: list[Any], named: dict[str, Any] | None,
                   ns: dict[str, Any]) -> tuple[list[Any], dict[str, Any]]:
    """Final ``(args, kwargs)`` for ``fn``: named values by name when the names match its parameters,
    else by position; a lone dict whose keys are exactly the parameters becomes keywords, a lone tuple
    (``[1, 2], 3`` on one line) is spread when the function needs more than one argument; node
    parameters converted from lists."""
    import inspect

    try:
        params = [p for p in inspect.signature(fn).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    except (TypeError, ValueError):
        params = []
    names = [p.name for p in params]
    if named is not None:
        if set(named) <= set(names):
            positional, kw = [], dict(named)
        else:
            positional, kw = list(named.values()), {}
    else:
        kw = {}
        required = sum(1 for p in params if p.default is inspect.Parameter.empty)
        if (len(positional) == 1 and isinstance(positional[0], dict) and len(names) > 1
                and set(positional[0]) == set(names)):
            positional, kw = [], dict(positional[0])
        elif len(positional) == 1 and isinstance(positional[0], tuple) and required > 1:
            positional = list(positional[0])  # "[1,2,4], 2" on one line: the arguments, comma separated
    by_name = {p.name: p.annotation for p in params if p.annotation is not inspect.Parameter.empty}
    args = [_convert(_node_kind(by_name.get(names[i]) if i < len(names) else None, ns), v, ns)
            for i, v in enumerate(positional)]
    kwargs = {k: _convert(_node_kind(by_name.get(k), ns), v, ns) for k, v in kw.items()}
    return args, kwargs


def returns_node(fn: Callable[..., Any], ns: dict[str, Any]) -> bool:
    """Whether ``fn`` is annotated to return a ListNode / TreeNode (then None means the empty list)."""
    import inspect

    try:
        annotation = inspect.signature(fn).return_annotation
    except (TypeError, ValueError):
        return False
    if annotation is inspect.Signature.empty:
        return False
    return _node_kind(annotation, ns) in ("list", "tree")


# --------------------------------------------------------------------------------- result transfer
def _is_list_node(value: Any) -> bool:
    return hasattr(value, "val") and hasattr(value, "next") and "ListNode" in type(value).__name__


def _is_tree_node(value: Any) -> bool:
    return (hasattr(value, "val") and hasattr(value, "left") and hasattr(value, "right")
            and "TreeNode" in type(value).__name__)


def linked_to_list(head: Any) -> list[Any]:
    """Values of a linked list in order; ValueError on a cycle or a runaway list."""
    out: list[Any] = []
    seen: set[int] = set()
    while head is not None:
        if id(head) in seen or len(out) >= MAX_NODES:
            raise ValueError("the returned linked list is cyclic")
        seen.add(id(head))
        out.append(head.val)
        head = head.next
    return out


def tree_to_list(root: Any) -> list[Any]:
    """LeetCode level order with None for missing children and trailing Nones removed."""
    out: list[Any] = []
    queue = [root]
    seen: set[int] = set()
    i = 0
    while i < len(queue):
        node = queue[i]
        i += 1
        if node is None:
            out.append(None)
            continue
        if id(node) in seen or len(seen) >= MAX_NODES:
            raise ValueError("the returned tree is not a tree (shared or cyclic nodes)")
        seen.add(id(node))
        out.append(node.val)
        queue.append(node.left)
        queue.append(node.right)
    while out and out[-1] is None:
        out.pop()
    return out


def _tag(value: Any) -> Any:
    if value is None or isinstance(value, (bool, str)):
        return str(value) if isinstance(value, str) and type(value) is not str else value
    if isinstance(value, int):
        # the judge keeps Python's int<->str digit limit (a DoS guard), so huge ints travel as text
        return int(value) if value.bit_length() < _BIG_BITS else {"$": "bigint", "v": str(value)}
    if isinstance(value, float):
        return float(value)
    if isinstance(value, list):
        return [_tag(v) for v in value]
    if isinstance(value, tuple):
        return {"$": "tuple", "v": [_tag(v) for v in value]}
    if isinstance(value, (set, frozenset)):
        return {"$": "set", "v": [_tag(v) for v in value]}
    if isinstance(value, dict):
        return {"$": "dict", "v": [[_tag(k), _tag(v)] for k, v in value.items()]}
    if _is_list_node(value):
        return [_tag(v) for v in linked_to_list(value)]
    if _is_tree_node(value):
        return [_tag(v) for v in tree_to_list(value)]
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        return float(value)
    tolist = getattr(value, "tolist", None)
    if callable(tolist) and type(value).__module__.startswith("numpy"):
        return _tag(tolist())
    if isinstance(value, (range, map, filter, zip)) or type(value).__name__ in ("dict_keys", "dict_values"):
        return {"$": "repr", "v": f"{type(value).__name__} object"}
    return {"$": "repr", "v": repr(value)[:1000]}


def encode_result(value: Any) -> bytes:
    """The returned value as tagged JSON bytes (runs in the sandbox). ValueError when it cannot be
    serialized (cyclic nodes)."""
    return json.dumps(_tag(value), separators=(",", ":")).encode()


class BigInt:
    """An integer too long for the judge's int<->str limit, kept as its decimal text."""

    def __init__(self, digits: str) -> None:
        self.digits = digits

    def __eq__(self, other: object) -> bool:
        return isinstance(other, BigInt) and other.digits == self.digits

    def __hash__(self) -> int:
        return hash(self.digits)

    def __str__(self) -> str:
        return self.digits

    __repr__ = __str__


class Opaque:
    """A value the sandbox could only describe by its repr; equal to nothing but itself."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text


def _untag(obj: dict[str, Any]) -> Any:
    kind = obj.get("$")
    items = obj.get("v")
    if kind == "tuple" and isinstance(items, list):
        return tuple(items)
    if kind == "set" and isinstance(items, list):
        try:
            return set(_hashable(v) for v in items)
        except TypeError:
            return Opaque("<unhashable set>")
    if kind == "dict" and isinstance(items, list):
        try:
            return {_hashable(k): v for k, v in items}
        except (TypeError, ValueError):
            return Opaque("<bad dict>")
    if kind == "bigint" and isinstance(items, str) and re.fullmatch(r"-?\d+", items):
        return BigInt(items)
    if kind == "repr":
        return Opaque(str(items))
    return Opaque("<bad value>")


def _hashable(value: Any) -> Any:
    if isinstance(value, list):
        return tuple(_hashable(v) for v in value)
    return value


def decode_result(data: bytes) -> Any:
    """Inverse of :func:`encode_result` (runs in the judge on untrusted bytes). ValueError on garbage."""
    try:
        return json.loads(data, object_hook=_untag)
    except RecursionError as exc:
        raise ValueError("result nested too deeply") from exc


def parse_expected(text: str) -> Any:
    """An expected call-mode output as a value: JSON, else a Python literal, else the raw string
    (LeetCodeDataset writes returned strings unquoted)."""
    try:
        return parse_literal(text)
    except ValueError:
        return text
