"""`python -m agentica_cli`: the `agentica` command."""

import sys

from agentica_cli.cli.app import main

sys.exit(main())
