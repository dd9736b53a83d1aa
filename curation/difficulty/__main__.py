"""``python -m curation.difficulty``: see :mod:`curation.difficulty.cli`."""

import sys

from .cli import main

sys.exit(main())
