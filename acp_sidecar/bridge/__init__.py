"""Render intents (card views) → ACP ``tool_call`` / ``tool_call_update``, live and on replay.

``cards`` maps views purely; ``translate`` is the one translator for live calls and replay;
``live`` streams a running call's progress; ``policy`` applies modes and asks for
permission; ``runner`` runs one call inside a session and draws its card.
"""
