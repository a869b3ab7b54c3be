import sys

from ctxmodes.cli import main

sys.exit(main())
