"""Render intents (card views) → ACP ``tool_call`` / ``tool_call_update``, live and on replay:
``cards`` maps, ``translate`` is the one translator, ``live`` streams progress, ``runner``
runs one call, ``policy`` and ``modes`` hold a session's permissions.
"""
