import sys

from neurocheckers.cli import main

sys.exit(main())
