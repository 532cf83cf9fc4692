"""``acp-sidecar configure``: choose an endpoint, check it, write the config file.

Nothing is imported here: the parser reads :mod:`.presets` on every start and must not pay for
the rest. Only :mod:`.command` writes.
"""
