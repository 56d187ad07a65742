"""``python -m bytepair`` is the ``bytepair`` command."""

from .cli import main

raise SystemExit(main())
