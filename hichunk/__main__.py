import sys

from hichunk.cli import main

sys.exit(main())
