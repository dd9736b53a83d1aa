"""``python -m training.evaluate`` (see ``training.evaluate.cli``)."""

from training.evaluate.cli import main

raise SystemExit(main())
