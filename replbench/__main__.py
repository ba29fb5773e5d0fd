"""Entry point: python -m replbench (what ./run.sh execs)."""

import sys

from .cli.main import main

sys.exit(main())
