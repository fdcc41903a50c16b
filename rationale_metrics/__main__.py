import sys

from rationale_metrics.cli import main

sys.exit(main())
