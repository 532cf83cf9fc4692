"""The ``acp-sidecar`` command line's parser (the commands themselves run from
:mod:`acp_sidecar.cli`).

- :mod:`.parser`: the program and its subcommands, each with the option groups that apply to it.
- :mod:`.options`: the option groups every command draws from; a new flag goes into its group.
- :mod:`.configure_options`: the flags of ``configure``.
- :mod:`.guidance`: the parser class: a subcommand's own usage on an error, "did you mean",
  and a key on the command line refused without being echoed.

Invariant: importing :mod:`.parser` imports nothing heavy (not even ``argparse``), so
``--version`` and ``--help`` answer at once; the rest is imported while the parser is built.
"""
