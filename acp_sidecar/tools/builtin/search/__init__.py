"""What ``grep`` and ``glob`` search with.

- :mod:`.walk`: the files of a workspace tree as both tools see them (.gitignore applied),
  and :class:`~.walk.ThreadCancel`, the flag that stops a walk or a search in its thread.
- :mod:`.glob_patterns`: the glob syntax both tools read (``*``, ``?``, ``[…]``, ``**``,
  ``{a,b}``), compiled to a matcher.
- :mod:`.grep_match`: what ``grep`` finds, whichever engine finds it: the pattern, the results.
- :mod:`.grep_engine`: ``grep``'s pure-Python engine.
- :mod:`.ripgrep`: ``grep``'s ripgrep engine, giving the same results faster.

Invariant: nothing here imports a tool; of the built-ins this package builds on
:mod:`acp_sidecar.tools.builtin.files` and :mod:`acp_sidecar.tools.builtin.errors` only.
"""
