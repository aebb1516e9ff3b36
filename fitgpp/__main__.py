import sys

from fitgpp.cli import main

sys.exit(main())
