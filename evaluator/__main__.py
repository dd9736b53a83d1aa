"""``python -m evaluator``: see :mod:`evaluator.cli`."""

import sys

from .cli import main

sys.exit(main())
