"""``python -m ascsim run script.py -r Model -v Ascend910B1``."""

import sys

from ascsim.cli import main

sys.exit(main())
