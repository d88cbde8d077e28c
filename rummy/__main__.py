"""``python -m rummy`` runs the command line (the console layer, :mod:`rummy_cli`)."""

import sys

from rummy_cli.main import main

sys.exit(main())
