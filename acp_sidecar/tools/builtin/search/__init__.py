"""What ``grep`` and ``glob`` search with: the walk, glob patterns, and the two grep engines.
Nothing here imports a tool; it builds on :mod:`..files` and :mod:`..errors` only.
"""
