"""The ``acp-sidecar`` command line below :mod:`acp_sidecar.cli`: the parser and its option
groups (:mod:`.parser`, :mod:`.options`), ``serve``'s wiring (:mod:`.serving`) and the commands
that report (:mod:`.reports`). Importing :mod:`.parser` imports nothing heavy, not even argparse.
"""
