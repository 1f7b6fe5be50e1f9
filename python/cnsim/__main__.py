"""``python -m cnsim``: the ``cnsim`` command line, for an environment whose scripts folder is not
on the PATH (the console script and this run the same entry point, :func:`cnsim._entry.main`)."""

from ._entry import main

main()
