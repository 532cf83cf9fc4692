"""Render intents (card views) → ACP ``tool_call`` / ``tool_call_update``, live and on replay.

``cards`` maps views purely; ``translate`` is the one translator for live calls and replay;
``live`` streams a running call's progress; ``policy`` holds a session's call scope (the
tools' context, with its modes and permission dialog); ``runner`` opens, runs and closes one
call inside a session.
"""
