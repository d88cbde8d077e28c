"""``python -m rummy`` runs the command line."""

import sys

from rummy.cli import main

sys.exit(main())
