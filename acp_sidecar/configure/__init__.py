"""``acp-sidecar configure``: choose an endpoint, check it, write the config file.

:mod:`~acp_sidecar.configure.presets` holds the providers it knows,
:mod:`~acp_sidecar.configure.answers` what it decides and the file changes that say it,
:mod:`~acp_sidecar.configure.flags` the script flags, :mod:`~acp_sidecar.configure.interactive`
the questions, :mod:`~acp_sidecar.configure.checking` the endpoint check as shown, and
:mod:`~acp_sidecar.configure.command` the command that ties them (and alone writes).

Nothing is imported here: the command line builds its parser from
:mod:`~acp_sidecar.configure.presets` on every start, and must not pay for the rest.
"""
