"""What the built-in tools know about files: the workspace boundary and text on disk and in the
editor. Nothing here imports a tool, :mod:`..search` or :mod:`..shell`.
"""
