"""What ``grep`` and ``glob`` search with.

- :mod:`.walk`: the files of a workspace tree as both tools see them (.gitignore applied).
- :mod:`.glob_patterns`: the glob syntax both tools read (``*``, ``?``, ``[…]``, ``**``,
  ``{a,b}``), compiled to a matcher.
- :mod:`.grep_engine`: what ``grep`` finds, and its pure-Python engine.
- :mod:`.ripgrep`: ``grep``'s ripgrep engine, giving the same results faster.

Invariant: nothing here imports a tool; this package builds on
:mod:`acp_sidecar.tools.builtin.files` and :mod:`acp_sidecar.tools.builtin.errors`.
"""
