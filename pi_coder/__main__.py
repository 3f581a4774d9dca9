import sys

from pi_coder.cli import main

sys.exit(main())
