"""Undo and rewind: the before-images a session keeps of the files its calls change, and the
``/undo``, ``/redo`` and ``/rewind`` commands that put them back."""
