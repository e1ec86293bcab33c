import sys

from checker.cli.commands import main

sys.exit(main())
