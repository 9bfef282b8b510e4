"""`python -m gmprof ...`: the same command line as `gmprof ...`."""
import sys

from gmprof.cli import main

sys.exit(main())
