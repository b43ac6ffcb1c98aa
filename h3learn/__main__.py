"""``python -m h3learn``: the same as the ``h3learn`` command."""

import sys

from h3learn.cli import main

sys.exit(main())
