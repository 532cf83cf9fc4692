"""What the built-in tools know about files: the workspace boundary and text on disk.

- :mod:`.paths`: every path a tool touches is resolved and checked against the workspace here.
- :mod:`.confined`: reaching a directory along a resolved path without following a symlink.
- :mod:`.encoding`: the binary sniff, a file's encoding, and decoding that round-trips.
- :mod:`.textfile`: finding, opening and loading text files, on disk or via the editor.
- :mod:`.atomic`: replacing a file on disk atomically.
- :mod:`.line_window`: ``read``'s window of numbered lines, from a text or streamed from disk.
- :mod:`.leftovers`: the temporaries of atomic writes and cleaning up stale ones.
- :mod:`.diffs`: the diff hunks that ``edit`` and ``write`` show on their cards.

Invariant: nothing here imports a tool or :mod:`acp_sidecar.tools.builtin.search` /
:mod:`~acp_sidecar.tools.builtin.shell`; they build on this package, not the other way.
"""
