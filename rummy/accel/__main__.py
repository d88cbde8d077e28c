"""``python -m rummy.accel``: build the compiled modules, or say which are in use."""

import sys

from rummy.accel import main

sys.exit(main())
