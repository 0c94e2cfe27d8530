"""`python -m adapters.cli`: the `paperclub` command without the installed script."""

from adapters.cli.main import run

run()
