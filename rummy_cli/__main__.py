"""``python -m rummy_cli`` runs the command line."""

import sys

from rummy_cli.main import main

sys.exit(main())
