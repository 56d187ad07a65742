"""``python -m bytepair.gpt ...``: the same commands as ``bytepair gpt ...``."""

import sys

from bytepair.gpt.cli import main

sys.exit(main())
