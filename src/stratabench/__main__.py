"""``python -m stratabench``: the same command line as the ``stratabench`` script."""

from stratabench.cli.main import entry_point

entry_point()
