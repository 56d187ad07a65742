"""The ``bytepair`` command's entry point (``[project.scripts]``), a module outside the package.

Importing the package (numpy, the compiled engine) and building the parser take a noticeable
moment after the command starts; Ctrl-C then ends the command as it does at any later moment
(``bytepair.cli.main``: one line, status 130), not with a traceback from the middle of an
import. It has to live outside ``bytepair``: a module inside runs only after the package's
``__init__`` has imported all that.
"""

import sys


def main():
    try:
        from bytepair.cli import main as run

        return run()
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 128 + 2
