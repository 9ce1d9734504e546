"""``python -m rashomon``: the audit command line."""

from .audit.cli import main

raise SystemExit(main())
