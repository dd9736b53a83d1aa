"""Programs and problem packages for the language, checker, interactive and package tests.

Every package is written by :func:`write_package` into a temporary folder, so each test sees the exact
layout it checks (symbolic links included).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

# ------------------------------------------------------------------------------------ solutions
C_SUM = '#include <stdio.h>\nint main(void){long long a,b;if(scanf("%lld %lld",&a,&b)!=2)return 1;' \
        'printf("%lld\\n",a+b);return 0;}\n'
C_SUM_WRONG = C_SUM.replace("a+b", "a+b+1")
C_LOOP = "int main(void){volatile unsigned long x=0;for(;;)x++;}\n"
C_CRASH = "#include <stdlib.h>\nint main(void){abort();}\n"
C_BROKEN = "int main(void){ return }\n"
CPP_SUM = '#include <cstdio>\nint main(){long long a,b;if(std::scanf("%lld %lld",&a,&b)!=2)return 1;' \
          'std::printf("%lld\\n",a+b);}\n'
CPP_SUM_WRONG = CPP_SUM.replace("a+b", "a-b")
CPP_BROKEN = "#include <cstdio>\nint main(){ undeclared_call(); }\n"
PY_SUM = "a, b = map(int, input().split())\nprint(a + b)\n"
PY_SUM_WRONG = "a, b = map(int, input().split())\nprint(a * b)\n"

SUM_TESTS = [{"input": "1 2\n", "output": "3\n"}, {"input": "40 2\n", "output": "42\n"}]

# ------------------------------------------------------------------------- a problem with many answers
# "print two non-negative integers whose sum is n": any valid pair is accepted.
VALIDATE_H = r'''
#include <stdio.h>
#include <stdlib.h>
static const char *feedback_dir;
static void verdict(int code, const char *msg) {
    char path[4096];
    snprintf(path, sizeof path, "%sjudgemessage.txt", feedback_dir);
    FILE *f = fopen(path, "w");
    if (f) { fputs(msg, f); fclose(f); }
    exit(code);
}
#define ACCEPT(msg) verdict(42, msg)
#define REJECT(msg) verdict(43, msg)
'''
PAIR_VALIDATOR_CPP = r'''
#include <cstdio>
#include "validate.h"
int main(int argc, char **argv) {
    if (argc < 4) return 1;
    feedback_dir = argv[3];
    FILE *in = std::fopen(argv[1], "r");
    long long n, a, b;
    if (!in || std::fscanf(in, "%lld", &n) != 1) return 1;
    if (std::scanf("%lld %lld", &a, &b) != 2) REJECT("expected two integers");
    char extra;
    if (std::scanf(" %c", &extra) == 1) REJECT("trailing output");
    if (a < 0 || b < 0) REJECT("negative number");
    if (a + b != n) REJECT("the sum is wrong");
    ACCEPT("a valid pair");
}
'''
PAIR_ANY = "n = int(input())\nprint(n, 0)\n"
PAIR_OTHER = "n = int(input())\nprint(1, n - 1)\n"
PAIR_WRONG = "n = int(input())\nprint(n, 1)\n"
PAIR_TESTS = [{"input": "5\n", "output": "2 3\n"}, {"input": "10\n", "output": "5 5\n"}]

# testlib-style: checker INPUT OUTPUT ANSWER; exit 0 ok, 1 wrong answer; message on stderr
TESTLIB_CHECKER_C = r'''
#include <stdio.h>
int main(int argc, char **argv) {
    if (argc < 4) return 3;
    FILE *out = fopen(argv[2], "r"), *ans = fopen(argv[3], "r");
    long long x, y;
    if (!out || !ans || fscanf(ans, "%lld", &y) != 1) { fprintf(stderr, "bad files"); return 3; }
    if (fscanf(out, "%lld", &x) != 1) { fprintf(stderr, "wrong answer: no number"); return 1; }
    if (x != y) { fprintf(stderr, "wrong answer: expected %lld, found %lld", y, x); return 1; }
    fprintf(stderr, "ok %lld", x);
    return 0;
}
'''

# ------------------------------------------------------------------------------ interactive game
GUESS_INTERACTOR_PY = r'''
import sys
secret = int(open(sys.argv[1]).read())
feedback = sys.argv[3]
def finish(code, message):
    open(feedback + "judgemessage.txt", "w").write(message)
    sys.exit(code)
for _ in range(12):
    line = sys.stdin.readline()
    if not line:
        finish(43, "the solution stopped before guessing")
    try:
        guess = int(line)
    except ValueError:
        finish(43, "not a number: " + line.strip()[:40])
    if guess == secret:
        print("correct", flush=True)
        finish(42, "guessed")
    print("higher" if guess < secret else "lower", flush=True)
finish(43, "too many guesses")
'''
GUESS_OK = '''lo, hi = 1, 1000
while True:
    mid = (lo + hi) // 2
    print(mid, flush=True)
    answer = input()
    if answer == "correct":
        break
    if answer == "higher":
        lo = mid + 1
    else:
        hi = mid - 1
'''
GUESS_WRONG = '''for guess in range(1, 1001):
    print(guess, flush=True)
    if input() == "correct":
        break
'''
# writes its guess without flushing, then blocks reading the reply: the interaction never progresses
GUESS_NO_FLUSH = '''import sys
sys.stdout.write("500\\n")
print(sys.stdin.readline())
'''
GUESS_SILENT = "pass\n"
GUESS_TESTS = [{"input": "37\n", "output": ""}, {"input": "1000\n", "output": ""}]

# --------------------------------------------------------------------------------- multi-pass
# input "k x": print x + 1; the validator checks it and asks for another pass with "k+1 x+1"
MULTIPASS_VALIDATOR_PY = r'''
import sys
k, x = map(int, open(sys.argv[1]).read().split())
feedback = sys.argv[3]
out = sys.stdin.read().split()
if out != [str(x + 1)]:
    open(feedback + "judgemessage.txt", "w").write("pass %d: expected %d" % (k, x + 1))
    sys.exit(43)
if k < 2:
    open(feedback + "nextpass.in", "w").write("%d %d\n" % (k + 1, x + 1))
sys.exit(42)
'''
MULTIPASS_OK = "k, x = map(int, input().split())\nprint(x + 1)\n"
MULTIPASS_FIRST_ONLY = "k, x = map(int, input().split())\nprint(x + 1 if k == 1 else x)\n"


def checker_spec(source: str, language: str, **extra: Any) -> dict[str, Any]:
    return {"kind": "program", "language": language, "source": source, **extra}


def write_package(root: Path, name: str, *, meta: dict[str, Any] | None = None,
                  samples: list[tuple[str, str | None]] = (),  # type: ignore[assignment]
                  secret: dict[str, list[tuple[str, str | None]]] | None = None,
                  validator: dict[str, str] | None = None, validator_dir: str = "output_validators/v",
                  testdata: dict[str, Any] | None = None) -> Path:
    """A package folder: ``secret`` maps a sub-group ("" for data/secret itself) to (input, answer)
    pairs; an answer of None writes no .ans."""
    package = root / name
    (package / "data" / "sample").mkdir(parents=True)
    (package / "problem.yaml").write_text(yaml.safe_dump(meta or {"name": name}))
    for i, (inp, ans) in enumerate(samples, start=1):
        _pair(package / "data" / "sample", f"{i:02d}", inp, ans)
    for group, pairs in (secret or {}).items():
        folder = package / "data" / "secret" / group if group else package / "data" / "secret"
        folder.mkdir(parents=True, exist_ok=True)
        for i, (inp, ans) in enumerate(pairs, start=1):
            _pair(folder, f"{i:02d}", inp, ans)
    if validator:
        folder = package / validator_dir
        folder.mkdir(parents=True)
        for file_name, text in validator.items():
            (folder / file_name).write_text(text)
    if testdata is not None:
        (package / "data" / "testdata.yaml").write_text(yaml.safe_dump(testdata))
    return package


def _pair(folder: Path, stem: str, inp: str, ans: str | None) -> None:
    (folder / f"{stem}.in").write_text(inp)
    if ans is not None:
        (folder / f"{stem}.ans").write_text(ans)
