"""``python -m lyra.sandbox FD``: the zygote that forks code workers (see lyra.sandbox.zygote)."""

import sys

from lyra.sandbox.zygote import main

main(int(sys.argv[1]))
