"""The ``acp-sidecar`` command line below :mod:`acp_sidecar.cli`: the parser and its option
groups, ``serve``'s wiring (:mod:`.serving`) and the commands that report (:mod:`.reports`).
"""
